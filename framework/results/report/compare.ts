// Comparison of a run against a previous results.json: every metric present in both (same test id,
// name and labels), its relative change, and whether that change is a regression, i.e. worse by
// more than the threshold in the metric's higherIsBetter direction. Metrics that declare no
// direction are shown with their change but never judged. Pure.
import type { Metric } from '../../metrics/metric.ts';
import type { TestRecord, TestVerdict } from '../json.ts';
import { latestPerTest } from './load.ts';
import { metricKey } from './metric-key.ts';
import { InputError } from '../../../runners/common/errors.ts';

export const DEFAULT_REGRESSION_THRESHOLD = 0.05;

export type ChangeStatus = 'regression' | 'improvement' | 'within' | 'undirected';

export interface MetricComparison {
  testId: string;
  name: string;
  labels: Metric['labels'];
  unit: string;
  higherIsBetter?: boolean;
  baseline: number;
  current: number;
  /** (current - baseline) / |baseline|; null when the baseline is 0 (no relative change). */
  change: number | null;
  status: ChangeStatus;
}

export interface VerdictChange {
  testId: string;
  baseline: TestVerdict;
  current: TestVerdict;
}

export interface Comparison {
  threshold: number;
  metrics: MetricComparison[];
  regressions: number;
  improvements: number;
  /** Tests whose verdict differs from the baseline's (passed -> failed is the one to look at). */
  verdictChanges: VerdictChange[];
  onlyInCurrent: string[];
  onlyInBaseline: string[];
}

/** How one metric moved; exported for the unit tests of the rule. */
export function changeStatus(baseline: number, current: number, higherIsBetter: boolean | undefined, threshold: number): ChangeStatus {
  if (higherIsBetter === undefined) return 'undirected';
  if (baseline === current) return 'within';
  // Worse in the metric's direction, as a positive fraction of the baseline (Infinity from 0).
  const worse = (higherIsBetter ? baseline - current : current - baseline) / Math.abs(baseline);
  if (worse > threshold) return 'regression';
  if (-worse > threshold) return 'improvement';
  return 'within';
}

/** Compares the latest record of each test id in `current` with the baseline's. */
export function compareResults(current: TestRecord[], baseline: TestRecord[], threshold = DEFAULT_REGRESSION_THRESHOLD): Comparison {
  if (!(threshold >= 0)) throw new InputError(`regression threshold must be a fraction >= 0, got ${threshold}`);
  const now = latestPerTest(current);
  const before = latestPerTest(baseline);
  const metrics: MetricComparison[] = [];
  const verdictChanges: VerdictChange[] = [];
  for (const [testId, record] of now) {
    const old = before.get(testId);
    if (!old) continue;
    if (old.verdict !== record.verdict) verdictChanges.push({ testId, baseline: old.verdict, current: record.verdict });
    const oldValues = new Map(old.metrics.map((m) => [metricKey(m), m]));
    for (const m of record.metrics) {
      const o = oldValues.get(metricKey(m));
      if (!o) continue;
      const higherIsBetter = m.higherIsBetter ?? o.higherIsBetter;
      metrics.push({
        testId,
        name: m.name,
        labels: m.labels,
        unit: m.unit,
        higherIsBetter,
        baseline: o.value,
        current: m.value,
        change: o.value === 0 ? null : (m.value - o.value) / Math.abs(o.value),
        status: changeStatus(o.value, m.value, higherIsBetter, threshold),
      });
    }
  }
  return {
    threshold,
    metrics,
    regressions: metrics.filter((m) => m.status === 'regression').length,
    improvements: metrics.filter((m) => m.status === 'improvement').length,
    verdictChanges,
    onlyInCurrent: [...now.keys()].filter((id) => !before.has(id)),
    onlyInBaseline: [...before.keys()].filter((id) => !now.has(id)),
  };
}
