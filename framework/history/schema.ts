// The history's tables, one SQL text for DuckDB and PostgreSQL. One row per test of a run (its
// identity, verdict and context) and one per metric value, the latter carrying what the baseline
// query filters on (series key, time, post-merge, valid) so that query needs no join.
// Tables are prefixed disagg_history_ so a shared PostgreSQL database can hold them beside others.
import type { Column } from './sql-connection.ts';

/** Bumped when the tables change; a store written by a newer version is refused, not misread. */
export const HISTORY_SCHEMA_VERSION = 4;
export const WRITER = 'disagg-bench';

export const META_TABLE = 'disagg_history_meta';
export const TESTS_TABLE = 'disagg_history_tests';
export const METRICS_TABLE = 'disagg_history_metrics';

export const TEST_COLUMNS = [
  { name: 'run_id', type: 'text' },
  { name: 'test_id', type: 'text' },
  { name: 'run_kind', type: 'text' },
  { name: 'run_label', type: 'text' },
  { name: 'git_commit', type: 'text' },
  { name: 'git_branch', type: 'text' },
  /** JSON object of CI variables. */
  { name: 'ci', type: 'text' },
  { name: 'test_type', type: 'text' },
  { name: 'category', type: 'text' },
  { name: 'config_file', type: 'text' },
  { name: 'gpu_type', type: 'text' },
  /** JSON object: backend and the other fields beyond id and GPU type that make a test the same test. */
  { name: 'identity', type: 'text' },
  { name: 'verdict', type: 'text' },
  /** The measurement is usable (the test passed its own checks); upstream's b_is_valid. */
  { name: 'valid', type: 'boolean' },
  { name: 'job_id', type: 'text' },
  { name: 'scheduler_state', type: 'text' },
  { name: 'start_ms', type: 'bigint' },
  { name: 'end_ms', type: 'bigint' },
  { name: 'host', type: 'text' },
  /** JSON array of failure messages. */
  { name: 'failures', type: 'text' },
  /** JSON of the record's regression check (findings against baselines), when it had one. */
  { name: 'regression', type: 'text' },
  /** 'run', or 'import <file>'. */
  { name: 'source', type: 'text' },
  { name: 'appended_ms', type: 'bigint' },
] as const satisfies readonly Column[];

export const METRIC_COLUMNS = [
  { name: 'run_id', type: 'text' },
  { name: 'test_id', type: 'text' },
  /** What makes two values the same series: test id, GPU type, identity, labels (JSON). */
  { name: 'case_key', type: 'text' },
  /** A 53-bit hash of case_key and metric (series-key.ts seriesId): what the baseline query groups by, fast. */
  { name: 'series_id', type: 'bigint' },
  { name: 'metric', type: 'text' },
  /** JSON object, keys sorted. */
  { name: 'labels', type: 'text' },
  { name: 'value', type: 'double' },
  { name: 'unit', type: 'text' },
  { name: 'higher_is_better', type: 'boolean' },
  /** The test's end, ms since the epoch (upstream's ts_created). */
  { name: 'ts_ms', type: 'bigint' },
  { name: 'post_merge', type: 'boolean' },
  { name: 'valid', type: 'boolean' },
  /** Thresholds (fractions) the config set for this metric, as upstream embeds d_threshold_*; null = default. */
  { name: 'threshold_post', type: 'double' },
  { name: 'threshold_pre', type: 'double' },
  /** The run's branch (its series are keyed by it); null: not known, joins every branch's series. */
  { name: 'branch', type: 'text' },
  /** The metric gated in that run (headline or opted in); null: not known (schema 1, older records). */
  { name: 'gate', type: 'boolean' },
  /** The step the value was printed rounded to (Metric.rounded); null: exact, or not known (before schema 3). */
  { name: 'rounded', type: 'double' },
] as const satisfies readonly Column[];

/** Schema 1 -> 2: the branch and gate columns, the branch filled from each record's test row. */
export const UPGRADE_TO_2 = [
  `ALTER TABLE ${'disagg_history_metrics'} ADD COLUMN branch TEXT`,
  `ALTER TABLE ${'disagg_history_metrics'} ADD COLUMN gate BOOLEAN`,
  `UPDATE disagg_history_metrics SET branch = (SELECT t.git_branch FROM disagg_history_tests t WHERE t.run_id = disagg_history_metrics.run_id AND t.test_id = disagg_history_metrics.test_id)`,
  `UPDATE disagg_history_meta SET value = '2' WHERE key = 'schema_version'`,
];

/** Schema 2 -> 3: the rounded column (a tool's rounded print, metrics/resolution.ts). */
export const UPGRADE_TO_3 = [
  `ALTER TABLE ${'disagg_history_metrics'} ADD COLUMN rounded DOUBLE PRECISION`,
  `UPDATE disagg_history_meta SET value = '3' WHERE key = 'schema_version'`,
];

export const ALERTS_TABLE = 'disagg_history_alerts';

/**
 * One row per alert: a change the gate found in a series, open until the series comes back
 * (closed) or someone accepts the new level (acked). Its commit range is the last good run's
 * commit to the first bad run's.
 */
export const ALERT_COLUMNS = [
  { name: 'alert_id', type: 'text' },
  { name: 'series_id', type: 'bigint' },
  { name: 'test_id', type: 'text' },
  { name: 'metric', type: 'text' },
  /** JSON object, keys sorted. */
  { name: 'labels', type: 'text' },
  { name: 'unit', type: 'text' },
  { name: 'higher_is_better', type: 'boolean' },
  { name: 'gpu_type', type: 'text' },
  { name: 'branch', type: 'text' },
  /** open, closed (the series came back by itself), acked (someone accepted the new level). */
  { name: 'status', type: 'text' },
  /** The level and noise (a fraction of the level) before the change. */
  { name: 'level_before', type: 'double' },
  { name: 'scale_before', type: 'double' },
  /** The change when it was found: (value - level) / level, in the metric's own terms. */
  { name: 'change', type: 'double' },
  { name: 'p_value', type: 'double' },
  /** one run, two runs: how it was confirmed. */
  { name: 'confirmed_by', type: 'text' },
  { name: 'first_run_id', type: 'text' },
  { name: 'first_ts_ms', type: 'bigint' },
  { name: 'first_commit', type: 'text' },
  { name: 'last_good_run_id', type: 'text' },
  { name: 'last_good_commit', type: 'text' },
  /** The run whose judging opened it. */
  { name: 'opened_run_id', type: 'text' },
  /** The latest run that measured the series while it was open, its value, and how many runs running were back at the old level. */
  { name: 'last_run_id', type: 'text' },
  { name: 'last_value', type: 'double' },
  { name: 'back_runs', type: 'bigint' },
  { name: 'closed_run_id', type: 'text' },
  { name: 'closed_ts_ms', type: 'bigint' },
  { name: 'ack_reason', type: 'text' },
  { name: 'ack_by', type: 'text' },
  { name: 'ack_ms', type: 'bigint' },
] as const satisfies readonly Column[];

const SQL_TYPES: Record<Column['type'], string> = { text: 'TEXT', double: 'DOUBLE PRECISION', bigint: 'BIGINT', boolean: 'BOOLEAN' };
const columnsDdl = (columns: readonly Column[]) => columns.map((c) => `${c.name} ${SQL_TYPES[c.type]}`).join(', ');

export const CREATE_TABLES = [
  `CREATE TABLE IF NOT EXISTS ${META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${TESTS_TABLE} (${columnsDdl(TEST_COLUMNS)}, PRIMARY KEY (run_id, test_id))`,
  `CREATE TABLE IF NOT EXISTS ${METRICS_TABLE} (${columnsDdl(METRIC_COLUMNS)})`,
  `CREATE TABLE IF NOT EXISTS ${ALERTS_TABLE} (${columnsDdl(ALERT_COLUMNS)}, PRIMARY KEY (alert_id))`,
];

/** Schema 3 -> 4: the alerts table (alert-store.ts). */
export const UPGRADE_TO_4 = [CREATE_TABLES[3], `UPDATE disagg_history_meta SET value = '4' WHERE key = 'schema_version'`];

/** PostgreSQL only: DuckDB scans its columns faster than it would maintain an index on every append. */
export const POSTGRES_INDEXES = [
  `CREATE INDEX IF NOT EXISTS ${METRICS_TABLE}_series ON ${METRICS_TABLE} (series_id, ts_ms)`,
  `CREATE INDEX IF NOT EXISTS ${METRICS_TABLE}_test ON ${METRICS_TABLE} (test_id, metric)`,
  `CREATE INDEX IF NOT EXISTS ${METRICS_TABLE}_run ON ${METRICS_TABLE} (run_id)`,
];

/** The values being checked, one session's temporary table: the baseline query adds them to their days. */
export const NEW_POINTS_TABLE = 'disagg_history_new_points';
export const NEW_POINT_COLUMNS = [
  { name: 'series_id', type: 'bigint' },
  { name: 'ts_ms', type: 'bigint' },
  { name: 'value', type: 'double' },
] as const satisfies readonly Column[];
export const CREATE_NEW_POINTS = `CREATE TEMP TABLE IF NOT EXISTS ${NEW_POINTS_TABLE} (series_id BIGINT, ts_ms BIGINT, value DOUBLE PRECISION)`;

/** A run's verdicts being written back (an import judges the run it appended), one session's temporary table. */
export const NEW_VERDICTS_TABLE = 'disagg_history_new_verdicts';
export const NEW_VERDICT_COLUMNS = [
  { name: 'test_id', type: 'text' },
  { name: 'regression', type: 'text' },
] as const satisfies readonly Column[];
export const CREATE_NEW_VERDICTS = `CREATE TEMP TABLE IF NOT EXISTS ${NEW_VERDICTS_TABLE} (test_id TEXT, regression TEXT)`;
