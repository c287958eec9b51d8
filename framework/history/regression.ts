// A record checked against its history (perf_regression_utils.py prepare_regressive_test_cases):
// per metric with a direction, the baseline of baseline.ts; its threshold from the config, else
// DISAGG_REGRESSION_THRESHOLD, else 5 % post-merge / 10 % pre-merge; a regression when the value
// breaches baseline * (1 -/+ threshold). As upstream: a test case with no history at all is not
// checked, a baseline <= 0 is skipped, and the change is _calculate_diff's percent (positive =
// better). The message names test, metric, value, baseline, threshold and change, in upstream's
// words (`value=... baseline=... threshold=5.00% diff=-12.34%`).
import type { RegressionFinding, TestRecord } from '../results/json.ts';
import { metricThresholds } from '../metrics/regression-thresholds.ts';
import type { RunKind } from '../settings.ts';
import { baselineOf, dailyMeans, dayOf } from './baseline.ts';
import { REGRESSION_FAILURE_PREFIX } from './rows.ts';
import { caseKey, seriesKey } from './series-key.ts';
import type { DailySeries } from './store.ts';

export interface CheckInput {
  record: TestRecord;
  /** The history of the record's test (dailySeries), this record's own run excluded. */
  history: DailySeries[];
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

export function checkRecord(input: CheckInput): CheckOutcome {
  const { record } = input;
  const bySeries = new Map(input.history.map((s) => [seriesKey(s.caseKey, s.metric), s]));
  const casesWithHistory = new Set(input.history.map((s) => s.caseKey));
  const day = dayOf(Date.parse(record.timing.end));
  const findings: RegressionFinding[] = [];
  let directed = 0;
  for (const metric of record.metrics) {
    if (metric.higherIsBetter === undefined) continue;
    const thresholds = metricThresholds(input.thresholds, metric.name, input.globalThresholdPercent);
    if (!thresholds.check) continue;
    directed++;
    const key = caseKey({ testId: record.testId, gpuType: record.gpuType, identity: input.identity, labels: metric.labels });
    if (!casesWithHistory.has(key)) continue; // upstream: no latest history for this case, no check
    const daily = dailyMeans(bySeries.get(seriesKey(key, metric.name)), [{ day, value: metric.value }]);
    const baseline = baselineOf(daily, metric.higherIsBetter);
    if (baseline === undefined || !(baseline > 0)) continue;
    const threshold = input.runKind === 'post-merge' ? thresholds.postMerge : thresholds.preMerge;
    const regression = metric.higherIsBetter ? metric.value < baseline * (1 - threshold) : metric.value > baseline * (1 + threshold);
    findings.push({
      metric: metric.name,
      labels: metric.labels,
      unit: metric.unit,
      value: metric.value,
      baseline,
      threshold,
      diffPercent: diffPercent(metric.value, baseline, metric.higherIsBetter),
      regression,
      days: daily.length,
    });
  }
  if (findings.length > 0) return { findings };
  return { findings, skipped: directed === 0 ? 'no metric with a direction to check' : 'no earlier post-merge history of this test in the last 90 days' };
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
