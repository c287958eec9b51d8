// Summary statistics of samples, one definition for every bench (and the framework). All of it
// runs in a loop: nothing spreads a sample array into a call (Math.min(...xs) overflows the stack
// past ~100k elements, and a long run has millions of samples), and RunningStats keeps a whole
// run's count, mean, spread and extremes in constant memory. tests/lint/no-spread-stats.test.ts
// keeps spreads out of Math.min/max and similar calls.

/** Count, sum, mean, population spread (Welford), min and max of a stream of samples, in O(1) memory. */
export class RunningStats {
  count = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;
  private meanSoFar = 0;
  private squares = 0;

  add(x: number): this {
    this.count += 1;
    this.sum += x;
    if (x < this.min) this.min = x;
    if (x > this.max) this.max = x;
    const delta = x - this.meanSoFar;
    this.meanSoFar += delta / this.count;
    this.squares += delta * (x - this.meanSoFar);
    return this;
  }

  addAll(xs: Iterable<number>): this {
    for (const x of xs) this.add(x);
    return this;
  }

  /** 0 for no samples. */
  get mean(): number {
    return this.count === 0 ? 0 : this.sum / this.count;
  }

  /** Population standard deviation; 0 for fewer than two samples. */
  get stddev(): number {
    return this.count < 2 ? 0 : Math.sqrt(this.squares / this.count);
  }

  /** min/avg/max, 0 each for no samples. */
  get minAvgMax(): MinAvgMax {
    return this.count === 0 ? { avg: 0, min: 0, max: 0 } : { avg: this.mean, min: this.min, max: this.max };
  }
}

/** The smallest value, or `empty` (default Infinity, as Math.min()) when there is none. */
export function minOf(xs: Iterable<number>, empty = Infinity): number {
  let min = Infinity;
  let any = false;
  for (const x of xs) {
    any = true;
    if (x < min || Number.isNaN(x)) min = x;
  }
  return any ? min : empty;
}

/** The largest value, or `empty` (default -Infinity, as Math.max()) when there is none. */
export function maxOf(xs: Iterable<number>, empty = -Infinity): number {
  let max = -Infinity;
  let any = false;
  for (const x of xs) {
    any = true;
    if (x > max || Number.isNaN(x)) max = x;
  }
  return any ? max : empty;
}

export function mean(xs: Iterable<number>): number {
  return new RunningStats().addAll(xs).mean;
}

/** Population standard deviation (0 for fewer than two samples). */
export function stddev(xs: Iterable<number>): number {
  return new RunningStats().addAll(xs).stddev;
}

/** Nearest-rank percentile (p in 0..100) of the samples; 0 for none. Exact: sorts a typed copy (8 bytes a sample, no spread). */
export function percentile(xs: ArrayLike<number>, p: number): number {
  if (xs.length === 0) return 0;
  const sorted = Float64Array.from(xs).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/**
 * nixlbench's percentile (xferMetricStats::p90/p95/p99, benchmark/nixlbench/src/utils/utils.cpp):
 * the sorted samples' element at index floor(n * fraction), the double product truncated as
 * C++ converts it to size_t, capped at the last; 0 for none. With n a multiple of 100 this is one
 * sample above the nearest rank (n = 400, P99: the 397th sample, where percentile() takes the 396th).
 */
export function nixlbenchPercentile(xs: ArrayLike<number>, fraction: number): number {
  if (xs.length === 0) return 0;
  const sorted = Float64Array.from(xs).sort();
  return sorted[Math.min(Math.trunc(sorted.length * fraction), sorted.length - 1)];
}

export interface MinAvgMax {
  avg: number;
  min: number;
  max: number;
}

export function minAvgMax(xs: Iterable<number>): MinAvgMax {
  return new RunningStats().addAll(xs).minAvgMax;
}
