// Summary statistics for benchmark samples (nearest-rank percentiles: every figure is a sample).
// minOf/maxOf: the project's loops (never Math.min(...xs), which overflows on long sample arrays).
import { maxOf, minOf } from '../../runners/common/stats.ts';

export { maxOf, minOf };

function sorted(xs: readonly number[]): number[] {
  if (xs.length === 0) throw new RangeError('no samples');
  return [...xs].sort((a, b) => a - b);
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(xs: readonly number[], p: number): number {
  const s = sorted(xs);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

/** The middle sample (the lower one of the two middles for an even count). */
export function median(xs: readonly number[]): number {
  const s = sorted(xs);
  return s[Math.floor((s.length - 1) / 2)];
}

export function mean(xs: readonly number[]): number {
  return sorted(xs).reduce((a, b) => a + b, 0) / xs.length;
}

export function max(xs: readonly number[]): number {
  return sorted(xs)[xs.length - 1];
}

/** "median (min-max)" of the samples, each figure written by `format`. */
export function medianRange(xs: readonly number[], format: (x: number) => string): string {
  return `${format(median(xs))} (${format(minOf(xs))}-${format(maxOf(xs))})`;
}

/** p50/p99/max rounded to `digits`, for a JSON line. */
export function summary(xs: readonly number[], digits = 3): { n: number; p50: number; p99: number; max: number } {
  const r = (x: number) => Number(x.toFixed(digits));
  return { n: xs.length, p50: r(percentile(xs, 50)), p99: r(percentile(xs, 99)), max: r(max(xs)) };
}
