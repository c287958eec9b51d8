// Which metrics of a record can fail the regression gate. Upstream's perf-sanity pipeline gates a
// few metrics (regression_metrics: its throughput figures) and only shows the others against their
// baselines; here each test type names its headline metrics (TestType.headline, the digest's
// figures), DISAGG_GATE_METRICS (a profile sets it) widens or narrows the set, and a config's
// `benchmark.regression.<METRIC>.gate` has the last word for its own test. The answer is kept with
// the record (run.gate) and in the history, so `history regressions` gates without the config.
import type { Metric } from '../metrics/metric.ts';
import { metricThresholds } from '../metrics/regression-thresholds.ts';

/**
 * The names of the gating metrics among `metrics` (those with a direction).
 * `setting`: DISAGG_GATE_METRICS entries (`headline`, `all`, NAME, -NAME); `headline`: the type's.
 */
export function gatedMetrics(metrics: readonly Metric[], headline: readonly string[], setting: readonly string[], configRaw?: unknown): string[] {
  const directed = metrics.filter((m) => m.higherIsBetter !== undefined).map((m) => m.name);
  const gated = new Set<string>();
  for (const entry of setting) {
    if (entry === 'headline') headline.forEach((n) => gated.add(n));
    else if (entry === 'all') directed.forEach((n) => gated.add(n));
    else if (!entry.startsWith('-')) gated.add(entry);
  }
  for (const entry of setting) if (entry.startsWith('-')) gated.delete(entry.slice(1));
  for (const name of directed) {
    const own = metricThresholds(configRaw, name).gate;
    if (own === true) gated.add(name);
    if (own === false) gated.delete(name);
  }
  return [...new Set(directed)].filter((n) => gated.has(n));
}
