// results.json records (framework/results/json.ts) as the history's rows, and back. Pure.
import type { RecordRegression, RecordRunContext, TestRecord, TestVerdict } from '../results/json.ts';
import type { Metric } from '../metrics/metric.ts';
import type { METRIC_COLUMNS, TEST_COLUMNS } from './schema.ts';
import { caseKey, labelsKey, seriesId } from './series-key.ts';
import { gateKey, isGated } from './gate-metrics.ts';
import type { SqlValue } from './sql-connection.ts';
import { belowResolution } from '../metrics/resolution.ts';

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
      // a figure printed rounded to zero is kept, but never feeds a baseline or a trend
      valid: valid && !belowResolution(m),
      threshold_post: run.thresholds?.[m.name]?.postMerge ?? null,
      threshold_pre: run.thresholds?.[m.name]?.preMerge ?? null,
      branch: run.branch ?? null,
      gate: run.gate ? isGated(run.gate, m) : null,
      rounded: m.rounded ?? null,
    };
  });
}

export const rowValues = <R extends Record<string, SqlValue>>(row: R, columns: readonly { name: string }[]): SqlValue[] => columns.map((c) => row[c.name] ?? null);

/** Helpers for reading rows back (both backends return JSON columns as text, numbers as numbers or bigints). */
export const parseJson = <T>(text: unknown, fallback: T): T => {
  if (typeof text !== 'string' || text === '') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
};
export const num = (value: unknown) => Number(value);
export const optional = (value: unknown) => (value === null || value === undefined ? undefined : String(value));

const runKindOf = (kind: unknown): RecordRunContext['kind'] => (kind === 'pre-merge' || kind === 'local' ? kind : 'post-merge');

/** A test row and its metric rows back as the results.json record they were appended from. */
export function recordFromRows(t: Record<string, unknown>, ms: Record<string, unknown>[]): TestRecord {
  const thresholds: Record<string, { postMerge: number; preMerge: number }> = {};
  for (const m of ms) {
    if (m.threshold_post !== null && m.threshold_pre !== null) thresholds[String(m.metric)] = { postMerge: num(m.threshold_post), preMerge: num(m.threshold_pre) };
  }
  const gateKnown = ms.some((m) => m.gate !== null && m.gate !== undefined);
  const gate = gateKnown ? [...new Set(ms.filter((m) => m.gate === true).map((m) => gateKey({ name: String(m.metric), labels: parseJson(m.labels, {}) })))] : undefined;
  const start = num(t.start_d);
  const end = num(t.end_d);
  return {
    testId: String(t.test_id),
    type: String(t.test_type),
    category: String(t.category),
    configPath: String(t.config_file),
    jobId: optional(t.job_id) ?? null,
    schedulerState: optional(t.scheduler_state),
    verdict: String(t.verdict) as TestVerdict,
    failures: parseJson<string[]>(t.failures, []),
    metrics: ms.map((m) => ({
      name: String(m.metric),
      value: num(m.value),
      unit: String(m.unit ?? ''),
      ...(m.higher_is_better === null ? {} : { higherIsBetter: Boolean(m.higher_is_better) }),
      labels: parseJson(m.labels, {}),
      ...(m.rounded === null || m.rounded === undefined ? {} : { rounded: num(m.rounded) }),
    })),
    timing: { start: new Date(start).toISOString(), end: new Date(end).toISOString(), durationSec: (end - start) / 1000 },
    host: String(t.host ?? ''),
    gpuType: optional(t.gpu_type),
    run: {
      id: String(t.run_id),
      kind: runKindOf(t.run_kind),
      label: optional(t.run_label),
      commit: optional(t.git_commit),
      branch: optional(t.git_branch),
      ci: parseJson(t.ci, {}),
      identity: parseJson(t.identity, {}),
      ...(Object.keys(thresholds).length ? { thresholds } : {}),
      ...(gate ? { gate } : {}),
    },
    ...(t.regression ? { regression: parseJson<RecordRegression | undefined>(t.regression, undefined) } : {}),
  };
}
