// The regression gate's verdict on one value against its series' history: upstream's threshold
// rule (perf_regression_utils.py prepare_regressive_test_cases: beyond baseline * (1 -/+ threshold))
// made noise-aware, and limited to the metrics that gate.
//
// Upstream's baseline is a high percentile (P95 of the smoothed daily means for a higher-is-better
// metric), so an unchanged value sits below it by about two standard deviations of the daily noise
// and a 5 % threshold is crossed by one run in four or five at 3 % run-to-run noise (issue figures,
// and bench/gate-simulation.ts). The gate therefore also asks that the value be k standard
// deviations of the series' daily means worse than its typical level, the median of those means
// (robust: a past outlier day does not move it).
//
// The dispersion is the sample standard deviation of the daily means. A robust one (1.4826 x the
// median absolute deviation) was the first choice, but with 7 days of history its own sampling
// spread is about 1.6 times wider, and no k met both goals with it (bench/gate-simulation.ts, 3 %
// noise, 7 days: k = 3 gives 3.3 % false alarms per metric and catches 92 % of 15 % drops; k = 2.5
// gives 4.8 % and 97 %). A past outlier day inflates the standard deviation: that makes the gate
// slower to fire, never noisier. k = 2.75 gives 2 % false alarms per metric with 7 days (two
// headline metrics: 4 % of runs) and catches 97 % of 15 % drops, 71 % of 10 % drops.
//
// A series needs `minDays` days of history before it gates at all: with fewer, the dispersion is
// not known and the value is shown, never a regression.
import type { RunKind } from '../settings.ts';

/** What the store reads for one series (store.ts baselines; baseline.ts seriesBaseline is its JS twin). */
export interface SeriesStats {
  seriesId: number;
  /** P95 of the smoothed daily means: the baseline of a higher-is-better metric (upstream's). */
  p95: number;
  /** P5: the baseline of a lower-is-better metric. */
  p5: number;
  /** Median of the daily means: the series' typical level. */
  median: number;
  /** Sample standard deviation of the daily means (0 with one day). */
  sd: number;
  /** Days with values in the history (the run being judged not counted). */
  days: number;
  /** Values in the history: 0 = nothing to compare with. */
  historyValues: number;
  /** The mean of the latest day of the history: the baseline branch's latest state. */
  lastDay: number;
}

export interface GateRule {
  /** Days of history before a series gates. */
  minDays: number;
  /** Standard deviations a change must exceed besides the threshold (0: the threshold alone, as upstream). */
  noiseK: number;
}

export interface GateInput {
  value: number;
  higherIsBetter: boolean;
  stats: SeriesStats;
  /** Fraction (0.05). */
  threshold: number;
  rule: GateRule;
  /** The metric can fail the gate (headline, or opted in). */
  gated: boolean;
  runKind: RunKind;
  /**
   * The step the value was printed rounded to (Metric.rounded): the truth lies within half a step,
   * so a breach that half a step in the better direction undoes is no regression.
   */
  rounded?: number;
}

export interface GateVerdict {
  baseline: number;
  /** Beyond baseline * (1 -/+ threshold): upstream's regression. */
  breach: boolean;
  regression: boolean;
  note?: string;
}

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

/** Undefined when the series has no usable baseline (no history, or a baseline <= 0: upstream skips it). */
export function judge(input: GateInput): GateVerdict | undefined {
  const { value, higherIsBetter: up, stats, threshold, rule } = input;
  if (stats.historyValues === 0) return undefined;
  const baseline = up ? stats.p95 : stats.p5;
  if (!(baseline > 0)) return undefined;
  const beyond = (v: number) => (up ? v < baseline * (1 - threshold) : v > baseline * (1 + threshold));
  const breach = beyond(value);
  if (!breach) return { baseline, breach, regression: false };
  const best = input.rounded === undefined ? value : value + (up ? input.rounded / 2 : -input.rounded / 2);
  if (!beyond(best)) return { baseline, breach, regression: false, note: `within the print's rounding: printed to ${input.rounded}, the value may be ${Number(best.toPrecision(6))}, not beyond the threshold` };
  if (stats.days < rule.minDays) return { baseline, breach, regression: false, note: `${stats.days} of ${rule.minDays} day(s) of history: not gated yet` };
  const sigma = stats.sd;
  const worse = up ? stats.median - value : value - stats.median;
  if (!(worse > rule.noiseK * sigma)) {
    const scale = stats.median !== 0 ? Math.abs(stats.median) : 1;
    return { baseline, breach, regression: false, note: `within the noise: ${pct(worse / scale)} worse than the median, under ${rule.noiseK} x its sd (${pct(sigma / scale)})` };
  }
  // Newest upstream: a pre-merge run does not fail on a regression its baseline branch already has.
  // A local run is judged as a post-merge run of its own branch: no exemption.
  if (input.runKind === 'pre-merge' && beyond(stats.lastDay)) {
    return { baseline, breach, regression: false, note: `the baseline branch's latest day (${stats.lastDay.toFixed(4)}) is beyond the threshold too: not this change's` };
  }
  if (!input.gated) return { baseline, breach, regression: false, note: 'not a gating metric (headline metrics gate; a config or DISAGG_GATE_METRICS opts others in)' };
  return { baseline, breach, regression: true };
}
