// How many comparisons a run's false-alarm budget is spread over. Each gating series counts by the
// chance it has to alarm on noise at all, as a share of what a series without floors has (after
// Tarone 1990: a comparison that cannot reach significance costs the correction nothing).
//
// A series has two floors below which no worsening alerts, whatever its z: upstream's threshold
// (a figure whose noise is far below 5 % never crosses it on noise) and the print's step (a figure
// printed to a step coarser than its noise is judged in that step). Such a series spends a small
// part of its share q, so counting it as a whole one leaves the run's budget unspent and makes
// every other series' bounds stricter than DISAGG_GATE_ALPHA asks. In a nixl quick start two of 31
// gating figures are printed to 0.01 at a few hundredths: counted whole, they kept the run's false
// alarms near 4.5 % on a 5 % budget.
//
// The weights are normal tails at the rules' normal bounds; the bounds in turn depend on the
// family, so the family is found by iteration from the plain count.
import { ONE_RUN_SHARE, normalTail, ruleThresholds } from './thresholds.ts';

/** Where a gating series' floors put its bounds, in its own noise. */
export interface SeriesFloors {
  /** The scale it is judged in over its noise (1, or more where the print's step is coarser). */
  lift: number;
  /** The least worseness that can alert (the threshold and half the print's step), in its noise. */
  floor: number;
  /** The correlation of two runs' z through the level they share. */
  rho: number;
  /** Its test has wild single values: the two-run rule only. */
  heavy: boolean;
}

/**
 * The series' chance of a false alarm as a share of an unfloored series' (0 to 1), at a family
 * size: each rule's tail at the bound its floors lift it to, over its tail at the plain bound,
 * weighted by the rule's share of the budget.
 */
export function alarmWeight(series: SeriesFloors, alpha: number, family: number): number {
  const rules = ruleThresholds(alpha, family, series.rho, Infinity, series.heavy);
  // The two-run rule's mean z of two runs each `floor` worse: 2 floor / sqrt(2 + 2 rho).
  const meanFloor = (2 * series.floor) / Math.sqrt(2 + 2 * series.rho);
  const twoRun = normalTail(Math.max(rules.twoRun * series.lift, meanFloor)) / normalTail(rules.twoRun);
  if (series.heavy) return Math.min(1, twoRun);
  const oneRun = normalTail(Math.max(rules.oneRun * series.lift, series.floor)) / normalTail(rules.oneRun);
  return Math.min(1, ONE_RUN_SHARE * oneRun + (1 - ONE_RUN_SHARE) * twoRun);
}

/** Family sizes kept to hundredths, rounded up: a little stricter, and the thresholds' cache stays small. */
const upToHundredths = (x: number) => Math.ceil(x * 100 - 1e-9) / 100;

/** The family a run's false alarms are controlled over: the sum of its gating series' weights. */
export function effectiveFamily(members: readonly SeriesFloors[], alpha: number): number {
  const count = members.length;
  if (count === 0) return 0;
  const sumAt = (family: number) => members.reduce((sum, m) => sum + alarmWeight(m, alpha, family), 0);
  // The weights move little with the family: from the count the sums settle within a round or two.
  // Should they still move after a few, the larger of the last two is kept (the stricter).
  let family = count;
  let next = Math.max(1, upToHundredths(sumAt(family)));
  for (let round = 0; round < 5 && next !== family; round++) {
    family = next;
    next = Math.max(1, upToHundredths(sumAt(family)));
  }
  return Math.max(family, next);
}
