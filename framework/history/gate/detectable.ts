// The smallest change the gate catches, per series: what a quiet verdict rules out. A green run
// says "no change of this size or more", and a team can see which figures the gate is blind to
// (too noisy, too few runs, too many gating figures for the run's false-alarm budget) before a
// regression slips through them.
//
// A lasting worsening d (a fraction of the level) moves a run's relative value by d and scales its
// own noise with the level (the gate's noise is relative): a figure where higher is better keeps
// (1 - d) of it, one where lower is better (1 + d). The level's error, shared by the runs judged
// against it, does not scale. The size is the smallest d caught with probability POWER:
//  - on its first run: that run's worseness beyond both the one-run bound (c1 noise) and the
//    threshold (the same variable, so the larger of the two decides);
//  - by its second run: the smaller of that and the two-run rule's (their mean beyond c2 and the
//    threshold, each run beyond its own bound). Either run crossing the one-run bound also alerts,
//    so the chance at that size is at least about POWER.
// Normal approximations throughout; bench/gate-simulation.ts checks the sizes against the gate's
// own code.
import { normalQuantile } from './robust.ts';
import type { RuleThresholds } from './thresholds.ts';

/** The chance the stated sizes are caught with. */
export const DETECTION_POWER = 0.95;

/** The smallest worsening (a fraction of the level) caught with DETECTION_POWER; Infinity: none is. */
export interface DetectableChange {
  oneRun: number;
  byTwoRuns: number;
}

export interface DetectableInput {
  rules: RuleThresholds;
  /** The series' noise, a fraction of its level (what z is measured in). */
  scale: number;
  /** Upstream's threshold fraction: smaller changes never alert. */
  threshold: number;
  /** The correlation of two runs' z through the level they share. */
  rho: number;
  higherIsBetter: boolean;
  /** The test has wild single values: no one-run rule. */
  heavy: boolean;
}

/** The largest worsening stated where lower is better (a tenfold slowdown); where higher is better, the whole level. */
const MOST_WORSE = 10;

/**
 * Smallest d with P(d - noise(d) N >= bound) >= power, where noise(d) = sd sqrt(k(d)^2 + share)
 * (k = 1 - d where higher is better, 1 + d where lower is): d - bound = quantile noise(d), squared,
 * is a quadratic in d, and the size is its larger root. Infinity where no worsening in range gets there.
 */
function sizeBeyond(bound: number, sd: number, share: number, higherIsBetter: boolean, quantile: number): number {
  const a = (quantile * sd) ** 2;
  const sign = higherIsBetter ? -1 : 1;
  // (1 - a) d^2 - 2 (bound + a sign) d + bound^2 - a (1 + share) = 0
  const half = bound + a * sign;
  const discriminant = half * half - (1 - a) * (bound * bound - a * (1 + share));
  if (!(a < 1) || discriminant < 0) return Infinity;
  const d = (half + Math.sqrt(discriminant)) / (1 - a);
  return d > 0 && d < (higherIsBetter ? 1 : MOST_WORSE) ? d : Infinity;
}

export function detectableChange(input: DetectableInput): DetectableChange {
  const { rules, scale, threshold, rho, higherIsBetter, heavy } = input;
  if (!(scale > 0) || !Number.isFinite(scale)) return { oneRun: Infinity, byTwoRuns: Infinity };
  const q = normalQuantile(DETECTION_POWER);
  // scale is one run's noise around a level of the others: the run's own (sd) and the level's (share of it).
  const share = rho / (1 - rho);
  const sd = scale / Math.sqrt(1 + share);
  const oneRun = heavy ? Infinity : sizeBeyond(Math.max(threshold, rules.oneRun * scale), sd, share, higherIsBetter, q);
  // The two runs' mean worseness: the rule's bound c2 on their mean z is c2 sqrt(2 + 2 rho) / 2
  // noise; its own noise is sd sqrt(k^2 / 2 + share), i.e. (sd / sqrt 2) sqrt(k^2 + 2 share).
  const twoRunMean = sizeBeyond(Math.max(threshold, (rules.twoRun * scale * Math.sqrt(2 + 2 * rho)) / 2), sd / Math.SQRT2, 2 * share, higherIsBetter, q);
  // Each run beyond its own bound, both at once: each with the square root of the power.
  const each = sizeBeyond(rules.each * scale, sd, share, higherIsBetter, normalQuantile(Math.sqrt(DETECTION_POWER)));
  return { oneRun, byTwoRuns: Math.min(oneRun, Math.max(twoRunMean, each)) };
}
