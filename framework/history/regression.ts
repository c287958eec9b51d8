// A record checked against its history (perf_regression_utils.py prepare_regressive_test_cases):
// per metric with a direction, the baseline of store.ts baselines (baseline.ts: upstream's
// algorithm); its threshold from the config, else DISAGG_REGRESSION_THRESHOLD, else 5 % post-merge
// / 10 % pre-merge; a regression when the value breaches baseline * (1 -/+ threshold). As upstream:
// a series with no history is not checked, a baseline <= 0 is skipped, and the change is
// _calculate_diff's percent (positive = better). The message names test, metric, value, baseline,
// threshold and change, in upstream's words (`value=... baseline=... threshold=5.00% diff=-12.34%`).
import type { RegressionFinding, TestRecord } from '../results/json.ts';
import { metricThresholds } from '../metrics/regression-thresholds.ts';
import type { RunKind } from '../settings.ts';
import { REGRESSION_FAILURE_PREFIX } from './rows.ts';
import { casePrefix, labelsKey, seriesId } from './series-key.ts';
import type { NewPoint, SeriesBaseline } from './store.ts';

export interface CheckInput {
  record: TestRecord;
  /** Baselines by series id (store.baselines with this record's newPoints). */
  baselines: Map<number, SeriesBaseline>;
  runKind: RunKind;
  /** The config's benchmark.regression (raw, schema-checked). */
  thresholds?: unknown;
  globalThresholdPercent?: number;
  identity?: Record<string, string | number>;
}

export interface CheckOutcome {
  findings: RegressionFinding[];
  /** Why nothing was compared, when nothing was. */
  skipped?: string;
}

/** _calculate_diff: percent, positive when the new value is better. */
export function diffPercent(value: number, baseline: number, higherIsBetter: boolean): number {
  if (baseline === 0) return 0;
  return ((higherIsBetter ? value - baseline : baseline - value) / baseline) * 100;
}

/** The metrics of a record that are checked: a direction, and no `check: false` in its config. */
function checkedMetrics(record: TestRecord, thresholds: unknown, globalPercent?: number) {
  return record.metrics.flatMap((metric) => {
    if (metric.higherIsBetter === undefined) return [];
    const t = metricThresholds(thresholds, metric.name, globalPercent);
    return t.check ? [{ metric, higherIsBetter: metric.higherIsBetter, thresholds: t }] : [];
  });
}

// Series ids of a record's metrics, computed once per record and identity (a run's check asks
// for each twice: its new points, then its findings).
const idCache = new WeakMap<TestRecord, { identity: CheckInput['identity']; prefix: string; ids: Map<TestRecord['metrics'][number], number> }>();

function idOf(record: TestRecord, identity: CheckInput['identity'], metric: TestRecord['metrics'][number]): number {
  let cached = idCache.get(record);
  if (!cached || cached.identity !== identity) {
    cached = { identity, prefix: casePrefix(record.testId, record.gpuType, identity), ids: new Map() };
    idCache.set(record, cached);
  }
  let id = cached.ids.get(metric);
  if (id === undefined) cached.ids.set(metric, (id = seriesId(`${cached.prefix}${labelsKey(metric.labels)}]`, metric.name)));
  return id;
}

/** The values of a record that the baseline query adds to their days (upstream's new_data). */
export function newPoints(record: TestRecord, input: Pick<CheckInput, 'thresholds' | 'globalThresholdPercent' | 'identity'>): NewPoint[] {
  const tsMs = Date.parse(record.timing.end);
  return checkedMetrics(record, input.thresholds, input.globalThresholdPercent).map(({ metric }) => ({ seriesId: idOf(record, input.identity, metric), tsMs, value: metric.value }));
}

export function checkRecord(input: CheckInput): CheckOutcome {
  const { record } = input;
  const checked = checkedMetrics(record, input.thresholds, input.globalThresholdPercent);
  const findings: RegressionFinding[] = [];
  for (const { metric, higherIsBetter, thresholds } of checked) {
    const series = input.baselines.get(idOf(record, input.identity, metric));
    if (!series || series.historyValues === 0) continue; // upstream: no history for this case, no check
    const baseline = higherIsBetter ? series.p95 : series.p5;
    if (!(baseline > 0)) continue;
    const threshold = input.runKind === 'post-merge' ? thresholds.postMerge : thresholds.preMerge;
    const regression = higherIsBetter ? metric.value < baseline * (1 - threshold) : metric.value > baseline * (1 + threshold);
    findings.push({
      metric: metric.name,
      labels: metric.labels,
      unit: metric.unit,
      value: metric.value,
      baseline,
      threshold,
      diffPercent: diffPercent(metric.value, baseline, higherIsBetter),
      regression,
      days: series.days,
    });
  }
  if (findings.length > 0) return { findings };
  return { findings, skipped: checked.length === 0 ? 'no metric with a direction to check' : 'no earlier post-merge history of this test in the last 90 days' };
}

const labelText = (labels: RegressionFinding['labels']) => {
  const entries = Object.entries(labels);
  return entries.length ? `[${entries.map(([k, v]) => `${k}=${v}`).join(',')}]` : '';
};

/** One finding in upstream's words. */
export function describeFinding(testId: string, f: RegressionFinding): string {
  return `${testId} ${f.metric}${labelText(f.labels)}: value=${f.value.toFixed(4)} baseline=${f.baseline.toFixed(4)} threshold=${(f.threshold * 100).toFixed(2)}% diff=${f.diffPercent >= 0 ? '+' : ''}${f.diffPercent.toFixed(2)}% (${f.unit}, ${f.days} day(s) of history)`;
}

/** The failure (or warning) line of each regression. */
export function regressionMessages(testId: string, findings: RegressionFinding[]): string[] {
  return findings.filter((f) => f.regression).map((f) => `${REGRESSION_FAILURE_PREFIX}${describeFinding(testId, f)}`);
}
