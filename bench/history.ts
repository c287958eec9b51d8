// The performance history's speed: on DuckDB (the default store) and a throw-away
// PostgreSQL 15 (scripts/postgres-local.ts, fsync on):
// - appending one run's records, 1,000 values (20 tests x 50 metrics), to a store that already
//   holds the 1,000,000-record history below: median of --runs appends, each its own run; goal 0.5 s;
// - `history regressions` of the latest run (1,000 tests x 50 metrics) over 1,000,000 stored
//   records (1,000 test cases x 50 metrics x 20 days): the command as a user runs it (node, the
//   bundled CLI, the store) and the check alone in this process; goal < 3 s on DuckDB; against the
//   same check done by loading the 20 days as results.json files (the same baseline code,
//   baseline.ts / regression.ts, fed from JSON instead of the store);
// - `history import` of a results.json of 100,000 metric values (2,000 records x 50 metrics) into
//   that store, as a user runs it: median of up to 3 imports, each a file of its own; goal 10 s;
// - the store's size for those 1,000,000 records.
// Command line: USAGE below (--help prints it).
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { HistoryTarget } from '../framework/settings.ts';
import type { RecordRunContext, TestRecord } from '../framework/results/json.ts';
import { withHistory } from '../framework/history/store.ts';
import { checkRun } from '../framework/history/check-run.ts';
import { checkRecord, newPoints } from '../framework/history/regression.ts';
import { dayOf, lookbackStartMs, seriesBaseline } from '../framework/history/baseline.ts';
import { caseKey, seriesId } from '../framework/history/series-key.ts';
import { startPostgres } from '../scripts/postgres-local.ts';
import { appendResult, printGoals, printTable, type Goal } from './lib/report.ts';
import { median } from './lib/stats.ts';
import { timedCommand } from './lib/timed-command.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/history.ts [--runs 5] [--days 20] [--tests 1000] [--metrics 50] [--import-rows 100000] [--no-postgres] [--smoke]
  The history's speed on DuckDB and a throw-away PostgreSQL 15: one run's append, \`history
  regressions\` over days x tests x metrics stored values, \`history import\` of --import-rows
  values, the store's size. --smoke: tiny sizes, no figure kept.`;

const cli = benchOptions({ args: benchArgs(['--runs', '1', '--days', '2', '--tests', '10', '--metrics', '2', '--import-rows', '100']),
  options: {
    runs: { type: 'string', default: '5' },
    days: { type: 'string', default: '20' },
    tests: { type: 'string', default: '1000' },
    metrics: { type: 'string', default: '50' },
    'import-rows': { type: 'string', default: '100000' },
    'no-postgres': { type: 'boolean', default: false },
  },
}, USAGE);
const { values } = cli;
const [RUNS, DAYS, TESTS, METRICS, IMPORT_ROWS] = ['runs', 'days', 'tests', 'metrics', 'import-rows'].map((name) => cli.wholeNumber(name));
const DAY_MS = 86_400_000;
const START = Date.UTC(2026, 9, 1);
const scratch = mkdtempSync(path.join(tmpdir(), 'bench-history-'));
const root = path.resolve(import.meta.dirname, '..');

/** One run: `tests` test records of METRICS metrics each, on day `day`; values wander by a few percent. */
function runRecords(runId: string, day: number, tests: number, testOffset = 0): TestRecord[] {
  const run: RecordRunContext = { id: runId, kind: 'post-merge', identity: { benchmark_mode: 'e2e', isl: 1024, osl: 1024 } };
  const start = START + day * DAY_MS + 3_600_000;
  return Array.from({ length: tests }, (_, t) => ({
    testId: `disagg_perf_case${String(t + testOffset).padStart(4, '0')}_ccb-NIXL`,
    type: 'disagg',
    category: 'perf',
    configPath: `test_configs/disagg/perf/case${t + testOffset}.yaml`,
    jobId: `${runId}-${t}`,
    verdict: 'passed' as const,
    failures: [],
    metrics: Array.from({ length: METRICS }, (_, m) => ({
      name: `METRIC_${String(m).padStart(2, '0')}`,
      value: 100 + m + ((t * 31 + m * 17 + day * 7) % 13) / 2,
      unit: m % 2 ? 'ms' : 'tok/s',
      higherIsBetter: m % 2 === 0,
      labels: { concurrency: 8 },
    })),
    timing: { start: new Date(start).toISOString(), end: new Date(start + 600_000).toISOString(), durationSec: 600 },
    host: 'bench',
    gpuType: 'H100',
    run,
  }));
}
const entries = (records: TestRecord[]) => records.map((record) => ({ record, run: record.run!, source: 'bench' }));

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

/** Loads DAYS runs of TESTS x METRICS records; returns the load time and writes each day as a results.json. */
async function load(target: HistoryTarget, writeJson: boolean): Promise<number> {
  let ms = 0;
  for (let d = 0; d < DAYS; d++) {
    const records = runRecords(`day-${d}`, d, TESTS);
    if (writeJson) writeFileSync(path.join(scratch, `day-${d}.json`), JSON.stringify({ version: 1, updated: '', records }));
    ms += (await timed(() => withHistory(target, (s) => s.append(entries(records)), { create: true }))).ms;
  }
  return ms;
}

/** The latest run, appended, as the run `history regressions` checks by default. */
const latest = runRecords('checked', DAYS, TESTS);

/**
 * The same check from results.json files: load every day, sum each series per day in JS, the
 * baselines with baseline.ts (the same algorithm as the store's SQL), then the same checkRecord.
 */
function checkFromJson(): number {
  const t0 = performance.now();
  const anchor = latest.reduce((min, r) => Math.min(min, Date.parse(r.timing.start)), Infinity);
  const from = lookbackStartMs(anchor);
  const wanted = new Map(latest.flatMap((r) => newPoints(r, { identity: r.run!.identity }).map((p) => [p.seriesId, p] as const)));
  const sums = new Map<number, Map<number, [number, number]>>();
  for (let d = 0; d < DAYS; d++) {
    const { records } = JSON.parse(readFileSync(path.join(scratch, `day-${d}.json`), 'utf8')) as { records: TestRecord[] };
    for (const r of records) {
      const ts = Date.parse(r.timing.end);
      if (r.verdict !== 'passed' || r.run?.kind !== 'post-merge' || ts < from || ts >= anchor) continue;
      for (const m of r.metrics) {
        const id = seriesId(caseKey({ testId: r.testId, gpuType: r.gpuType, identity: r.run.identity, labels: m.labels }), m.name);
        if (!wanted.has(id)) continue;
        if (!sums.has(id)) sums.set(id, new Map());
        const byDay = sums.get(id)!;
        const [sum, n] = byDay.get(dayOf(ts)) ?? [0, 0];
        byDay.set(dayOf(ts), [sum + m.value, n + 1]);
      }
    }
  }
  const baselines = new Map(
    [...wanted.values()].map((p) => {
      const byDay = sums.get(p.seriesId) ?? new Map<number, [number, number]>();
      const days = [...byDay.keys()];
      return [p.seriesId, seriesBaseline(p.seriesId, { days, sums: days.map((d) => byDay.get(d)![0]), counts: days.map((d) => byDay.get(d)![1]) })];
    }),
  );
  let compared = 0;
  for (const r of latest) compared += checkRecord({ record: r, baselines: new Map([...baselines].filter(([, b]) => b.historyValues > 0)), runKind: 'post-merge', identity: r.run!.identity }).findings.length;
  if (compared !== TESTS * METRICS) throw new Error(`JSON path compared ${compared} metrics, expected ${TESTS * METRICS}`);
  return performance.now() - t0;
}

async function measure(name: string, target: HistoryTarget, env: Record<string, string>, writeJson: boolean) {
  const loadMs = await load(target, writeJson);
  await withHistory(target, (s) => s.append(entries(latest)), { create: true });
  const appendMs: number[] = [];
  for (let k = 0; k < RUNS; k++) {
    const run = runRecords(`append-${k}`, DAYS + 1 + k, 1000 / METRICS, 5000); // 1,000 records: 20 tests x 50 metrics, other tests
    appendMs.push((await timed(() => withHistory(target, (s) => s.append(entries(run)), { create: true }))).ms);
  }
  const checkMs: number[] = [];
  let compared = 0;
  for (let k = 0; k < 3; k++) {
    const t = await timed(() => withHistory(target, (s) => checkRun(s, latest, { judgeAgain: true })));
    checkMs.push(t.ms);
    compared = t.value.reduce((n, c) => n + c.findings.length, 0);
  }
  if (compared !== TESTS * METRICS) throw new Error(`${name}: compared ${compared} metrics, expected ${TESTS * METRICS}`);
  const cliMs: number[] = [];
  for (let k = 0; k < 3; k++) {
    const r = await timedCommand('node', [path.join(root, 'bin/disagg-bench.js'), 'history', 'regressions', '--run', 'checked'], { env: { ...process.env, ...env }, cwd: scratch });
    if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`history regressions exited ${r.exitCode}: ${r.output.slice(-500)}`);
    cliMs.push(r.wallS * 1000);
  }
  const importMs: number[] = [];
  for (let k = 0; k < Math.min(RUNS, 3); k++) {
    const file = path.join(scratch, `import-${name}-${k}.json`);
    const records = runRecords(`import-${k}`, DAYS + 10 + k, Math.ceil(IMPORT_ROWS / METRICS), 10_000);
    writeFileSync(file, JSON.stringify({ version: 1, updated: '', records }));
    const r = await timedCommand('node', [path.join(root, 'bin/disagg-bench.js'), 'history', 'import', file], { env: { ...process.env, ...env }, cwd: scratch });
    if (r.exitCode !== 0 || !r.output.includes(`${records.length * METRICS} metric value(s) appended`)) throw new Error(`history import exited ${r.exitCode}: ${r.output.slice(-500)}`);
    importMs.push(r.wallS * 1000);
  }
  return { name, loadSec: loadMs / 1000, appendMs, checkMs, cliMs, importMs };
}

const results = [];
try {
  const duckFile = path.join(scratch, 'history.duckdb');
  const duck = await measure('duckdb', { kind: 'duckdb', file: duckFile }, { DISAGG_HISTORY: duckFile }, true);
  const duckBytes = statSync(duckFile).size;
  const jsonMs = [checkFromJson(), checkFromJson(), checkFromJson()];
  const jsonBytes = Array.from({ length: DAYS }, (_, d) => statSync(path.join(scratch, `day-${d}.json`)).size).reduce((a, b) => a + b, 0);
  results.push({ ...duck, storeBytes: duckBytes });
  let pgResult: Awaited<ReturnType<typeof measure>> | undefined;
  if (!values['no-postgres']) {
    const pg = await startPostgres();
    try {
      const url = pg.createDatabase('bench');
      pgResult = await measure('postgres', { kind: 'postgres', url }, { DISAGG_HISTORY: url }, false);
      const size = await withHistory({ kind: 'postgres', url }, async () => {
        const client = new (await import('pg')).default.Client({ connectionString: url });
        await client.connect();
        const r = await client.query("SELECT sum(pg_total_relation_size(c.oid))::float8 AS bytes FROM pg_class c WHERE c.relname IN ('disagg_history_meta','disagg_history_tests','disagg_history_metrics')");
        await client.end();
        return Number(r.rows[0].bytes);
      });
      results.push({ ...pgResult, storeBytes: size });
    } finally {
      pg.stop();
    }
  }
  // Every value the store holds when its size is read: the history, the checked run, the appends and the imports.
  const records = DAYS * TESTS * METRICS + TESTS * METRICS + RUNS * 1000 + Math.min(RUNS, 3) * Math.ceil(IMPORT_ROWS / METRICS) * METRICS;
  const perMillion = (bytes: number) => (bytes / records) * 1e6 / 2 ** 20;
  printTable(
    `history: ${DAYS} days x ${TESTS} tests x ${METRICS} metrics = ${DAYS * TESTS * METRICS} records (+ the checked run and the appends)`,
    ['store', 'load (s)', 'append 1,000 p50 (ms)', 'check in-process p50 (ms)', 'history regressions p50 (ms)', `history import ${IMPORT_ROWS} p50 (ms)`, 'MiB per 1M records'],
    results.map((r) => [r.name, r.loadSec.toFixed(1), median(r.appendMs).toFixed(0), median(r.checkMs).toFixed(0), median(r.cliMs).toFixed(0), median(r.importMs).toFixed(0), perMillion(r.storeBytes).toFixed(1)]),
  );
  console.log(`same check from ${DAYS} results.json files (${(jsonBytes / 2 ** 20).toFixed(0)} MiB): p50 ${median(jsonMs).toFixed(0)} ms (runs ${jsonMs.map((m) => m.toFixed(0)).join(', ')})`);
  const goals: Goal[] = [
    { what: "DuckDB append of one run's 1,000 records (ms)", value: Math.round(median(duck.appendMs)), limit: 500, atMost: true },
    { what: 'DuckDB history regressions over 1M records (ms)', value: Math.round(median(duck.cliMs)), limit: 3000, atMost: true },
    { what: `DuckDB history import of ${IMPORT_ROWS} rows (ms)`, value: Math.round(median(duck.importMs)), limit: 10_000, atMost: true },
    ...(pgResult ? [{ what: "PostgreSQL append of one run's 1,000 records (ms)", value: Math.round(median(pgResult.appendMs)), limit: 500, atMost: true }] : []),
  ];
  printGoals(goals);
  appendResult(
    'history',
    {
      days: DAYS,
      tests: TESTS,
      metrics: METRICS,
      importRows: IMPORT_ROWS,
      stores: results.map((r) => ({ store: r.name, loadSec: r.loadSec, appendMs: r.appendMs, checkMs: r.checkMs, cliMs: r.cliMs, importMs: r.importMs, storeBytes: r.storeBytes, mibPerMillion: perMillion(r.storeBytes) })),
      jsonCheckMs: jsonMs,
      jsonBytes,
      jsonMibPerMillion: (jsonBytes / (DAYS * TESTS * METRICS)) * 1e6 / 2 ** 20,
    },
    goals,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
