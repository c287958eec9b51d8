// The ways a test type picks its headline figures out of its extracted metrics (TestType.headline):
// by name, at the largest value of a label (a sweep's largest block), the peak of a series, or the
// first of several names a log may hold. Picks never invent a metric: each returns metrics it was
// given, so a headline figure is always one the results record under the same name and labels.
import type { Metric } from './metric.ts';

type Labels = Metric['labels'];

/** Every metric of that name whose labels include `where` (all of that name without it). */
export function named(metrics: readonly Metric[], name: string, where: Labels = {}): Metric[] {
  return metrics.filter((m) => m.name === name && Object.entries(where).every(([k, v]) => m.labels[k] === v));
}

/** The metrics of the first name in `names` that the test has any of. */
export function firstPresent(metrics: readonly Metric[], names: readonly string[], where: Labels = {}): Metric[] {
  for (const name of names) {
    const found = named(metrics, name, where);
    if (found.length > 0) return found;
  }
  return [];
}

/** Metrics grouped by every label but `label`, in first-seen order. */
function groupedWithout(metrics: readonly Metric[], label: string): Metric[][] {
  const groups = new Map<string, Metric[]>();
  for (const m of metrics) {
    const key = JSON.stringify(Object.entries(m.labels).filter(([k]) => k !== label).sort(([a], [b]) => a.localeCompare(b)));
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(m);
  }
  return [...groups.values()];
}

/**
 * Per group of the other labels, the metric of that name at the largest numeric value of `label`
 * (a sweep's bandwidth at its largest block, per operation and batch size).
 */
export function atLargest(metrics: readonly Metric[], name: string, label: string): Metric[] {
  const withLabel = named(metrics, name).filter((m) => Number.isFinite(Number(m.labels[label])));
  return groupedWithout(withLabel, label).map((group) => group.reduce((best, m) => (Number(m.labels[label]) > Number(best.labels[label]) ? m : best)));
}

/**
 * Per group of the other labels, the metric of that name with the best value across `label` (the
 * highest when higher is better, else the lowest): a sweep's peak bandwidth, whichever block it was at.
 */
export function peakAcross(metrics: readonly Metric[], name: string, label: string): Metric[] {
  const better = (a: Metric, b: Metric) => (a.higherIsBetter === false ? a.value < b.value : a.value > b.value);
  return groupedWithout(named(metrics, name), label).map((group) => group.reduce((best, m) => (better(m, best) ? m : best)));
}

/** The metrics in order, each once. */
export function distinct(...lists: Metric[][]): Metric[] {
  const out: Metric[] = [];
  for (const list of lists) for (const m of list) if (!out.includes(m)) out.push(m);
  return out;
}
