// Which values of a record can fail the regression gate. Upstream's perf-sanity pipeline gates a
// few metrics (regression_metrics: its throughput figures) and only shows the others against their
// baselines; here each test type names its headline figures (TestType.headline, the digest's
// figures: a metric at the label sets that matter, e.g. a sweep's bandwidth at its largest block),
// DISAGG_GATE_METRICS (a profile sets it) widens or narrows the set, and a config's
// `benchmark.regression.<METRIC>.gate` has the last word for its own test. The answer is kept with
// the record (run.gate) and in the history, so `history regressions` gates without the config.
//
// An entry is a metric name (every label set of it gates: `all`, an opted-in name, a config's
// `gate: true`, and records written before label sets were kept) or a name with one label set,
// `NAME{"label":value,...}` (a headline figure).
import type { Metric } from '../metrics/metric.ts';
import { metricThresholds } from '../metrics/regression-thresholds.ts';
import { labelsKey } from './series-key.ts';

/** The gate entry of one metric at its label set. */
export const gateKey = (metric: Pick<Metric, 'name' | 'labels'>) => `${metric.name}${labelsKey(metric.labels)}`;

/** Whether a gate list gates this metric at its label set. */
export function isGated(gate: readonly string[] | ReadonlySet<string>, metric: Pick<Metric, 'name' | 'labels'>): boolean {
  const has = (k: string) => (gate instanceof Set ? gate.has(k) : (gate as readonly string[]).includes(k));
  return has(metric.name) || has(gateKey(metric));
}

/**
 * The gate entries of a record's metrics (those with a direction).
 * `setting`: DISAGG_GATE_METRICS entries (`headline`, `all`, NAME, -NAME); `headline`: the type's figures.
 */
export function gatedMetrics(metrics: readonly Metric[], headline: readonly Metric[], setting: readonly string[], configRaw?: unknown): string[] {
  const directed = metrics.filter((m) => m.higherIsBetter !== undefined);
  const names = new Set<string>();
  const keys = new Set<string>();
  for (const entry of setting) {
    if (entry === 'headline') for (const m of headline) if (m.higherIsBetter !== undefined) keys.add(gateKey(m));
    if (entry === 'all') for (const m of directed) names.add(m.name);
    else if (entry !== 'headline' && !entry.startsWith('-')) names.add(entry);
  }
  const dropped = new Set(setting.filter((e) => e.startsWith('-')).map((e) => e.slice(1)));
  for (const name of new Set(directed.map((m) => m.name))) {
    const own = metricThresholds(configRaw, name).gate;
    if (own === true) names.add(name);
    if (own === false) dropped.add(name);
  }
  const present = new Set(directed.map((m) => m.name));
  const out = [...names].filter((n) => present.has(n) && !dropped.has(n));
  for (const key of keys) {
    const m = directed.find((d) => gateKey(d) === key);
    if (m && !names.has(m.name) && !dropped.has(m.name)) out.push(key);
  }
  return out;
}
