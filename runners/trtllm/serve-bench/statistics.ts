// Descriptive statistics as numpy computes them in benchmark_serving: population std (ddof 0),
// percentiles by linear interpolation between closest ranks, and 0 for an empty sample
// (numpy is given `values or 0` there).
import type { LatencyStats } from '../../common/serving-format.ts';

/** Every statistic of a section filled in (ms); percentiles keyed by their number, e.g. '99'. */
export type FullLatencyStats = Required<LatencyStats>;

/** numpy.percentile(sorted, p) with the default 'linear' method; `sorted` ascending, non-empty. */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.min(low + 1, sorted.length - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

/** Key of a percentile, as benchmark_serving writes it in labels: '99', '99.9'. */
export function percentileKey(p: number): string {
  return String(p);
}

export function describeLatencies(values: ArrayLike<number>, percentiles: number[]): FullLatencyStats {
  const n = values.length;
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) => (n === 0 ? 0 : percentileOfSorted(sorted, p));
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i];
  const mean = n === 0 ? 0 : sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (sorted[i] - mean) ** 2;
  return {
    mean,
    median: at(50),
    std: n === 0 ? 0 : Math.sqrt(squares / n),
    min: n === 0 ? 0 : sorted[0],
    max: n === 0 ? 0 : sorted[n - 1],
    percentiles: Object.fromEntries(percentiles.map((p) => [percentileKey(p), at(p)])),
  };
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}
