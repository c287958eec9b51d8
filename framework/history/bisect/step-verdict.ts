// Whether one step of a bisection measured the good state or the bad one, by the regression gate's
// own rule (gate.ts judge): the step's mean is bad when it is worse than the good values' mean
// beyond the threshold AND by more than k standard deviations of the run-to-run noise. The gate
// reads its noise from the dispersion of a series' daily means; a bisection has no series, so its
// noise is the pooled standard deviation of the repeats it has: the good values, the bad values
// and the step's own, each around its own mean (a slowdown between good and bad does not count as
// noise). With no repeats anywhere the noise is unknown and the threshold alone decides, as the
// gate with DISAGG_GATE_NOISE_K=0. A figure printed rounded is judged as the gate judges it: a change
// that half its step could undo is not bad.
import { judge, type SeriesStats } from '../gate.ts';
import { diffPercent } from '../regression.ts';

export interface StepRule {
  /** Fraction (0.05). */
  threshold: number;
  /** Standard deviations beyond the threshold (DISAGG_GATE_NOISE_K). */
  noiseK: number;
  /** The step the figure was printed rounded to (Metric.rounded): a change the rounding explains is not bad. */
  rounded?: number;
}

export interface StepVerdict {
  bad: boolean;
  mean: number;
  /** Change against the good mean in percent, positive = better (upstream's _calculate_diff). */
  diffPercent: number;
  /** Why a change beyond the threshold is not bad (noise), when it is not. */
  note?: string;
}

export const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** The pooled sample standard deviation of groups around their own means; undefined when no group has two values. */
export function pooledSd(groups: readonly (readonly number[])[]): number | undefined {
  let squares = 0;
  let freedom = 0;
  for (const g of groups) {
    if (g.length < 2) continue;
    const m = mean(g);
    squares += g.reduce((a, v) => a + (v - m) ** 2, 0);
    freedom += g.length - 1;
  }
  return freedom > 0 ? Math.sqrt(squares / freedom) : undefined;
}

/** The verdict on `values` against the good values, with the noise of good, bad and these values' repeats. */
export function judgeStep(values: readonly number[], good: readonly number[], bad: readonly number[], higherIsBetter: boolean, rule: StepRule): StepVerdict {
  const level = mean(good);
  const sd = pooledSd([good, bad, values]);
  const stats: SeriesStats = { seriesId: 0, p95: level, p5: level, median: level, sd: sd ?? 0, days: good.length, historyValues: good.length, lastDay: level };
  const value = mean(values);
  const verdict = judge({ value, higherIsBetter, stats, threshold: rule.threshold, rule: { minDays: 0, noiseK: sd === undefined ? 0 : rule.noiseK }, gated: true, runKind: 'post-merge', ...(rule.rounded !== undefined && { rounded: rule.rounded }) });
  return { bad: verdict?.regression ?? false, mean: value, diffPercent: diffPercent(value, level, higherIsBetter), ...(verdict?.note ? { note: verdict.note } : {}) };
}
