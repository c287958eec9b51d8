// The history store: one small interface over either backend (DuckDB file or PostgreSQL), chosen
// by DISAGG_HISTORY alone; nothing outside this folder knows which one is in use. A session opens
// the store, does its work and closes it (withHistory), so a DuckDB file is never held open
// between the moments it is used.
import type { HistoryTarget } from '../settings.ts';
import type { Metric } from '../metrics/metric.ts';
import type { RecordRegression, TestRecord } from '../results/json.ts';
import { HistoryStoreError } from './errors.ts';
import { metricRows, num, optional, parseJson, recordFromRows, rowValues, testRow, type HistoryEntry } from './rows.ts';
import {
  CREATE_NEW_POINTS,
  CREATE_NEW_VERDICTS,
  CREATE_TABLES,
  HISTORY_SCHEMA_VERSION,
  META_TABLE,
  METRIC_COLUMNS,
  METRICS_TABLE,
  NEW_POINT_COLUMNS,
  NEW_POINTS_TABLE,
  NEW_VERDICT_COLUMNS,
  NEW_VERDICTS_TABLE,
  POSTGRES_INDEXES,
  TEST_COLUMNS,
  TESTS_TABLE,
  UPGRADE_TO_2,
  UPGRADE_TO_3,
  UPGRADE_TO_4,
  WRITER,
} from './schema.ts';
import { ROLLING_WINDOW } from './baseline.ts';
import type { SeriesStats } from './gate.ts';
import { SqlError, type SqlConnection, type SqlValue } from './sql-connection.ts';
import { describeTarget } from './target.ts';
import { AlertStore, type RunFacts } from './alert-store.ts';
import type { RunPoint } from './gate/judge-run.ts';

export interface AppendResult {
  /** Records appended now. */
  tests: number;
  metrics: number;
  /** Records the store already held (same run and test), left as they were. */
  alreadyThere: number;
}

/** A value being checked: its series (series-key.ts seriesId), time and value. */
export interface NewPoint {
  seriesId: number;
  tsMs: number;
  value: number;
}

/** One series' baselines as upstream computes them, and its dispersion (gate.ts). */
export type SeriesBaseline = SeriesStats;

export interface BaselineFilter {
  /** History at or after this time (ms)... */
  fromMs: number;
  /** ...and before this one. */
  toMs: number;
  /** A run whose own values are not history (the run being checked). */
  excludeRunId?: string;
  /** The values being checked: they name the series; they are not part of their own baselines. */
  points: NewPoint[];
  /**
   * The values being checked are this stored run's own (`history regressions` of a run in the
   * store): their series are read where they are instead of being sent through a temporary table.
   */
  storedRunId?: string;
  /** Only values of this branch (and those recorded without a branch); undefined: every branch. */
  branch?: string;
}

export interface HistoryPoint {
  runId: string;
  runKind: string;
  runLabel?: string;
  testId: string;
  caseKey: string;
  metric: string;
  labels: Metric['labels'];
  value: number;
  unit: string;
  higherIsBetter?: boolean;
  tsMs: number;
  postMerge: boolean;
  valid: boolean;
  gpuType?: string;
  branch?: string;
}

export interface RunSummary {
  runId: string;
  kind: string;
  label?: string;
  commit?: string;
  branch?: string;
  startMs: number;
  endMs: number;
  tests: number;
  source: string;
  /** The GPU types of its tests, comma-separated. */
  gpuTypes?: string;
  /** Its tests by verdict (a skip is no result and never reaches the history). */
  passed: number;
  failed: number;
  /** Its tests with a figure the gate flagged against the history's baseline. */
  regressed: number;
}

const placeholders = (count: number, from = 1) => Array.from({ length: count }, (_, k) => `$${k + from}`).join(', ');
export class HistoryStore {
  constructor(
    private readonly db: SqlConnection,
    /** The store as a message names it. */
    readonly description: string,
  ) {}

  get backend(): 'duckdb' | 'postgres' {
    return this.db.dialect;
  }

  /** Checks (and with create, makes) the tables; refuses a foreign database or a newer schema. */
  async prepare(create: boolean): Promise<void> {
    const tables = (await this.db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`)).map((r) => r.table_name);
    if (!tables.includes(META_TABLE)) {
      const others = tables.filter((t) => !t.startsWith('disagg_history_'));
      // A DuckDB file is ours alone; a PostgreSQL database may hold other tables beside ours.
      if (this.db.dialect === 'duckdb' && others.length > 0) {
        throw new HistoryStoreError(this.description, `it is a DuckDB database of something else (tables ${others.slice(0, 5).join(', ')}), not a disagg-bench history`, 'set DISAGG_HISTORY to another file (or move this one aside)');
      }
      if (!create) throw new HistoryStoreError(this.description, 'it holds no history yet', 'run the suite once or `disagg-bench history import` results into it', true);
      await this.createTables();
      return;
    }
    const meta = new Map((await this.db.query<{ key: string; value: string }>(`SELECT key, value FROM ${META_TABLE}`)).map((r) => [r.key, r.value]));
    const version = Number(meta.get('schema_version'));
    if (meta.get('writer') !== WRITER || !Number.isInteger(version)) {
      throw new HistoryStoreError(this.description, `its ${META_TABLE} table was not written by disagg-bench`, 'set DISAGG_HISTORY to another store');
    }
    if (version > HISTORY_SCHEMA_VERSION) {
      throw new HistoryStoreError(this.description, `it was written by a newer disagg-bench (history schema ${version}; this version reads ${HISTORY_SCHEMA_VERSION})`, 'upgrade disagg-bench, or set DISAGG_HISTORY to another store');
    }
    if (version < HISTORY_SCHEMA_VERSION) {
      // A reader holds the store read-only: withHistory upgrades it in a short writing session first.
      if (!create) throw new StoreNeedsUpgrade(this.description);
      // One transaction per step: DuckDB refuses to alter a table a transaction has already updated.
      for (const [from, ddls] of [[1, UPGRADE_TO_2], [2, UPGRADE_TO_3], [3, UPGRADE_TO_4]] as const) {
        await this.db.transaction(async () => {
          if (this.db.dialect === 'postgres') await this.db.exec(`SELECT pg_advisory_xact_lock(72461, 1)`);
          const current = await this.db.query<{ value: string }>(`SELECT value FROM ${META_TABLE} WHERE key = 'schema_version'`);
          if (Number(current[0]?.value) === from) for (const ddl of ddls) await this.db.exec(ddl);
        });
      }
    }
  }

  private async createTables(): Promise<void> {
    await this.db.transaction(async () => {
      // Two runs creating a new PostgreSQL history at once: the second waits, then finds the tables.
      if (this.db.dialect === 'postgres') await this.db.exec(`SELECT pg_advisory_xact_lock(72461, 1)`);
      for (const ddl of CREATE_TABLES) await this.db.exec(ddl);
      if (this.db.dialect === 'postgres') for (const ddl of POSTGRES_INDEXES) await this.db.exec(ddl);
      await this.db.exec(`INSERT INTO ${META_TABLE} (key, value) VALUES ('schema_version', $1), ('writer', $2) ON CONFLICT (key) DO NOTHING`, [String(HISTORY_SCHEMA_VERSION), WRITER]);
    });
  }

  /**
   * Appends records in one transaction. A record the store already holds (same run id and test id)
   * is left alone, so appending or importing the same results twice adds nothing.
   */
  async append(entries: HistoryEntry[], now = Date.now()): Promise<AppendResult> {
    if (entries.length === 0) return { tests: 0, metrics: 0, alreadyThere: 0 };
    const attempt = () =>
      this.db.transaction(async () => {
        const runIds = [...new Set(entries.map((e) => e.run.id))];
        const existing = new Set<string>();
        for (let k = 0; k < runIds.length; k += 500) {
          const chunk = runIds.slice(k, k + 500);
          const rows = await this.db.query<{ run_id: string; test_id: string }>(`SELECT run_id, test_id FROM ${TESTS_TABLE} WHERE run_id IN (${placeholders(chunk.length)})`, chunk);
          for (const r of rows) existing.add(JSON.stringify([r.run_id, r.test_id]));
        }
        const seen = new Set(existing);
        const fresh = entries.filter((e) => {
          const key = JSON.stringify([e.run.id, e.record.testId]);
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        });
        const tests = fresh.map((e) => rowValues(testRow(e, now), TEST_COLUMNS));
        const metrics = fresh.flatMap((e) => metricRows(e, now).map((r) => rowValues(r, METRIC_COLUMNS)));
        await this.db.insert(TESTS_TABLE, TEST_COLUMNS, tests);
        await this.db.insert(METRICS_TABLE, METRIC_COLUMNS, metrics);
        return { tests: tests.length, metrics: metrics.length, alreadyThere: entries.length - fresh.length };
      });
    try {
      return await attempt();
    } catch (error) {
      // Two writers of the same run and test at once (PostgreSQL): the loser finds it there now.
      if (error instanceof SqlError && error.code === '23505') return attempt();
      throw error;
    }
  }

  /** Which of these run ids the store holds. */
  async knownRuns(runIds: string[]): Promise<Set<string>> {
    const known = new Set<string>();
    for (let k = 0; k < runIds.length; k += 500) {
      const chunk = runIds.slice(k, k + 500);
      const rows = await this.db.query<{ run_id: string }>(`SELECT DISTINCT run_id FROM ${TESTS_TABLE} WHERE run_id IN (${placeholders(chunk.length)})`, chunk);
      for (const r of rows) known.add(r.run_id);
    }
    return known;
  }

  /**
   * What the history queries of a filter share: $1-$3 (window, the run left out), the series asked
   * for as a subquery (a stored run's, or the points sent through a temporary table), and the
   * branch condition on `prefix` (a table alias).
   */
  private async seriesOf(filter: BaselineFilter, prefix = ''): Promise<{ params: SqlValue[]; series: string; branch: string; stored?: string }> {
    const stored = filter.storedRunId;
    if (!stored) {
      await this.db.exec(CREATE_NEW_POINTS);
      await this.db.exec(`DELETE FROM ${NEW_POINTS_TABLE}`);
      await this.db.insert(NEW_POINTS_TABLE, NEW_POINT_COLUMNS, filter.points.map((p) => [p.seriesId, p.tsMs, p.value]), { temporary: true });
    }
    const params: SqlValue[] = [filter.fromMs, filter.toMs, stored ?? filter.excludeRunId ?? ''];
    const series = stored ? `SELECT series_id FROM ${METRICS_TABLE} WHERE run_id = $3` : `SELECT series_id FROM ${NEW_POINTS_TABLE}`;
    let branch = '';
    if (filter.branch !== undefined) {
      params.push(filter.branch);
      branch = ` AND (${prefix}branch IS NULL OR ${prefix}branch = $${params.length})`;
    }
    return { params, series, branch, ...(stored ? { stored } : {}) };
  }

  /**
   * Baselines of the series of `points`, in one query, as upstream's calculate_baseline_metrics
   * (see baseline.ts): the valid post-merge values of the window before the run (upstream's
   * history query: b_is_valid, b_is_post_merge, the lookback range on ts_created), of the branch
   * asked for, one mean per UTC day, a trailing rolling mean over 3 days, then the 95th and 5th
   * percentiles with linear interpolation (percentile_cont = upstream's _percentile); beside them
   * what the gate needs (gate.ts): the median and standard deviation of the daily means and the
   * latest day's mean. Grouping by the numeric series id keeps a million values
   * under a few seconds on DuckDB.
   */
  async baselines(filter: BaselineFilter): Promise<Map<number, SeriesStats>> {
    if (filter.points.length === 0 && !filter.storedRunId) return new Map();
    const { params, series, branch, stored } = await this.seriesOf(filter);
    const rows = await this.db.query(
      `WITH points AS (SELECT series_id, ts_ms, value FROM ${METRICS_TABLE}
         WHERE post_merge AND valid AND ts_ms >= $1 AND ts_ms < $2 AND run_id <> $3${branch} AND series_id IN (${series})),
       daily AS (SELECT series_id, floor(ts_ms / 86400000.0) AS day, avg(value) AS mean, count(*) AS n FROM points GROUP BY series_id, floor(ts_ms / 86400000.0)),
       smoothed AS (SELECT series_id, mean, n,
              avg(mean) OVER (PARTITION BY series_id ORDER BY day ROWS BETWEEN ${ROLLING_WINDOW - 1} PRECEDING AND CURRENT ROW) AS mean3,
              row_number() OVER (PARTITION BY series_id ORDER BY day DESC) AS back FROM daily),
       stats AS (SELECT series_id,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY mean3) AS p95, percentile_cont(0.05) WITHIN GROUP (ORDER BY mean3) AS p5,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY mean) AS median, stddev_samp(mean) AS sd, count(*) AS days, sum(n) AS history_values,
              max(CASE WHEN back = 1 THEN mean END) AS last_day
            FROM smoothed GROUP BY series_id)
       SELECT CAST(series_id AS DOUBLE PRECISION) AS series_id, CAST(p95 AS DOUBLE PRECISION) AS p95, CAST(p5 AS DOUBLE PRECISION) AS p5,
              CAST(median AS DOUBLE PRECISION) AS median, CAST(coalesce(sd, 0) AS DOUBLE PRECISION) AS sd,
              CAST(days AS INTEGER) AS days, CAST(history_values AS INTEGER) AS history_values, CAST(last_day AS DOUBLE PRECISION) AS last_day
       FROM stats`,
      params,
    );
    if (!stored) await this.db.exec(`DELETE FROM ${NEW_POINTS_TABLE}`);
    return new Map(
      rows.map((r) => [
        num(r.series_id),
        { seriesId: num(r.series_id), p95: num(r.p95), p5: num(r.p5), median: num(r.median), sd: num(r.sd), days: num(r.days), historyValues: num(r.history_values), lastDay: num(r.last_day) },
      ]),
    );
  }

  /**
   * The gate's history (gate/judge-run.ts): per series of `points` (or of a stored run), one value
   * per post-merge run (the mean when a run measured it more than once) with the run's time,
   * oldest first; valid values of the window and branch, the excluded run left out. A million
   * values come back as columns of numbers, each run as its place in a list of the window's runs
   * read first: no string and no array is made per value.
   */
  async runValues(filter: BaselineFilter): Promise<Map<number, RunPoint[]>> {
    if (filter.points.length === 0 && !filter.storedRunId) return new Map();
    const { params, series, branch, stored } = await this.seriesOf(filter, 'm.');
    const where = `m.post_merge AND m.valid AND m.ts_ms >= $1 AND m.ts_ms < $2 AND m.run_id <> $3${branch}`;
    const runIds = (await this.db.query<{ run_id: string }>(`SELECT DISTINCT m.run_id FROM ${METRICS_TABLE} m WHERE ${where}`, params)).map((r) => String(r.run_id));
    const runList = runIds.map((_, k) => `(CAST($${params.length + 1 + k} AS VARCHAR), ${k})`).join(', ');
    const [ids, runs, values, times] = runIds.length
      ? await this.db.queryColumns(
          `SELECT CAST(m.series_id AS DOUBLE PRECISION), r.k, m.value, CAST(m.ts_ms AS DOUBLE PRECISION) FROM ${METRICS_TABLE} m
             JOIN (VALUES ${runList}) AS r(run_id, k) ON r.run_id = m.run_id
           WHERE ${where} AND m.series_id IN (${series})`,
          [...params, ...runIds],
        )
      : [[], [], [], []];
    if (!stored) await this.db.exec(`DELETE FROM ${NEW_POINTS_TABLE}`);
    // Rows in the table's order (sorting a million rows costs the database more than the whole
    // read): a series' values are gathered in a list; a run that measured it more than once
    // (usually its rows are next to each other, else found in the list) is summed, then averaged.
    const out = new Map<number, RunPoint[]>();
    const byRun = new Map<number, Map<string, RunPoint>>();
    /** Values of a run summed into one point, by point: averaged at the end (rare). */
    const counts = new Map<RunPoint, number>();
    for (let row = 0; row < ids.length; row++) {
      const id = ids[row] as number;
      const runId = runIds[runs[row] as number];
      const tsMs = times[row] as number;
      let points = out.get(id);
      if (!points) out.set(id, (points = []));
      const same = pointOfRun(points, runId, id, byRun);
      if (same) {
        same.value += values[row] as number;
        same.tsMs = Math.max(same.tsMs, tsMs);
        counts.set(same, (counts.get(same) ?? 1) + 1);
      } else {
        const point = { runId, tsMs, value: values[row] as number };
        points.push(point);
        byRun.get(id)?.set(runId, point);
      }
    }
    for (const [point, n] of counts) point.value /= n;
    for (const list of out.values()) if (!isSortedByTime(list)) list.sort((a, b) => a.tsMs - b.tsMs);
    return out;
  }

  /** When each run started (its tests' earliest start) and at which commit: an alert's range. */
  async runFacts(runIds: readonly string[]): Promise<Map<string, RunFacts>> {
    const out = new Map<string, RunFacts>();
    for (let k = 0; k < runIds.length; k += 500) {
      const chunk = runIds.slice(k, k + 500);
      if (chunk.length === 0) break;
      const rows = await this.db.query(
        `SELECT run_id, CAST(min(start_ms) AS DOUBLE PRECISION) AS start_ms, min(git_commit) AS git_commit FROM ${TESTS_TABLE} WHERE run_id IN (${placeholders(chunk.length)}) GROUP BY run_id`,
        chunk,
      );
      for (const r of rows) out.set(String(r.run_id), { tsMs: num(r.start_ms), ...(r.git_commit ? { commit: String(r.git_commit) } : {}) });
    }
    return out;
  }

  /**
   * Replaces the regression checks of a stored run's records (a run judged after it was appended:
   * an import), in one statement from a temporary table: one UPDATE per record costs seconds for
   * thousands of tests.
   */
  async setRegressions(runId: string, checks: readonly { testId: string; regression: RecordRegression }[]): Promise<void> {
    if (checks.length === 0) return;
    await this.db.exec(CREATE_NEW_VERDICTS);
    await this.db.exec(`DELETE FROM ${NEW_VERDICTS_TABLE}`);
    await this.db.insert(NEW_VERDICTS_TABLE, NEW_VERDICT_COLUMNS, checks.map((c) => [c.testId, JSON.stringify(c.regression)]), { temporary: true });
    await this.db.exec(`UPDATE ${TESTS_TABLE} SET regression = v.regression FROM ${NEW_VERDICTS_TABLE} v WHERE ${TESTS_TABLE}.run_id = $1 AND ${TESTS_TABLE}.test_id = v.test_id`, [runId]);
    await this.db.exec(`DELETE FROM ${NEW_VERDICTS_TABLE}`);
  }

  /** The alerts the gate opened (alert-store.ts). */
  get alerts(): AlertStore {
    return new AlertStore(this.db);
  }

  /** Every value of a test (optionally one metric), oldest first: `history show`, the report's trends. */
  async points(filter: { testIds: string[]; metric?: string }): Promise<HistoryPoint[]> {
    if (filter.testIds.length === 0) return [];
    const params: SqlValue[] = [...filter.testIds];
    let where = `m.test_id IN (${placeholders(filter.testIds.length)})`;
    if (filter.metric) {
      params.push(filter.metric);
      where += ` AND m.metric = $${params.length}`;
    }
    const rows = await this.db.query(
      `SELECT m.run_id, t.run_kind, t.run_label, m.test_id, m.case_key, m.metric, m.labels, m.value, m.unit, m.higher_is_better,
              CAST(m.ts_ms AS DOUBLE PRECISION) AS ts_ms, m.post_merge, m.valid, t.gpu_type, m.branch
       FROM ${METRICS_TABLE} m JOIN ${TESTS_TABLE} t ON t.run_id = m.run_id AND t.test_id = m.test_id
       WHERE ${where} ORDER BY m.ts_ms, m.run_id`,
      params,
    );
    return rows.map((r) => ({
      runId: String(r.run_id),
      runKind: String(r.run_kind),
      runLabel: optional(r.run_label),
      testId: String(r.test_id),
      caseKey: String(r.case_key),
      metric: String(r.metric),
      labels: parseJson(r.labels, {}),
      value: num(r.value),
      unit: String(r.unit ?? ''),
      higherIsBetter: r.higher_is_better === null ? undefined : Boolean(r.higher_is_better),
      tsMs: num(r.ts_ms),
      postMerge: Boolean(r.post_merge),
      valid: Boolean(r.valid),
      gpuType: optional(r.gpu_type),
      branch: optional(r.branch),
    }));
  }

  /** Every run, oldest first. */
  async runs(): Promise<RunSummary[]> {
    const rows = await this.db.query(
      `SELECT run_id, min(run_kind) AS kind, min(run_label) AS label, min(git_commit) AS git_commit, min(git_branch) AS git_branch, min(source) AS source,
              CAST(min(start_ms) AS DOUBLE PRECISION) AS start_ms, CAST(max(end_ms) AS DOUBLE PRECISION) AS end_ms, CAST(count(*) AS INTEGER) AS tests,
              string_agg(DISTINCT gpu_type, ',' ORDER BY gpu_type) AS gpu_types,
              CAST(sum(CASE WHEN verdict = 'passed' THEN 1 ELSE 0 END) AS INTEGER) AS passed,
              CAST(sum(CASE WHEN verdict = 'failed' THEN 1 ELSE 0 END) AS INTEGER) AS failed,
              -- the regression column is the record's check as JSON.stringify wrote it (rows.ts): a flagged finding reads "regression":true
              CAST(sum(CASE WHEN regression LIKE '%"regression":true%' THEN 1 ELSE 0 END) AS INTEGER) AS regressed
       FROM ${TESTS_TABLE} GROUP BY run_id ORDER BY max(end_ms), run_id`,
    );
    return rows.map((r) => ({
      runId: String(r.run_id),
      kind: String(r.kind),
      label: optional(r.label),
      commit: optional(r.git_commit),
      branch: optional(r.git_branch),
      startMs: num(r.start_ms),
      endMs: num(r.end_ms),
      tests: num(r.tests),
      source: String(r.source),
      gpuTypes: optional(r.gpu_types),
      passed: num(r.passed),
      failed: num(r.failed),
      regressed: num(r.regressed),
    }));
  }

  /** The latest record of every test (by end time), whichever run it came from. */
  async latestRecords(): Promise<TestRecord[]> {
    const latest = await this.db.query<{ run_id: string; test_id: string }>(
      `SELECT run_id, test_id FROM ${TESTS_TABLE} t WHERE end_ms = (SELECT max(end_ms) FROM ${TESTS_TABLE} u WHERE u.test_id = t.test_id)`,
    );
    const wanted = new Set(latest.map((r) => JSON.stringify([r.run_id, r.test_id])));
    const records = await this.records([...new Set(latest.map((r) => r.run_id))]);
    return records.filter((r) => wanted.has(JSON.stringify([r.run!.id, r.testId])));
  }

  /** The records of runs, rebuilt as results.json has them (with their run context). */
  async records(runIds: string[]): Promise<TestRecord[]> {
    if (runIds.length === 0) return [];
    const tests = await this.db.query(
      `SELECT *, CAST(start_ms AS DOUBLE PRECISION) AS start_d, CAST(end_ms AS DOUBLE PRECISION) AS end_d FROM ${TESTS_TABLE} WHERE run_id IN (${placeholders(runIds.length)}) ORDER BY end_ms, test_id`,
      runIds,
    );
    const metrics = await this.db.query(
      `SELECT run_id, test_id, metric, labels, value, unit, higher_is_better, threshold_post, threshold_pre, gate, rounded FROM ${METRICS_TABLE} WHERE run_id IN (${placeholders(runIds.length)})`,
      runIds,
    );
    const byTest = new Map<string, Record<string, unknown>[]>();
    for (const m of metrics) {
      const key = JSON.stringify([m.run_id, m.test_id]);
      if (!byTest.has(key)) byTest.set(key, []);
      byTest.get(key)!.push(m);
    }
    return tests.map((t) => recordFromRows(t, byTest.get(JSON.stringify([t.run_id, t.test_id])) ?? []));
  }
}

/** A store of an older schema met by a read-only session (see prepare). */
class StoreNeedsUpgrade extends HistoryStoreError {
  constructor(store: string) {
    super(store, 'it was written by an older disagg-bench', 'it is upgraded when next opened for writing');
  }
}

export interface OpenOptions {
  /** Write: create the store (file, tables) when missing: a run's end and imports do; readers open it read-only. */
  create?: boolean;
  /** Seconds to wait for a DuckDB file another process holds (DISAGG_HISTORY_LOCK_WAIT_SEC). */
  lockWaitSec?: number;
}

/** Loads the driver of the store DISAGG_HISTORY names (DuckDB's native library, pg), opening nothing. */
export async function preloadHistoryDriver(target: HistoryTarget): Promise<void> {
  if (target.kind === 'duckdb') await import('./duckdb.ts');
  else if (target.kind === 'postgres') await import('./postgres.ts');
}

/** Opens the store DISAGG_HISTORY names, runs fn with it, closes it. */
export async function withHistory<T>(target: HistoryTarget, fn: (store: HistoryStore) => Promise<T>, options: OpenOptions = {}): Promise<T> {
  const description = describeTarget(target);
  const create = options.create ?? false;
  const session = async (db: SqlConnection) => {
    const store = new HistoryStore(db, description);
    await store.prepare(create);
    return fn(store);
  };
  // A backend's failure becomes one sentence; the caller's own errors pass as they are.
  const wrap = (error: unknown): never => {
    if (error instanceof SqlError) throw new HistoryStoreError(description, `a query failed (${error.message})`, 'check the store (or set DISAGG_HISTORY=off to run without it)');
    throw error;
  };
  if (target.kind === 'off') throw new HistoryStoreError(description, 'no history store is configured', 'unset DISAGG_HISTORY (a DuckDB file in OUTPUT_PATH) or set it to a file or a postgres:// URL');
  // Each backend's driver (DuckDB's native library, pg) is loaded when a store of its kind is
  // opened: a process that lists or plans tests never opens one and should not pay for either.
  const lockWaitMs = (options.lockWaitSec ?? 30) * 1000;
  const open = async <R>(write: boolean, fn: (db: SqlConnection) => Promise<R>): Promise<R> =>
    target.kind === 'duckdb'
      ? (await import('./duckdb.ts')).withDuckDb(target.file, description, fn, { create: write, lockWaitMs })
      : (await import('./postgres.ts')).withPostgres(target.url, description, fn);
  return open(create, session).catch(async (error: unknown) => {
    if (!(error instanceof StoreNeedsUpgrade)) return wrap(error);
    await open(true, (db) => new HistoryStore(db, description).prepare(true)).catch(wrap);
    return open(false, session).catch(wrap);
  });
}

/** The point of `runId` in a series' list (run ids are the run list's own strings): a look back along a short list, a map of its runs for a long one. */
function pointOfRun(points: RunPoint[], runId: string, id: number, byRun: Map<number, Map<string, RunPoint>>): RunPoint | undefined {
  if (points.length <= 32) {
    for (let k = points.length - 1; k >= 0; k--) if (points[k].runId === runId) return points[k];
    return undefined;
  }
  let index = byRun.get(id);
  if (!index) byRun.set(id, (index = new Map(points.map((p) => [p.runId, p]))));
  return index.get(runId);
}

const isSortedByTime = (points: readonly RunPoint[]) => points.every((p, k) => k === 0 || points[k - 1].tsMs <= p.tsMs);
