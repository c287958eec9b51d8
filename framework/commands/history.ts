// `disagg-bench history <command>`: the performance history (framework/history/): import results,
// check a run for regressions, show a series, compare runs and backends, export for OpenSearch.
// Every command reads DISAGG_HISTORY (default OUTPUT_PATH/history.duckdb) and has --help.

interface Subcommand {
  summary: string;
  load: () => Promise<{ run: (argv: string[]) => Promise<number> }>;
}

export const subcommands: Record<string, Subcommand> = {
  import: { summary: 'append results.json or perf_script_test_results.csv files (their own dates)', load: () => import('./history/import.ts') },
  regressions: { summary: 'check a run (default: the latest) against baselines from the history before it; exit 1 on any', load: () => import('./history/regressions.ts') },
  show: { summary: "print a test's series over time", load: () => import('./history/show.ts') },
  runs: { summary: 'list the runs the history holds', load: () => import('./history/runs.ts') },
  compare: { summary: 'two runs side by side as compare_kv_perf_runs.py writes them (CSV)', load: () => import('./history/compare.ts') },
  'compare-backends': { summary: 'the default KV transfer backend vs UCX as compare_backends.py; exit 1 when the default is slower', load: () => import('./history/compare-backends.ts') },
  export: { summary: "NDJSON in upstream's OpenSearch field naming", load: () => import('./history/export.ts') },
};

export function usage(): string {
  const width = Object.keys(subcommands).reduce((w, c) => Math.max(w, c.length), 0);
  return [
    'usage: disagg-bench history <command> [options]   (each command: --help)',
    '',
    ...Object.entries(subcommands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'The store: DISAGG_HISTORY unset = OUTPUT_PATH/history.duckdb; a file = DuckDB; postgres://user@host:port/db = PostgreSQL.',
  ].join('\n');
}

export async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '-h' || name === '--help' || name === 'help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const command = subcommands[name];
  if (!command) {
    console.error(`disagg-bench history: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  try {
    return await (await command.load()).run(rest);
  } catch (error) {
    // A wrong option or argument: its line (and the usage), exit 2 as for an unknown command.
    if ((error as Error).name !== 'UsageError') throw error;
    console.error(`disagg-bench history ${name}: ${(error as Error).message}`);
    return 2;
  }
}
