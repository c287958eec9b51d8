// The kvbench adapter builds command lines kvbench's own CLI takes: each one is parsed here the way
// click parses it, against kvbench's option lists (tests/fixtures/kvbench/kvbench-click.ts, facts
// read from kvbench's source), so an option a command does not have (ct-perftest has no
// --json-output-path) fails the test as it would fail the run.
import { describe, expect, it } from 'vitest';
import { checkKvbenchExtraArgs, kvbenchSpec, type KvbenchSection } from '../../runners/nixl/tools/kvbench.ts';
import { KVBENCH_CLICK } from '../fixtures/kvbench/kvbench-click.ts';

const job = { logDir: '/logs/t1', configDir: '/cfg', ranks: 2, nodes: 1, tag: 'nixl_perf_t1' };

/** click's parse of `script [group options] COMMAND [args and options]`: the command, its arguments and options, or the error click would give. */
function clickParse(argv: string[]): { command: string; args: string[]; options: Record<string, string | true> } {
  let i = 0;
  const take = (spec: { flags: string[]; valued: string[] }, options: Record<string, string | true>, word: string) => {
    const [name, inline] = word.includes('=') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined];
    if (spec.flags.includes(name) && inline === undefined) options[name] = true;
    else if (spec.valued.includes(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new Error(`Option '${name}' requires an argument.`);
      options[name] = value;
    } else throw new Error(`No such option: ${name}`);
  };
  const groupOptions: Record<string, string | true> = {};
  for (; i < argv.length && argv[i].startsWith('-'); i++) take(KVBENCH_CLICK.group, groupOptions, argv[i]);
  const command = argv[i++];
  const spec = KVBENCH_CLICK.commands[command];
  if (!spec) throw new Error(`No such command '${command}'.`);
  const args: string[] = [];
  const options: Record<string, string | true> = { ...groupOptions };
  for (; i < argv.length; i++) {
    if (argv[i].startsWith('-')) take(spec, options, argv[i]);
    else args.push(argv[i]);
  }
  if (args.length !== spec.arguments.length) throw new Error(`${command} takes ${spec.arguments.join(' ')}, got ${JSON.stringify(args)}`);
  return { command, args, options };
}

const sections: KvbenchSection[] = [
  { script: 'nixl/benchmark/kvbench/main.py', command: 'ct-perftest', config_file: 'ct.yaml' },
  { script: 'nixl/benchmark/kvbench/main.py', command: 'ct-perftest', config_file: 'ct.yaml', verify_buffers: true, print_recv_buffers: true, debug: true },
  { script: 'nixl/tools/perf/cli.py', command: 'sequential-ct-perftest', config_file: 'matrices/metadata.yaml', verify_buffers: true },
  { script: 'kvbench/main.py', command: 'sequential-ct-perftest', config_file: 'm.yaml', print_recv_buffers: true, extra_args: ['--no-verify-buffers'] },
];

describe('kvbench adapter command lines', () => {
  for (const section of sections) {
    it(`${section.command} ${JSON.stringify({ ...section, script: undefined, command: undefined })}: click takes it`, () => {
      const spec = kvbenchSpec(section, job);
      expect(spec.commands).toHaveLength(2);
      const [python, script, ...argv] = spec.commands[0];
      expect([python, script]).toEqual(['python3', `/cfg/${section.script}`]);
      const parsed = clickParse(argv);
      expect(parsed.command).toBe(section.command);
      expect(parsed.args).toEqual([`/cfg/${section.config_file}`]);
      expect(parsed.options['--verify-buffers'] === true).toBe(section.verify_buffers === true);
      expect(parsed.options['--print-recv-buffers'] === true).toBe(section.print_recv_buffers === true);
      expect(parsed.options['--debug'] === true).toBe(section.debug === true);
      // Only the sequential command writes JSON; ct-perftest's results are its logged table.
      expect(parsed.options['--json-output-path']).toBe(section.command === 'sequential-ct-perftest' ? '/logs/t1/kvbench.json' : undefined);
    });
  }

  it('the fixture parser refuses what click refuses (so the checks above can fail)', () => {
    expect(() => clickParse(['ct-perftest', 'c.yaml', '--json-output-path', 'x.json'])).toThrow('No such option: --json-output-path');
    expect(() => clickParse(['ct-perftest', '--debug', 'c.yaml'])).toThrow('No such option: --debug');
    expect(() => clickParse(['multi-ct-perftest', 'c.yaml'])).toThrow("No such command 'multi-ct-perftest'.");
  });

  it('extra_args: only options the command takes, and not the one the adapter sets', () => {
    expect(checkKvbenchExtraArgs('sequential-ct-perftest', ['--no-print-recv-buffers'])).toBeUndefined();
    expect(checkKvbenchExtraArgs('ct-perftest', ['--iters', '5'])).toBe(
      'kvbench\'s ct-perftest takes no option "--iters" (it takes --verify-buffers, --no-verify-buffers, --print-recv-buffers, --no-print-recv-buffers)',
    );
    expect(checkKvbenchExtraArgs('sequential-ct-perftest', ['--json-output-path=/x.json'])).toBe("--json-output-path is set by the adapter (the job's kvbench.json)");
    for (const command of Object.keys(KVBENCH_CLICK.commands) as KvbenchSection['command'][]) {
      for (const flag of KVBENCH_CLICK.commands[command].flags) expect(checkKvbenchExtraArgs(command, [flag]), `${command} ${flag}`).toBeUndefined();
    }
  });
});
