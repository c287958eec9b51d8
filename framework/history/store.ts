// The history store: one small interface over either backend (DuckDB file or PostgreSQL), chosen
// by DISAGG_HISTORY alone; nothing outside this folder knows which one is in use. A session opens
// the store, does its work and closes it (withHistory), so a DuckDB file is never held open
// between the moments it is used.
import type { HistoryTarget } from '../settings.ts';
import type { Metric } from '../metrics/metric.ts';
import type { TestRecord } from '../results/json.ts';
import { HistoryStoreError } from './errors.ts';
import { metricRows, num, optional, parseJson, recordFromRows, rowValues, testRow, type HistoryEntry } from './rows.ts';
import {
  CREATE_NEW_POINTS,
  CREATE_TABLES,
  HISTORY_SCHEMA_VERSION,
  META_TABLE,
  METRIC_COLUMNS,
  METRICS_TABLE,
  NEW_POINT_COLUMNS,
  NEW_POINTS_TABLE,
  POSTGRES_INDEXES,
  TEST_COLUMNS,
  TESTS_TABLE,
  WRITER,
} from './schema.ts';
import { ROLLING_WINDOW } from './baseline.ts';
import { SqlError, type SqlConnection, type SqlValue } from './sql-connection.ts';
import { describeTarget } from './target.ts';

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

/** One series' baselines as upstream computes them (baseline.ts has the same in JS). */
export interface SeriesBaseline {
  seriesId: number;
  /** P95 of the smoothed daily means: the baseline of a higher-is-better metric. */
  p95: number;
  /** P5: the baseline of a lower-is-better metric. */
  p5: number;
  /** Days with values, the new value's included. */
  days: number;
  /** Values of the history (the new ones not counted): 0 = nothing to compare with. */
  historyValues: number;
}

export interface BaselineFilter {
  /** History at or after this time (ms)... */
  fromMs: number;
  /** ...and before this one. */
  toMs: number;
  /** A run whose own values are not history (the run being checked). */
  excludeRunId?: string;
  /** The values being checked: each joins its day before the means are taken, as upstream's new_data. */
  points: NewPoint[];
  /**
   * The values being checked are this stored run's own (`history regressions` of a run in the
   * store): read where they are instead of being sent back through a temporary table.
   */
  storedRunId?: string;
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
   * Baselines of the series of `points`, in one query, exactly as upstream's
   * calculate_baseline_metrics (see baseline.ts): the valid post-merge values of the window
   * (upstream's history query: b_is_valid, b_is_post_merge, the lookback range on ts_created) and
   * the new values, one mean per UTC day, a trailing rolling mean over 3 days, then the 95th and
   * 5th percentiles with linear interpolation (percentile_cont = upstream's _percentile). Grouping
   * by the numeric series id keeps a million values under a few seconds on DuckDB.
   */
  async baselines(filter: BaselineFilter): Promise<Map<number, SeriesBaseline>> {
    if (filter.points.length === 0 && !filter.storedRunId) return new Map();
    const stored = filter.storedRunId;
    if (!stored) {
      await this.db.exec(CREATE_NEW_POINTS);
      await this.db.exec(`DELETE FROM ${NEW_POINTS_TABLE}`);
      await this.db.insert(NEW_POINTS_TABLE, NEW_POINT_COLUMNS, filter.points.map((p) => [p.seriesId, p.tsMs, p.value]));
    }
    const points = stored
      ? `SELECT series_id, ts_ms, value, CASE WHEN run_id = $3 THEN 0 ELSE 1 END AS old FROM ${METRICS_TABLE}
         WHERE run_id = $3 OR (post_merge AND valid AND ts_ms >= $1 AND ts_ms < $2)`
      : `SELECT series_id, ts_ms, value, 1 AS old FROM ${METRICS_TABLE}
         WHERE post_merge AND valid AND ts_ms >= $1 AND ts_ms < $2 AND run_id <> $3 AND series_id IN (SELECT series_id FROM ${NEW_POINTS_TABLE})
         UNION ALL SELECT series_id, ts_ms, value, 0 AS old FROM ${NEW_POINTS_TABLE}`;
    const rows = await this.db.query(
      `WITH points AS (${points}),
       daily AS (SELECT series_id, floor(ts_ms / 86400000.0) AS day, avg(value) AS mean, sum(old) AS old FROM points GROUP BY series_id, floor(ts_ms / 86400000.0)),
       smoothed AS (SELECT series_id, old, avg(mean) OVER (PARTITION BY series_id ORDER BY day ROWS BETWEEN ${ROLLING_WINDOW - 1} PRECEDING AND CURRENT ROW) AS mean3 FROM daily)
       SELECT CAST(series_id AS DOUBLE PRECISION) AS series_id,
              CAST(percentile_cont(0.95) WITHIN GROUP (ORDER BY mean3) AS DOUBLE PRECISION) AS p95,
              CAST(percentile_cont(0.05) WITHIN GROUP (ORDER BY mean3) AS DOUBLE PRECISION) AS p5,
              CAST(count(*) AS INTEGER) AS days, CAST(sum(old) AS INTEGER) AS history_values
       FROM smoothed GROUP BY series_id`,
      [filter.fromMs, filter.toMs, stored ?? filter.excludeRunId ?? ''],
    );
    if (!stored) await this.db.exec(`DELETE FROM ${NEW_POINTS_TABLE}`);
    return new Map(rows.map((r) => [num(r.series_id), { seriesId: num(r.series_id), p95: num(r.p95), p5: num(r.p5), days: num(r.days), historyValues: num(r.history_values) }]));
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
              CAST(m.ts_ms AS DOUBLE PRECISION) AS ts_ms, m.post_merge, m.valid
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
    }));
  }

  /** Every run, oldest first. */
  async runs(): Promise<RunSummary[]> {
    const rows = await this.db.query(
      `SELECT run_id, min(run_kind) AS kind, min(run_label) AS label, min(git_commit) AS git_commit, min(git_branch) AS git_branch, min(source) AS source,
              CAST(min(start_ms) AS DOUBLE PRECISION) AS start_ms, CAST(max(end_ms) AS DOUBLE PRECISION) AS end_ms, CAST(count(*) AS INTEGER) AS tests
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
      `SELECT run_id, test_id, metric, labels, value, unit, higher_is_better, threshold_post, threshold_pre FROM ${METRICS_TABLE} WHERE run_id IN (${placeholders(runIds.length)})`,
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

export interface OpenOptions {
  /** Create the store (file, tables) when missing: a run's end and imports do, readers do not. */
  create?: boolean;
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
  if (target.kind === 'duckdb') {
    const { withDuckDb } = await import('./duckdb.ts');
    return withDuckDb(target.file, description, session, { create }).catch(wrap);
  }
  const { withPostgres } = await import('./postgres.ts');
  return withPostgres(target.url, description, session).catch(wrap);
}
