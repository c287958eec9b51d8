// Baselines exactly as TensorRT-LLM's perf pipeline computes them
// (tests/integration/defs/perf/perf_regression_utils.py, calculate_baseline_metrics and its
// helpers _daily_aggregate_values, _rolling_smooth, _percentile): the values of one test case and
// metric are averaged per day, the daily means smoothed by a trailing rolling mean over 3 days
// (early days over fewer), and the baseline is the 95th percentile of the smoothed values for a
// metric where higher is better, the 5th where lower is better (linear interpolation).
// The data is the history before the run only. Upstream calls calculate_baseline_metrics(history,
// new_data), but its new_data carries no ts_created yet, so _daily_aggregate_values drops it and
// upstream's baseline is the history alone: the judged value is never part of its own baseline.
// A rerun the same day as earlier runs is judged against a baseline that holds those earlier runs
// (their day's mean), not itself. The history is the last 90 days (open_search_db_utils.py
// QUERY_LOOKBACK_DAYS) from the start of that day, up to the run's start. Days are UTC days here;
// upstream's are the CI machine's local days.
//
// The store computes it in SQL, one query for a whole run (store.ts baselines); these functions
// are the same algorithm in JS, for values read from results files and as the reference the
// store's results are tested against (tests/history/store.test.ts).

import type { SeriesStats } from './gate.ts';

/** Per series, the days it has values on and their sums and counts. */
export interface DaySums {
  days: number[];
  sums: number[];
  counts: number[];
}

export const LOOKBACK_DAYS = 90;
export const ROLLING_WINDOW = 3;
const DAY_MS = 86_400_000;

/** Start of the history window: upstream's `int(time.time() - 24*3600*90) // (24*3600) * 24*3600*1000`. */
export function lookbackStartMs(anchorMs: number, days = LOOKBACK_DAYS): number {
  return Math.floor((anchorMs - days * DAY_MS) / DAY_MS) * DAY_MS;
}

export const dayOf = (ms: number) => Math.floor(ms / DAY_MS);

/** _rolling_smooth: trailing mean, same length; the first element is itself, the second the mean of two... */
export function rollingSmooth(values: number[], window = ROLLING_WINDOW): number[] {
  return values.map((_, i) => {
    const slice = values.slice(Math.max(0, i - window + 1), i + 1);
    return slice.reduce((a, b) => a + b, 0) / slice.length;
  });
}

/** _percentile: the p-th percentile with linear interpolation between closest ranks; 0 for no values. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const k = (p / 100) * (s.length - 1);
  const lo = Math.floor(k);
  const hi = Math.min(lo + 1, s.length - 1);
  return s[lo] + (k - lo) * (s[hi] - s[lo]);
}

/** _daily_aggregate_values: one mean per day, oldest first. */
export function dailyMeans(series: DaySums | undefined): number[] {
  const byDay = new Map<number, { sum: number; count: number }>();
  series?.days.forEach((day, k) => {
    const d = byDay.get(day) ?? { sum: 0, count: 0 };
    byDay.set(day, { sum: d.sum + series.sums[k], count: d.count + series.counts[k] });
  });
  return [...byDay.entries()].sort(([a], [b]) => a - b).map(([, d]) => d.sum / d.count);
}

/** calculate_baseline_metrics for one metric: P95 of the smoothed daily means (higher is better), else P5. */
export function baselineOf(daily: number[], higherIsBetter: boolean): number | undefined {
  if (daily.length === 0) return undefined;
  return percentile(rollingSmooth(daily), higherIsBetter ? 95 : 5);
}

/** The sample standard deviation (n - 1); 0 for fewer than two values. */
export function sampleSd(values: number[]): number {
  if (values.length < 2) return 0;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1));
}

/** One series' statistics from the day sums of its history: what store.ts baselines returns for it. */
export function seriesBaseline(seriesId: number, history: DaySums | undefined): SeriesStats {
  const daily = dailyMeans(history);
  const smoothed = rollingSmooth(daily);
  const median = percentile(daily, 50);
  return {
    seriesId,
    p95: percentile(smoothed, 95),
    p5: percentile(smoothed, 5),
    median,
    sd: sampleSd(daily),
    days: daily.length,
    historyValues: (history?.counts ?? []).reduce((a, b) => a + b, 0),
    lastDay: daily.at(-1) ?? 0,
  };
}
