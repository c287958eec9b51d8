// The statistics of a bisection: how far apart the two ends are, and whether a step measured the
// good level or the bad one, each with a significance that accounts for the noise being estimated.
//
// The noise is the pooled standard deviation of every group of repeats the bisection has (the good
// end's, the bad end's and each step's, each around its own mean: a change between groups is never
// noise), read with Student's t at its degrees of freedom. The ends are a regression when the bad
// mean is worse than the good one beyond the threshold and significantly so (one-sided, ENDS_ALPHA);
// there is nothing to search when the change is significantly smaller than the threshold (or
// better). A step is a two-level classification: bad when its mean lies significantly on the bad
// side of the midpoint between the two ends' means, good when significantly on the good side
// (one-sided, STEP_ALPHA, the standard error counting the step's repeats and both ends'); else more
// repeats are needed. Its truth sits near one end (half the change away from the midpoint), so the
// chance of a wrong side is far below STEP_ALPHA even though the step is looked at after each repeat.
import { studentTCritical } from './student-t.ts';

/** One-sided level of the ends' test: a noise-only pair of ends is called a regression at most this often. */
export const ENDS_ALPHA = 0.001;
/** The error a step's sequential test is built for (Wald's bounds: A = ln((1 - a) / a)). */
export const STEP_ALPHA = 0.001;

export const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

export interface Noise {
  /** The pooled standard deviation. */
  sd: number;
  /** Its degrees of freedom (0: no group has two values, the noise is unknown). */
  freedom: number;
}

/** The pooled sample standard deviation of groups around their own means; `floor` when the spread is below it (a rounded print). */
export function pooledNoise(groups: readonly (readonly number[])[], floor = 0): Noise {
  let squares = 0;
  let freedom = 0;
  for (const g of groups) {
    if (g.length < 2) continue;
    const m = mean(g);
    squares += g.reduce((a, v) => a + (v - m) ** 2, 0);
    freedom += g.length - 1;
  }
  return { sd: freedom > 0 ? Math.max(Math.sqrt(squares / freedom), floor) : 0, freedom };
}

/** The spread a print rounded to `step` hides: the standard deviation of a uniform error over the step. */
export const roundingFloor = (step: number | undefined) => (step ? step / Math.sqrt(12) : 0);

/** A t critical value; Infinity when the noise is unknown (nothing is significant). */
const critical = (alpha: number, noise: Noise) => (noise.freedom > 0 ? studentTCritical(alpha, noise.freedom) : Infinity);

export interface EndsVerdict {
  /** regression: search; none: nothing to search; open: more repeats of the ends would decide. */
  kind: 'regression' | 'none' | 'open';
  /** Change of the bad mean against the good one in percent, positive = better (as the gate prints it). */
  diffPercent: number;
  /** Half the one-sided confidence interval of the change, in percent (Infinity: the noise is unknown). */
  marginPercent: number;
  /** The bad end is significantly worse than the good one (threshold aside). */
  distinguishable: boolean;
  /** Why, in words. */
  why: string;
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}%`;

/**
 * Whether the bad end is a regression against the good one: `threshold` a fraction (0.05). A figure
 * printed rounded to `rounded` is judged as the gate judges it: a change that half the print's step
 * could undo is no regression.
 */
export function judgeEnds(good: readonly number[], bad: readonly number[], noise: Noise, higherIsBetter: boolean, threshold: number, rounded?: number): EndsVerdict {
  const level = mean(good);
  const scale = Math.abs(level) || 1;
  const worse = (higherIsBetter ? level - mean(bad) : mean(bad) - level) / scale;
  const margin = noise.freedom > 0 ? (critical(ENDS_ALPHA, noise) * noise.sd * Math.sqrt(1 / good.length + 1 / bad.length)) / scale : Infinity;
  const base = { diffPercent: -worse * 100, marginPercent: margin * 100, distinguishable: worse - margin > 0 };
  const change = `${pct(-worse * 100)} against good${Number.isFinite(margin) ? ` (±${(margin * 100).toFixed(2)}% at ${ENDS_ALPHA * 100}% one-sided)` : ', noise unknown'}`;
  // as the gate: beyond the threshold means strictly beyond (a hair of float error allowed)
  const undone = rounded === undefined ? worse : worse - rounded / 2 / scale;
  if (worse >= threshold && undone <= threshold + 1e-12) {
    return { kind: 'none', ...base, why: `bad is ${change}: within the print's rounding (printed to ${rounded}, the change may be ${pct(-undone * 100)}, not beyond the threshold)` };
  }
  if (worse - margin > 0 && worse >= threshold) return { kind: 'regression', ...base, why: `bad is ${change}, beyond the threshold ${(threshold * 100).toFixed(2)}%` };
  if (worse + margin < threshold) {
    return { kind: 'none', ...base, why: worse <= 0 ? `bad is ${change}: no worse than good` : `bad is ${change}: surely less than the threshold ${(threshold * 100).toFixed(2)}%` };
  }
  const what = worse - margin <= 0 ? 'not distinguishable from good' : `worse, but not surely beyond the threshold ${(threshold * 100).toFixed(2)}%`;
  return { kind: 'open', ...base, why: `bad is ${change}: ${what}` };
}

export interface StepVerdict {
  /** Undefined: not significant either way yet. */
  mark?: 'good' | 'bad';
  mean: number;
  /** Where the mean lies: 0 at the good mean, 1 at the bad mean. */
  position: number;
  /** ln of the likelihood ratio, bad against good (positive: bad is likelier). */
  logRatio: number;
  /** Repeats of this step that would make its current mean decide, when more of the step alone can (the ends' uncertainty allowing). */
  repeatsToDecide?: number;
}

/** The ln likelihood ratio bad : good that decides a step: a wrong verdict has odds of at most 1 : e^this. */
export const STEP_LOG_RATIO = Math.log((1 - STEP_ALPHA) / STEP_ALPHA);

/** ln of Student's t density of the mean `m` around `level`, with standard error `se` (constant terms dropped: only ratios are taken). */
const logDensity = (m: number, level: number, se: number, freedom: number) => -((freedom + 1) / 2) * Math.log1p(((m - level) / se) ** 2 / freedom) - Math.log(se);

function logRatioOf(m: number, n: number, good: readonly number[], bad: readonly number[], noise: Noise): number {
  if (noise.freedom === 0 || !(noise.sd > 0)) return 0;
  const seGood = noise.sd * Math.sqrt(1 / n + 1 / good.length);
  const seBad = noise.sd * Math.sqrt(1 / n + 1 / bad.length);
  return logDensity(m, mean(bad), seBad, noise.freedom) - logDensity(m, mean(good), seGood, noise.freedom);
}

/**
 * Whether `values` measured the good level or the bad one: a sequential likelihood-ratio test
 * (Wald's SPRT) between "its mean is the good end's" and "the bad end's", each end's mean known
 * only as well as its repeats tell it, the noise read with Student's t.
 */
export function classifyStep(values: readonly number[], good: readonly number[], bad: readonly number[], noise: Noise): StepVerdict {
  const [g, b, m] = [mean(good), mean(bad), mean(values)];
  const logRatio = logRatioOf(m, values.length, good, bad, noise);
  const verdict: StepVerdict = { mean: m, position: b !== g ? (m - g) / (b - g) : 0, logRatio };
  if (logRatio >= STEP_LOG_RATIO) return { ...verdict, mark: 'bad' };
  if (logRatio <= -STEP_LOG_RATIO) return { ...verdict, mark: 'good' };
  for (let n = values.length + 1; n <= values.length + 1000; n++) {
    if (Math.abs(logRatioOf(m, n, good, bad, noise)) >= STEP_LOG_RATIO) return { ...verdict, repeatsToDecide: n };
  }
  return verdict;
}
