// `disagg-bench history <command>`: the performance history (framework/history/): import results,
// check a run for regressions, show a series, compare runs and backends, export for OpenSearch,
// bisect a regression to the commit that caused it.
// Every command reads DISAGG_HISTORY (default OUTPUT_PATH/history.duckdb) and has --help.

import * as importCommand from './history/import.ts';
import * as regressions from './history/regressions.ts';
import * as show from './history/show.ts';
import * as runs from './history/runs.ts';
import * as compare from './history/compare.ts';
import * as compareBackends from './history/compare-backends.ts';
import * as exportCommand from './history/export.ts';
import * as bisect from './history/bisect.ts';
import * as alerts from './history/alerts.ts';
import * as ack from './history/ack.ts';
import { DisaggBenchError, UsageError } from '../../runners/common/errors.ts';
import { SettingsError } from '../settings.ts';
import { EXIT_INCONCLUSIVE, EXIT_USAGE } from './support/exit-code.ts';

/**
 * What a `history` command exits with when it could not do its work (an unreadable file or store,
 * a store held by another process, a record it cannot judge): not 1, which says "a regression" (or
 * "slower", compare-backends) to the CI job that reads it.
 */
export const EXIT_HISTORY_FAILED = 3;

interface Subcommand {
  summary: string;
  /** Its module: `usage` (what `history <name> --help` prints) and `run`. */
  module: { usage: string; run: (argv: string[]) => Promise<number> };
}

export const subcommands: Record<string, Subcommand> = {
  import: { summary: 'append results.json or perf_script_test_results.csv files (their own dates)', module: importCommand },
  regressions: { summary: 'check a run (default: the latest) against baselines from the history before it; exit 1 on any', module: regressions },
  alerts: { summary: 'the open alerts: changes the gate found, shown until their series comes back or someone acknowledges them', module: alerts },
  ack: { summary: "accept an alert's new level (ID --reason TEXT): it becomes the series' baseline", module: ack },
  show: { summary: "print a test's series over time", module: show },
  runs: { summary: 'list the runs the history holds', module: runs },
  compare: { summary: 'two runs side by side as compare_kv_perf_runs.py writes them (CSV, to standard output or -o)', module: compare },
  'compare-backends': { summary: 'the default KV transfer backend vs UCX as compare_backends.py; exit 1 when the default is slower', module: compareBackends },
  export: { summary: "every record, for `history import` into either store, or NDJSON in upstream's OpenSearch field naming", module: exportCommand },
  bisect: { summary: 'the first commit (or ref, or image) at which a test\'s metric went bad: reruns the test between a good and a bad state', module: bisect },
};

const width = Object.keys(subcommands).reduce((w, c) => Math.max(w, c.length), 0);

/** What `disagg-bench history --help` prints. */
export const usage = [
  'usage: disagg-bench history <command> [options]   (each command: --help)',
  '',
  ...Object.entries(subcommands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
  '',
  `Exit codes: 0 done; 1 a regression listed (regressions) or the default backend slower (compare-backends); ${EXIT_USAGE} a usage error; ${EXIT_HISTORY_FAILED} the command could not do its work (one line says why); ${EXIT_INCONCLUSIVE} bisect inconclusive (it says what would decide it).`,
  'The store: DISAGG_HISTORY unset = OUTPUT_PATH/history.duckdb; a file = DuckDB; postgres://user@host:port/db = PostgreSQL.',
].join('\n');

/** `history <name> ... --help`: that command's usage (framework/cli.ts prints it). */
export function subcommandUsage(argv: readonly string[]): string | undefined {
  return Object.hasOwn(subcommands, argv[0] ?? '') ? subcommands[argv[0]].module.usage : undefined;
}

/** `history export | head`: the reader leaving is the end of the output, not an error. */
function endQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(0);
      throw error;
    });
  }
}

export async function run(argv: string[]): Promise<number> {
  endQuietlyOnClosedPipe();
  const [name, ...rest] = argv;
  if (!name || name === '-h' || name === '--help' || name === 'help') {
    console.log(usage);
    return name ? 0 : EXIT_USAGE;
  }
  const command = Object.hasOwn(subcommands, name) ? subcommands[name] : undefined;
  if (!command) {
    console.error(`disagg-bench history: unknown command '${name}'\n\n${usage}`);
    return EXIT_USAGE;
  }
  try {
    return await command.module.run(rest);
  } catch (error) {
    // Exit 1 means "regressed" (or "slower") to a CI job: a command that could not do its work
    // never says it. A wrong option or argument or setting: its line (and the usage), exit 2 as
    // for an unknown command; anything else: one line, exit 3.
    const usage = error instanceof UsageError || error instanceof SettingsError;
    const expected = usage || error instanceof DisaggBenchError;
    const message = error instanceof Error ? error.message : String(error);
    console.error(`disagg-bench history ${name}: ${expected ? message : `internal error: ${message} (DISAGG_DEBUG=1 shows where)`}`);
    if (process.env.DISAGG_DEBUG && error instanceof Error) console.error(error.stack);
    return usage ? EXIT_USAGE : EXIT_HISTORY_FAILED;
  }
}
