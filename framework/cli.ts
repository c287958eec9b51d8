// `disagg-bench <command> [options]`: one table of commands, each in its own module, loaded only
// when asked for (so `serve-bench` does not pay for the framework, nor a rank for the CLI).
// Every command reads its words through the one argument layer (runners/common/args/read-args.ts)
// and answers --help and -h here, before it runs, with its `usage` (exit 0), and --version / -V.
// The conventions every command keeps live here and in commands/support/: the exit code of each
// outcome (exit-code.ts: 2 for a usage error), quiet output into a closed pipe (closed-pipe.ts),
// and one line for an expected failure (its message; the stack only with DISAGG_DEBUG=1).
//
// Adding a command: a module that exports `usage` ('usage: disagg-bench <name> ...', what --help
// prints) and `run(argv)` (reading argv with readArgs; `args` too where a value may look like an
// option: gflags, click, argparse styles; `subcommandUsage` for a command of subcommands, as
// nixl-tool), and one line in the table below. tests/cli/help.test.ts and conventions.test.ts walk
// every command of the table (--help, -h, --version, an unknown option), so a new one is checked as
// it lands.
import { asksFor, asksForHelp, type HelpSpec } from '../runners/common/args/read-args.ts';
import { UsageError } from '../runners/common/errors.ts';
import { EXIT_USAGE, exitCodeFor } from './commands/support/exit-code.ts';
import { endQuietlyOnClosedPipe } from './commands/support/closed-pipe.ts';
import { VERSION_WORDS, versionLine } from './commands/support/version.ts';

/** What a command's module exports. */
export interface CommandModule {
  /** What --help and -h print: starts with `usage: disagg-bench <name>`. */
  usage: string;
  /** How the command reads its words, for --help: needed where a value may look like an option. */
  args?: HelpSpec;
  /** A command of subcommands: the usage of the one `argv` names (`<name> <sub> --help`), else undefined. */
  subcommandUsage?: (argv: readonly string[]) => string | undefined;
  run: (argv: string[]) => Promise<number>;
}

export interface Command {
  summary: string;
  load: () => Promise<CommandModule>;
}

export const commands: Record<string, Command> = {
  run: { summary: 'run the tests: configs become jobs (Vitest underneath); options, profiles, signals handled', load: () => import('./run/command.ts') },
  list: { summary: 'list test ids with their state (runs, skipped and why, invalid)', load: () => import('./commands/list.ts') },
  validate: { summary: 'validate every config (or the files given) and print all errors', load: () => import('./commands/validate.ts') },
  report: { summary: 'rebuild report.html (tests, plots, baseline comparison) from results.json files', load: () => import('./commands/report.ts') },
  history: { summary: 'the performance history: import, regressions, show, runs, compare, compare-backends, export, bisect', load: () => import('./commands/history.ts') },
  cleanup: { summary: 'cancel jobs that an interrupted run left in flight (from the ledger)', load: () => import('./commands/cleanup.ts') },
  'serve-bench': { summary: 'serving benchmark client for an OpenAI-compatible endpoint', load: () => import('./commands/serve-bench.ts') },
  'llama-server': { summary: 'an OpenAI-compatible server on llama.cpp: aggregated, context (prefill) or generation (decode)', load: () => import('../runners/llamacpp/server.ts') },
  'llama-router': { summary: 'the disaggregated router in front of llama-server context and generation servers', load: () => import('../runners/llamacpp/router.ts') },
  sweep: { summary: "nixlbench's block-size sweep on the transfer engine, nixlbench's flags and table", load: () => import('../runners/xfer/benches/sweep/sweep.ts') },
  ep: { summary: 'MoE dispatch/combine data plane and EP control plane on the transfer engine', load: () => import('../runners/xfer/benches/ep/ep.ts') },
  kvpipe: { summary: 'KV pipe: sender and receiver through a bounded buffer with credits, verified', load: () => import('../runners/xfer/benches/kvpipe/kvpipe.ts') },
  'gpu-check': { summary: "a nixl job's check before its ranks start: the GPUs the config asks for are on this node", load: () => import('../runners/xfer/gpu-check.ts') },
  'cache-engine': { summary: "LMCache's CacheEngine test: paged KV cache, slot_mapping, 256-token chunks stored and retrieved, verified", load: () => import('../runners/xfer/benches/cache-engine/cache-engine.ts') },
  'nixl-tool': { summary: "steps of a real NIXL tool's job: private etcd start/wipe/stop, one task, the test report", load: () => import('../runners/nixl/cli.ts') },
  'ct-perftest': { summary: 'CT perftest: one traffic matrix between ranks, timed and optionally verified', load: () => import('./commands/ct-perftest.ts') },
  'sequential-ct-perftest': { summary: 'a sequence of traffic matrices with compute sleeps, isolated vs congested latency', load: () => import('./commands/sequential-ct-perftest.ts') },
  matgen: { summary: 'generate KV-cache transfer matrices and metadata.yaml for sequential-ct-perftest', load: () => import('./commands/matgen.ts') },
};

function usage(): string {
  const width = Object.keys(commands).reduce((w, c) => Math.max(w, c.length), 0);
  return [
    'usage: disagg-bench <command> [options]',
    '',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    '  --version, -V  the version of disagg-bench and of Node.js',
    '',
    'Exit codes: 0 done, 1 failed, 2 a usage error (sweep: 1, as nixlbench). See docs/cli.md.',
    'Tests run through Vitest: npx vitest run --project <test type>. See README.md.',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  endQuietlyOnClosedPipe(process.stdout);
  endQuietlyOnClosedPipe(process.stderr);
  const [name, ...rest] = argv;
  if (!name || name === '-h' || name === '--help' || name === 'help') {
    console.log(usage());
    return name ? 0 : EXIT_USAGE;
  }
  if ((VERSION_WORDS as readonly string[]).includes(name)) {
    console.log(versionLine());
    return 0;
  }
  const command = commands[name];
  if (!command) {
    console.error(`disagg-bench: unknown command '${name}'\n\n${usage()}`);
    return EXIT_USAGE;
  }
  try {
    const module = await command.load();
    if (asksForHelp(rest, module.args)) {
      console.log(module.subcommandUsage?.(rest) ?? module.usage);
      return 0;
    }
    if (asksFor(rest, module.args ?? {}, VERSION_WORDS)) {
      console.log(versionLine());
      return 0;
    }
    return await module.run(rest);
  } catch (err) {
    // Expected failures (bad input, unavailable backends) carry their own message; print it alone.
    const hint = err instanceof UsageError && !/\nusage: /.test((err as Error).message) ? ` (disagg-bench ${name} --help shows its usage)` : '';
    console.error(`disagg-bench ${name}: ${(err as Error).message}${hint}`);
    if (process.env.DISAGG_DEBUG) console.error((err as Error).stack);
    return exitCodeFor(name, err);
  }
}
