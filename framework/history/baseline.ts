// Baselines exactly as TensorRT-LLM's perf pipeline computes them
// (tests/integration/defs/perf/perf_regression_utils.py, calculate_baseline_metrics and its
// helpers _daily_aggregate_values, _rolling_smooth, _percentile): the values of one test case and
// metric are averaged per day, the daily means smoothed by a trailing rolling mean over 3 days
// (early days over fewer), and the baseline is the 95th percentile of the smoothed values for a
// metric where higher is better, the 5th where lower is better (linear interpolation). As upstream,
// the new run's own value is part of the data (calculate_baseline_metrics(history, new_data)).
// The history is the last 90 days (open_search_db_utils.py QUERY_LOOKBACK_DAYS) from the start of
// that day. Days are UTC days here; upstream's are the CI machine's local days.
//
// The store computes it in SQL, one query for a whole run (store.ts baselines); these functions
// are the same algorithm in JS, for values read from results files and as the reference the
// store's results are tested against (tests/history/store.test.ts).

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

/** _daily_aggregate_values: one mean per day, oldest first, with new values added to their days. */
export function dailyMeans(series: DaySums | undefined, added: { day: number; value: number }[] = []): number[] {
  const byDay = new Map<number, { sum: number; count: number }>();
  series?.days.forEach((day, k) => byDay.set(day, { sum: series.sums[k], count: series.counts[k] }));
  for (const { day, value } of added) {
    const d = byDay.get(day) ?? { sum: 0, count: 0 };
    byDay.set(day, { sum: d.sum + value, count: d.count + 1 });
  }
  return [...byDay.entries()].sort(([a], [b]) => a - b).map(([, d]) => d.sum / d.count);
}

/** calculate_baseline_metrics for one metric: P95 of the smoothed daily means (higher is better), else P5. */
export function baselineOf(daily: number[], higherIsBetter: boolean): number | undefined {
  if (daily.length === 0) return undefined;
  return percentile(rollingSmooth(daily), higherIsBetter ? 95 : 5);
}

/** One series' baselines from its day sums and new values: what store.ts baselines returns for it. */
export function seriesBaseline(seriesId: number, history: DaySums | undefined, added: { day: number; value: number }[]) {
  const daily = dailyMeans(history, added);
  const smoothed = rollingSmooth(daily);
  return {
    seriesId,
    p95: percentile(smoothed, 95),
    p5: percentile(smoothed, 5),
    days: daily.length,
    historyValues: (history?.counts ?? []).reduce((a, b) => a + b, 0),
  };
}
