// results.json records (framework/results/json.ts) as the history's rows, and back. Pure.
import type { RecordRunContext, TestRecord } from '../results/json.ts';
import type { Metric } from '../metrics/metric.ts';
import { METRIC_COLUMNS, TEST_COLUMNS } from './schema.ts';
import { caseKey, labelsKey, seriesId } from './series-key.ts';
import type { SqlValue } from './sql-connection.ts';

type ColumnName<C extends readonly { name: string }[]> = C[number]['name'];
export type TestRow = Record<ColumnName<typeof TEST_COLUMNS>, SqlValue>;
export type MetricRow = Record<ColumnName<typeof METRIC_COLUMNS>, SqlValue>;

/** A record and the run it belongs to, ready to append. */
export interface HistoryEntry {
  record: TestRecord;
  run: RecordRunContext;
  /** 'run' for a run's own end, 'import <file>' for `history import`. */
  source: string;
}

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
const ms = (iso: string | undefined) => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : null;
};

export function testRow({ record, run, source }: HistoryEntry, appendedMs: number): TestRow {
  return {
    run_id: run.id,
    test_id: record.testId,
    run_kind: run.kind,
    run_label: run.label ?? null,
    git_commit: run.commit ?? null,
    git_branch: run.branch ?? null,
    ci: json(run.ci ?? {}),
    test_type: record.type,
    category: record.category,
    config_file: record.configPath,
    gpu_type: record.gpuType ?? null,
    identity: json(run.identity ?? {}),
    verdict: record.verdict,
    valid: isValid(record),
    job_id: record.jobId,
    scheduler_state: record.schedulerState ?? null,
    start_ms: ms(record.timing.start) ?? ms(record.timing.end) ?? appendedMs,
    end_ms: ms(record.timing.end) ?? appendedMs,
    host: record.host,
    failures: json(record.failures),
    regression: json(record.regression),
    source,
    appended_ms: appendedMs,
  };
}

/**
 * Upstream's b_is_valid: the measurement stands. A test that failed only because of a regression
 * against the history still measured something true (upstream keeps such entries in the history
 * it queries); one that failed its own checks did not.
 */
export function isValid(record: TestRecord): boolean {
  if (record.verdict === 'passed') return true;
  const findings = record.regression?.findings ?? [];
  const own = record.failures.filter((f) => !isRegressionFailure(f));
  return record.verdict === 'failed' && own.length === 0 && findings.some((f) => f.regression);
}

/** Failure messages written by the regression check start with this (see regression.ts). */
export const REGRESSION_FAILURE_PREFIX = 'regression against the history: ';
export const isRegressionFailure = (failure: string) => failure.startsWith(REGRESSION_FAILURE_PREFIX);

export function metricRows({ record, run }: HistoryEntry, appendedMs: number): MetricRow[] {
  const ts = ms(record.timing.end) ?? appendedMs;
  const valid = isValid(record);
  return record.metrics.map((m: Metric) => {
    const key = caseKey({ testId: record.testId, gpuType: record.gpuType, identity: run.identity, labels: m.labels });
    return {
      run_id: run.id,
      test_id: record.testId,
      case_key: key,
      series_id: seriesId(key, m.name),
      metric: m.name,
      labels: labelsKey(m.labels),
      value: m.value,
      unit: m.unit,
      higher_is_better: m.higherIsBetter ?? null,
      ts_ms: ts,
      post_merge: run.kind === 'post-merge',
      valid,
      threshold_post: run.thresholds?.[m.name]?.postMerge ?? null,
      threshold_pre: run.thresholds?.[m.name]?.preMerge ?? null,
    };
  });
}

export const rowValues = <R extends Record<string, SqlValue>>(row: R, columns: readonly { name: string }[]): SqlValue[] => columns.map((c) => row[c.name] ?? null);
