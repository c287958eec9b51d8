// The gate's statistics that need no store: robust location and scale, the quantiles its thresholds
// come from, and the empirical-Bayes pooling of many short series' scales (limma's moderated
// variance: a series with 14 runs says little about its own noise, the run's other series say
// more, and how much more is measured from how much their scales differ).

/** The median; NaN for no values. */
export function median(xs: ArrayLike<number>): number {
  if (xs.length === 0) return Number.NaN;
  return sortedMedian(sortedCopy(xs));
}

const sortedMedian = (s: ArrayLike<number>) => {
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/**
 * The values sorted ascending, as a new array: by insertion for the short series the gate sees
 * by the ten thousand (no comparator calls, no typed array to allocate), else a typed sort.
 */
export function sortedCopy(xs: ArrayLike<number>): ArrayLike<number> {
  const n = xs.length;
  if (n > 32) return Float64Array.from(xs).sort();
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const x = xs[i];
    let k = i - 1;
    while (k >= 0 && out[k] > x) {
      out[k + 1] = out[k];
      k--;
    }
    out[k + 1] = x;
  }
  return out;
}

/**
 * 1.4826 x the median absolute deviation from `center`, with a small-sample factor (n / (n - 0.8),
 * close to Croux and Rousseeuw's): a standard deviation for normal data that one wild value barely moves.
 */
export function madScale(xs: ArrayLike<number>, center = median(xs)): number {
  if (xs.length < 2) return Number.NaN;
  const deviations = new Array<number>(xs.length);
  for (let k = 0; k < xs.length; k++) deviations[k] = Math.abs(xs[k] - center);
  return 1.4826 * median(deviations) * (xs.length / (xs.length - 0.8));
}

/** The MAD's degrees of freedom as a variance estimate: about 37 % of the sample's (its efficiency at the normal). */
export const madDegreesOfFreedom = (n: number) => Math.max(0.5, 0.37 * (n - 1));

/** The standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) return p <= 0 ? -Infinity : Infinity;
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/**
 * Student's t quantile by the Cornish-Fisher expansion around the normal one (within 1 % of the
 * exact value from 3 degrees of freedom at the tail probabilities the gate uses); fewer degrees
 * of freedom are treated as 3, which only makes the gate stricter than its own settings say.
 */
export function tQuantile(p: number, df: number): number {
  const z = normalQuantile(p);
  if (!Number.isFinite(df) || df > 1e6) return z;
  const v = Math.max(3, df);
  const z2 = z * z;
  return (
    z +
    (z * (z2 + 1)) / (4 * v) +
    (z * (5 * z2 * z2 + 16 * z2 + 3)) / (96 * v * v) +
    (z * (3 * z2 ** 3 + 19 * z2 * z2 + 17 * z2 - 15)) / (384 * v ** 3)
  );
}

/** The trigamma function (the variance of log chi-square draws), by recurrence and its asymptotic series. */
export function trigamma(x: number): number {
  let sum = 0;
  let y = x;
  while (y < 6) {
    sum += 1 / (y * y);
    y += 1;
  }
  const y2 = y * y;
  return sum + 1 / y + 1 / (2 * y2) + 1 / (6 * y2 * y) - 1 / (30 * y2 * y2 * y) + 1 / (42 * y2 ** 3 * y);
}

/** A series' own scale and how many degrees of freedom it rests on. */
export interface OwnScale {
  scale: number;
  df: number;
}

/** The pooled prior of many series' scales: its scale and its weight in degrees of freedom. */
export interface ScalePrior {
  scale: number;
  /** Infinite when the series' scales differ no more than their sampling alone explains. */
  df: number;
}

/**
 * The mean of the values left after dropping the lowest and highest 10 % (at least one of each
 * from 7 values on): nearly the mean's precision on normal noise (a median needs pi/2 times the
 * runs for the same), and one wild run cannot move it far.
 */
export function trimmedMean(xs: ArrayLike<number>): number {
  if (xs.length === 0) return Number.NaN;
  return sortedTrimmedMean(sortedCopy(xs));
}

/** trimmedMean of values already sorted ascending. */
export function sortedTrimmedMean(s: ArrayLike<number>): number {
  if (s.length === 0) return Number.NaN;
  const cut = trimOf(s.length);
  let sum = 0;
  for (let k = cut; k < s.length - cut; k++) sum += s[k];
  return sum / (s.length - 2 * cut);
}

/** How many values trimmedMean drops at each end of n. */
const trimOf = (n: number) => (n >= 7 ? Math.max(1, Math.floor(n * 0.1)) : 0);

/**
 * Leave-one-out residuals: each value against the trimmed mean of the others. Their spread is the
 * spread of a new value around a baseline's level, the level's own uncertainty included, which is
 * what the gate compares a new value with. O(n log n): one sort and prefix sums (removing the
 * value at sorted rank r shifts the ranks above it down by one; of equal values, removing any
 * leaves the same others, so the first rank of a value is its rank). `sorted`: xs sorted, when
 * the caller has it.
 */
export function leaveOneOutTrimmedResiduals(xs: ArrayLike<number>, sorted: ArrayLike<number> = sortedCopy(xs)): number[] {
  const n = xs.length;
  if (n < 2) return [];
  const prefix = new Array<number>(n + 1);
  prefix[0] = 0;
  for (let k = 0; k < n; k++) prefix[k + 1] = prefix[k] + sorted[k];
  const sum = (from: number, to: number) => (to > from ? prefix[to] - prefix[from] : 0); // sorted[from..to)
  const cut = trimOf(n - 1);
  const kept = n - 1 - 2 * cut;
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    // the first rank of xs[i] among the sorted values (binary search)
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] < xs[i]) lo = mid + 1;
      else hi = mid;
    }
    const r = lo;
    // the others' sorted values are sorted[0..r) then sorted[r+1..n); their middle is ranks [cut, n-1-cut)
    const lowEnd = Math.min(r, n - 1 - cut);
    const below = sum(cut, Math.max(cut, lowEnd));
    const aboveFrom = Math.max(r + 1, cut + 1);
    const above = sum(aboveFrom, n - cut);
    out[i] = xs[i] - (below + above) / kept;
  }
  return out;
}

/** The variance of trimmedMean over n normal values, as a share of one value's: about 1.06 / n. */
export const trimmedMeanVarianceShare = (n: number) => (n >= 7 ? 1.06 : Math.PI / 2) / Math.max(1, n);

/**
 * The prior of a set of series' scales (after Smyth 2004, by moments on the log variances): the
 * scale of all their residuals pooled (1.4826 x the median absolute residual: one wild series
 * barely moves it), and the prior's degrees of freedom from how much more the series' log variances
 * spread than their own sampling explains. Undefined with fewer than three usable series.
 */
export function scalePrior(own: readonly OwnScale[], pooledResiduals: ArrayLike<number>): ScalePrior | undefined {
  const usable = own.filter((o) => o.scale > 0 && Number.isFinite(o.scale) && o.df > 0);
  if (usable.length < 3 || pooledResiduals.length === 0) return undefined;
  const logs = usable.map((o) => Math.log(o.scale * o.scale));
  const mean = logs.reduce((a, b) => a + b, 0) / logs.length;
  const spread = logs.reduce((a, l) => a + (l - mean) ** 2, 0) / (logs.length - 1);
  const sampling = usable.reduce((a, o) => a + trigamma(o.df / 2), 0) / usable.length;
  const excess = spread - sampling;
  const scale = 1.4826 * median(Array.from(pooledResiduals, Math.abs));
  if (excess <= 0) return { scale, df: Infinity };
  // trigamma(d0 / 2) = excess, solved by bisection on a decreasing function.
  let lo = 1e-3;
  let hi = 1e4;
  for (let k = 0; k < 60; k++) {
    const mid = Math.sqrt(lo * hi);
    if (trigamma(mid) > excess) lo = mid;
    else hi = mid;
  }
  return { scale, df: 2 * Math.sqrt(lo * hi) };
}

/** A series' scale moderated toward the prior, and the degrees of freedom the two carry together. */
export function moderatedScale(own: OwnScale, prior: ScalePrior | undefined): OwnScale {
  // A series of identical values has no noise at all: a scale of 0 is a measurement, not a gap.
  const ownOk = own.scale >= 0 && Number.isFinite(own.scale);
  if (!prior) return ownOk ? own : { scale: Number.NaN, df: 0 };
  if (!Number.isFinite(prior.df) || !ownOk) return { scale: prior.scale, df: Number.isFinite(prior.df) ? prior.df : Infinity };
  const variance = (prior.df * prior.scale ** 2 + own.df * own.scale ** 2) / (prior.df + own.df);
  return { scale: Math.sqrt(variance), df: prior.df + own.df };
}
