// The gate's two rules and the share of the run's false-alarm budget each spends. The budget
// (DISAGG_GATE_ALPHA: the share of unchanged runs allowed to raise a new alert) is split over the
// run's G gating series by Šidák (exact for independent series, where Bonferroni spends less than
// it may), and each series' share q between the rules so that together they spend exactly q:
//  - one run: z >= c1, with a fixed share of q;
//  - two runs: both worse by `each` or more and their mean z >= c2, where c2 is set by the exact
//    probability of that event without the first (the two z are bivariate normal, correlated through
//    the level they share). The two rules overlap (a run far enough for one is often far enough for
//    both): a sum of their shares (Bonferroni between the rules) left part of q unspent and the
//    two-run rule stricter than it needed to be.
// The budget counts runs that raise a new alert. Where the previous run was judged by the same
// one-run rule against the same level, a previous z beyond c1 raised the alert then, and this run
// only shows it: such pairs are not this run's false alarms, so c2 is set on the pairs whose
// previous run stayed below c1 (a nightly stream at 31 gating figures: c2 3.01 -> 2.98).
// The thresholds are found in the normal's terms, then read as Student t quantiles at the same tail
// probability where the noise rests on few degrees of freedom.
import { normalQuantile, tQuantile } from './robust.ts';

/**
 * The one-run rule's share of a series' budget. The two-run rule catches the changes too small for
 * one run (a 10 % step at 3 % noise is 3.2 noise in one run, 4.4 over two), so it gets the larger
 * share; the one-run rule keeps enough for a 15 % step (4.8 noise) on its first run.
 */
export const ONE_RUN_SHARE = 0.3;

/** A series' share of the run's alpha: 1 - (1 - alpha)^(1/G) (Šidák). */
export const seriesAlpha = (alpha: number, family: number) => -Math.expm1(Math.log1p(-alpha) / Math.max(1, family));

/** The standard normal's upper tail P(Z >= z) (erfc by Numerical Recipes' Chebyshev fit, relative error < 1.2e-7). */
export function normalTail(z: number): number {
  const x = z / Math.SQRT2;
  const ax = Math.abs(x);
  const t = 1 / (1 + 0.5 * ax);
  const erfc =
    t *
    Math.exp(-ax * ax - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0 ? erfc / 2 : 1 - erfc / 2;
}

const density = (z: number) => Math.exp(-z * z / 2) / Math.sqrt(2 * Math.PI);

/**
 * P(each <= zNow < c1, each <= zPrev < prevBelow, (zPrev + zNow) / sqrt(2 + 2 rho) >= c2) for
 * standard normal zPrev, zNow with correlation rho: the two-run rule's false alarms the one-run
 * rule does not already raise (on this run, and with prevBelow = c1 on the previous one).
 * Simpson's rule over zNow (zPrev given zNow is normal: rho zNow, 1 - rho^2).
 */
export function twoRunOnlyTail(c1: number, c2: number, each: number, rho: number, prevBelow = Infinity): number {
  const top = Math.min(c1, 12);
  if (!(top > each)) return 0;
  const sum = c2 * Math.sqrt(2 + 2 * rho);
  const sd = Math.sqrt(1 - rho * rho);
  const f = (x: number) => {
    const from = (Math.max(each, sum - x) - rho * x) / sd;
    const below = Number.isFinite(prevBelow) ? normalTail((prevBelow - rho * x) / sd) : 0;
    return density(x) * Math.max(0, normalTail(from) - below);
  };
  const steps = 400;
  const h = (top - each) / steps;
  let acc = f(each) + f(top);
  for (let k = 1; k < steps; k++) acc += (k % 2 ? 4 : 2) * f(each + k * h);
  return (acc * h) / 3;
}

/** The rules' thresholds for one series, in its noise (z), and the tail probability each stands for. */
export interface RuleThresholds {
  oneRun: number;
  twoRun: number;
  /** Each of the two runs must be at least this worse. */
  each: number;
  /** The two-run mean's tail probability at its threshold (what a p-value of the rule is scaled by). */
  twoRunTail: number;
}

/** Computed thresholds by their inputs (a run asks for the same few by the ten thousand). */
const cache = new Map<number, Map<string, Map<number, Map<number, RuleThresholds>>>>();
const cached = <K, V>(map: Map<K, V>, key: K, make: () => V) => {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
};

/**
 * The thresholds of a series: the run's alpha, its family size G, the correlation rho of the two
 * runs' z (their shared level), the noise's degrees of freedom, whether its test has wild single
 * values (then no one-run rule: each of the two runs must be beyond a threshold of its own, the
 * square root of the two-run share, so one outlier never alerts by itself), and whether the
 * previous run was judged by the one-run rule against the same level (its alerts then are its own,
 * not this run's: see the head of this file).
 */
let cachedCount = 0;

export function ruleThresholds(alpha: number, family: number, rho: number, df: number, heavy: boolean, previousJudged = false): RuleThresholds {
  // a long process (a simulation) meets endless degrees of freedom: start over now and then
  if (cachedCount > 10_000) {
    cache.clear();
    cachedCount = 0;
  }
  const key = `${family}${heavy ? ' heavy' : previousJudged ? ' after a judged run' : ''}`;
  const byRho = cached(cached(cache, alpha, () => new Map()), key, () => new Map());
  return cached(cached(byRho, rho, () => new Map()), df, () => (cachedCount++, computeThresholds(alpha, family, rho, df, heavy, previousJudged && !heavy)));
}

function computeThresholds(alpha: number, family: number, rho: number, df: number, heavy: boolean, previousJudged: boolean): RuleThresholds {
  const q = seriesAlpha(alpha, family);
  const oneRunZ = heavy ? Infinity : normalQuantile(1 - ONE_RUN_SHARE * q);
  const twoRunShare = (1 - ONE_RUN_SHARE) * q;
  const eachZ = heavy ? normalQuantile(1 - Math.sqrt(twoRunShare)) : 0.5;
  // c2 by bisection: the tail falls as c2 rises.
  let lo = 0;
  let hi = 12;
  for (let k = 0; k < 60; k++) {
    const mid = (lo + hi) / 2;
    if (twoRunOnlyTail(oneRunZ, mid, eachZ, rho, previousJudged ? oneRunZ : Infinity) > twoRunShare) lo = mid;
    else hi = mid;
  }
  const twoRunZ = hi;
  const asT = (z: number) => (Number.isFinite(z) ? tQuantile(1 - normalTail(z), df) : z);
  return { oneRun: asT(oneRunZ), twoRun: asT(twoRunZ), each: heavy ? asT(eachZ) : eachZ, twoRunTail: normalTail(twoRunZ) };
}
