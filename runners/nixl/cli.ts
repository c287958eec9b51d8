// `disagg-bench nixl-tool <step>`: the steps of a job that runs a real NIXL tool (STEP_USAGE);
// `nixl-tool <step> --help` shows the step's own usage (stepUsage).
import os from 'node:os';
import path from 'node:path';
import { reachableHost, startEtcd, stopEtcd, wipePrefix } from './etcd.ts';
import { collectNodeArtefacts } from './node-artefacts.ts';
import { writeToolReport } from './tool-report.ts';
import { readToolSpec } from './tool-spec.ts';
import { runToolTask } from './tool-task.ts';
import { readArgs } from '../common/args/read-args.ts';
import { UsageError } from '../common/errors.ts';

const STEP_USAGE: Record<string, string> = {
  'etcd-start': 'etcd-start --dir D --prefix P [--host 127.0.0.1|auto]   start the job\'s etcd in D, wipe namespace P',
  'etcd-wipe': 'etcd-wipe --endpoints URL --prefix P                     wipe namespace P in an etcd already up',
  'etcd-stop': 'etcd-stop --dir D                                        stop the etcd of D, remove its data',
  run: 'run SPEC                                                 one task of the tool (under srun)',
  report: 'report SPEC                                              write the job\'s test-report.txt',
  'node-artefacts': 'node-artefacts --dir D                                   fi_info & co. of this node into D',
};

export const usage = `usage: ${Object.values(STEP_USAGE).map((u) => `disagg-bench nixl-tool ${u}`).join('\n       ')}`;

/** `nixl-tool <step> ... --help`: that step's usage (framework/cli.ts asks); undefined for no known step. */
export function subcommandUsage(argv: readonly string[]): string | undefined {
  const step = STEP_USAGE[argv[0]];
  return step === undefined ? undefined : `usage: disagg-bench nixl-tool ${step}`;
}

/** The options each step reads; another step's option is refused, not ignored. */
const STEP_OPTIONS: Record<string, string[]> = {
  'etcd-start': ['dir', 'prefix', 'host'],
  'etcd-wipe': ['endpoints', 'prefix'],
  'etcd-stop': ['dir'],
  run: [],
  report: [],
  'node-artefacts': ['dir'],
};

export async function run(argv: string[]): Promise<number> {
  const [step, ...rest] = argv;
  const { values, positionals } = readArgs(rest, {
    positionals: true,
    options: { dir: { type: 'string' }, prefix: { type: 'string' }, host: { type: 'string' }, endpoints: { type: 'string' } },
  });
  const unused = Object.keys(values).filter((name) => STEP_OPTIONS[step] && !STEP_OPTIONS[step].includes(name));
  if (unused.length > 0) {
    const takes = STEP_OPTIONS[step].length ? `takes ${STEP_OPTIONS[step].map((o) => `--${o}`).join(', ')}` : 'takes no option';
    throw new UsageError(`nixl-tool ${step} ${takes}; --${unused[0]} is not used there\n${usage}`);
  }
  if (STEP_OPTIONS[step] && !['run', 'report'].includes(step) && positionals.length > 0) {
    throw new UsageError(`nixl-tool ${step} takes options only; '${positionals[0]}' is not used there\n${usage}`);
  }
  const need = (name: 'dir' | 'prefix' | 'endpoints') => {
    const value = values[name];
    if (!value) throw new UsageError(`nixl-tool ${step} needs --${name}\n${usage}`);
    return value;
  };
  switch (step) {
    case 'etcd-start': {
      const host = values.host === 'auto' ? reachableHost() : values.host;
      const etcd = await startEtcd({ dir: need('dir'), host });
      const wiped = await wipePrefix(etcd.endpoint, need('prefix'));
      console.log(`nixl-tool: etcd ${etcd.endpoint} (pid ${etcd.pid}, folder ${etcd.dir}); namespace ${values.prefix} wiped (${wiped} key(s))`);
      return 0;
    }
    case 'etcd-wipe': {
      const wiped = await wipePrefix(need('endpoints'), need('prefix'));
      console.log(`nixl-tool: namespace ${values.prefix} of ${values.endpoints} wiped (${wiped} key(s))`);
      return 0;
    }
    case 'etcd-stop': {
      const stopped = await stopEtcd(need('dir'));
      console.log(stopped ? `nixl-tool: etcd of ${values.dir} stopped, its data removed` : `nixl-tool: no etcd running in ${values.dir}`);
      return 0;
    }
    case 'node-artefacts': {
      const node = process.env.SLURMD_NODENAME ?? os.hostname();
      const files = await collectNodeArtefacts(need('dir'), node);
      console.log(`nixl-tool: ${node}: ${files.map((f) => path.basename(f)).join(', ')}`);
      return 0;
    }
    case 'run':
      return runToolTask(spec(positionals));
    case 'report':
      console.log(`nixl-tool: ${writeToolReport(readToolSpec(spec(positionals)))}`);
      return 0;
    default:
      console.error(`disagg-bench nixl-tool: ${step === undefined ? 'which step?' : `unknown step ${JSON.stringify(step)}`}\n${usage}`);
      return 2;
  }
}

function spec(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError(`give one spec file\n${usage}`);
  return positionals[0];
}
