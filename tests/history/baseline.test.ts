// The baseline algorithm against figures worked out with upstream's own functions
// (perf_regression_utils.py _daily_aggregate_values, _rolling_smooth, _percentile,
// calculate_baseline_metrics) on the same data, and the regression rule and thresholds around it.
import { describe, expect, it } from 'vitest';
import { baselineOf, dailyMeans, lookbackStartMs, percentile, rollingSmooth, seriesBaseline } from '../../framework/history/baseline.ts';
import { checkRecord, describeFinding, diffPercent, newPoints, type CheckInput } from '../../framework/history/regression.ts';
import { caseKey, seriesId } from '../../framework/history/series-key.ts';
import { gatedMetrics, gateKey, isGated } from '../../framework/history/gate-metrics.ts';
import { baselineBranchOf } from '../../framework/history/check-run.ts';
import { metricThresholds } from '../../framework/metrics/regression-thresholds.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import { DAY0, DAY_MS, record } from '../fixtures/history/records.ts';

describe('upstream baseline algorithm', () => {
  it('smooths with a trailing 3-day mean, early days over fewer', () => {
    expect(rollingSmooth([105, 90, 120, 80, 70])).toEqual([105, 97.5, 105, 96.66666666666667, 90]);
  });

  it('takes percentiles with linear interpolation (numbers from upstream _percentile)', () => {
    const smoothed = [105, 97.5, 105, 96.66666666666667, 90];
    expect(percentile(smoothed, 95)).toBeCloseTo(105, 12);
    expect(percentile(smoothed, 5)).toBeCloseTo(91.33333333333333, 12);
    expect(percentile([], 95)).toBe(0);
    expect(percentile([7], 5)).toBe(7);
  });

  it('averages per day, then P5 (lower is better) / P95 (higher) of the history alone', () => {
    const series = { days: [10, 11, 12, 13], sums: [20, 22, 19, 55], counts: [1, 1, 1, 2] };
    const daily = dailyMeans(series);
    expect(daily).toEqual([20, 22, 19, 27.5]);
    expect(baselineOf(daily, false)).toBeCloseTo(20.05, 12);
    expect(baselineOf(daily, true)).toBeCloseTo(22.55833333333333, 12);
    // the median and sample standard deviation of the daily means, and the latest day, for the gate
    expect(seriesBaseline(1, series)).toMatchObject({ median: 21, sd: expect.closeTo(Math.sqrt(43.1875 / 3), 12), days: 4, historyValues: 5, lastDay: 27.5 });
    expect(baselineOf([], true)).toBeUndefined();
  });

  it('starts the 90-day window at the start of the day 90 days back', () => {
    const anchor = DAY0 + 100 * DAY_MS + 12 * 3_600_000; // noon
    expect(lookbackStartMs(anchor)).toBe(DAY0 + 10 * DAY_MS);
  });

  it('reports the change as upstream _calculate_diff does: positive = better', () => {
    expect(diffPercent(110, 100, true)).toBeCloseTo(10);
    expect(diffPercent(110, 100, false)).toBeCloseTo(-10);
    expect(diffPercent(5, 0, true)).toBe(0);
  });
});

describe('thresholds', () => {
  it('metric entry, then the global percent, then 5 % post-merge and 10 % pre-merge', () => {
    expect(metricThresholds(undefined, 'X')).toEqual({ postMerge: 0.05, preMerge: 0.1, check: true });
    expect(metricThresholds(undefined, 'X', 7)).toEqual({ postMerge: 0.07, preMerge: 0.07, check: true });
    expect(metricThresholds({ X: { threshold: 3 } }, 'X', 7)).toEqual({ postMerge: 0.03, preMerge: 0.03, check: true });
    expect(metricThresholds({ X: { post_merge: 2, pre_merge: 8 } }, 'X')).toEqual({ postMerge: 0.02, preMerge: 0.08, check: true });
    expect(metricThresholds({ X: { check: false } }, 'X').check).toBe(false);
  });
});

describe('checkRecord', () => {
  const identity = { backend: 'UCX' };
  const key = caseKey({ testId: 'disagg_perf_model_1k1k_ccb-UCX', gpuType: 'H100', identity, labels: { concurrency: 8 } });
  // Five earlier days: TTFT 20 ms, throughput 1000 tok/s every day.
  const days = [0, 1, 2, 3, 4].map((d) => d + DAY0 / DAY_MS);
  const history = new Map([
    [seriesId(key, 'SERVER_MEDIAN_TTFT'), { days, sums: [20, 20, 20, 20, 20], counts: [1, 1, 1, 1, 1] }],
    [seriesId(key, 'SERVER_OUTPUT_TOKEN_THROUGHPUT'), { days, sums: [1000, 1000, 1000, 1000, 1000], counts: [1, 1, 1, 1, 1] }],
  ]);
  /** The check with baselines from the JS reference (what store.baselines returns for the same data). */
  const check = (r: TestRecord, options: Omit<CheckInput, 'record' | 'baselines'>) => {
    const baselines = new Map(newPoints(r, options).flatMap((p) => (history.has(p.seriesId) ? [[p.seriesId, seriesBaseline(p.seriesId, history.get(p.seriesId))] as const] : [])));
    return checkRecord({ record: r, baselines, gate: ['SERVER_MEDIAN_TTFT', 'SERVER_OUTPUT_TOKEN_THROUGHPUT'], ...options });
  };

  it('flags a value beyond baseline * (1 +/- threshold) in the metric direction only', () => {
    const slow = record({ runId: 'new', day: 10, ttft: 30, throughput: 1200 });
    const outcome = check(slow, { runKind: 'post-merge', identity });
    const ttft = outcome.findings.find((f) => f.metric === 'SERVER_MEDIAN_TTFT')!;
    // P5 of the smoothed daily means of the history [20,20,20,20,20]: 20
    expect(ttft).toMatchObject({ value: 30, baseline: 20, threshold: 0.05, regression: true, days: 5, gated: true });
    expect(ttft.diffPercent).toBeCloseTo(-50);
    expect(outcome.findings.find((f) => f.metric === 'SERVER_OUTPUT_TOKEN_THROUGHPUT')!.regression).toBe(false);
    // a metric without direction is never judged
    expect(outcome.findings.some((f) => f.metric === 'SERVER_TOTAL_INPUT_TOKENS')).toBe(false);
    expect(describeFinding(slow.testId, ttft)).toBe(
      'disagg_perf_model_1k1k_ccb-UCX SERVER_MEDIAN_TTFT[concurrency=8]: value=30.0000 baseline=20.0000 threshold=5.00% diff=-50.00% (ms, 5 day(s) of history, upstream\'s rule)',
    );
  });

  it('pre-merge uses 10 %: a 7 % slower value passes pre-merge and fails post-merge', () => {
    const r = record({ runId: 'new', day: 10, ttft: 21.4 });
    const at = (runKind: 'pre-merge' | 'post-merge') => check(r, { runKind, identity }).findings.find((f) => f.metric === 'SERVER_MEDIAN_TTFT')!;
    expect(at('post-merge').regression).toBe(true);
    expect(at('pre-merge').regression).toBe(false);
    expect(at('pre-merge').threshold).toBe(0.1);
  });

  it('a config threshold and check: false change the verdict', () => {
    const r = record({ runId: 'new', day: 10, ttft: 21.4 });
    const loose = check(r, { runKind: 'post-merge', identity, thresholds: { SERVER_MEDIAN_TTFT: { threshold: 8 } } });
    expect(loose.findings.find((f) => f.metric === 'SERVER_MEDIAN_TTFT')).toMatchObject({ threshold: 0.08, regression: false });
    const off = check(r, { runKind: 'post-merge', identity, thresholds: { SERVER_MEDIAN_TTFT: { check: false } } });
    expect(off.findings.some((f) => f.metric === 'SERVER_MEDIAN_TTFT')).toBe(false);
  });

  it('checks nothing for a case without history (another GPU, backend or concurrency)', () => {
    for (const r of [record({ runId: 'n', day: 10, ttft: 99, gpuType: 'B200' }), record({ runId: 'n', day: 10, ttft: 99, concurrency: 16 })]) {
      const outcome = check(r, { runKind: 'post-merge', identity });
      expect(outcome.findings).toEqual([]);
      expect(outcome.skipped).toMatch(/no earlier post-merge history/);
    }
    expect(check(record({ runId: 'n', day: 10, ttft: 99 }), { runKind: 'post-merge', identity: { backend: 'NIXL' } }).findings).toEqual([]);
  });
});

describe('the gate', () => {
  const identity = { backend: 'UCX' };
  const key = caseKey({ testId: 'disagg_perf_model_1k1k_ccb-UCX', gpuType: 'H100', identity, labels: { concurrency: 8 } });
  const tput = seriesId(key, 'SERVER_OUTPUT_TOKEN_THROUGHPUT');
  const ttft = seriesId(key, 'SERVER_MEDIAN_TTFT');
  const day = DAY0 / DAY_MS;
  const judgeWith = (r: TestRecord, series: Map<number, { days: number[]; sums: number[]; counts: number[] }>, extra: Partial<CheckInput> = {}) =>
    checkRecord({
      record: r,
      baselines: new Map([...series].map(([id, h]) => [id, seriesBaseline(id, h)])),
      runKind: 'post-merge',
      identity,
      gate: ['SERVER_OUTPUT_TOKEN_THROUGHPUT'],
      rule: { minDays: 3, noiseK: 3 },
      ...extra,
    }).findings.find((f) => f.metric === 'SERVER_OUTPUT_TOKEN_THROUGHPUT')!;

  it('judges a value against the history before it: one earlier value the same day (100), a run at 92 is flagged', () => {
    // Upstream's new_data has no timestamp, so its baseline is the history alone: 100, and 92 < 95.
    const r = record({ runId: 'new', day: 0, throughput: 92 });
    const f = judgeWith(r, new Map([[tput, { days: [day], sums: [100], counts: [1] }]]), { rule: { minDays: 1, noiseK: 3 } });
    expect(f).toMatchObject({ baseline: 100, regression: true, days: 1 });
    expect(f.diffPercent).toBeCloseTo(-8, 9);
  });

  it('does not gate before the minimum days of history', () => {
    const r = record({ runId: 'new', day: 2, throughput: 50 });
    const f = judgeWith(r, new Map([[tput, { days: [day, day + 1], sums: [100, 100], counts: [1, 1] }]]));
    expect(f).toMatchObject({ regression: false, days: 2, note: '2 of 3 day(s) of history: not gated yet' });
  });

  it('needs the change to exceed k standard deviations of the daily means besides the threshold', () => {
    // Daily values 100 +/- 4 (sd 3.27): 93 is beyond 5 % of the P95 baseline but within 3 sd of the median.
    const noisy = { days: [0, 1, 2, 3, 4, 5, 6].map((d) => day + d), sums: [96, 104, 100, 96, 104, 100, 100], counts: [1, 1, 1, 1, 1, 1, 1] };
    const within = judgeWith(record({ runId: 'n', day: 8, throughput: 93 }), new Map([[tput, noisy]]));
    expect(within.regression).toBe(false);
    expect(within.note).toMatch(/^within the noise: 7\.00% worse than the median, under 3 x its sd \(3\.27%\)/);
    expect(judgeWith(record({ runId: 'n', day: 8, throughput: 80 }), new Map([[tput, noisy]])).regression).toBe(true);
    // k = 0 is upstream's rule alone
    expect(judgeWith(record({ runId: 'n', day: 8, throughput: 93 }), new Map([[tput, noisy]]), { rule: { minDays: 3, noiseK: 0 } }).regression).toBe(true);
  });

  it('only gating metrics fail; the others are shown against their baselines', () => {
    const flat = { days: [0, 1, 2, 3].map((d) => day + d), sums: [20, 20, 20, 20], counts: [1, 1, 1, 1] };
    const outcome = checkRecord({
      record: record({ runId: 'n', day: 5, ttft: 40 }),
      baselines: new Map([[ttft, seriesBaseline(ttft, flat)]]),
      runKind: 'post-merge',
      identity,
      gate: ['SERVER_OUTPUT_TOKEN_THROUGHPUT'],
    });
    expect(outcome.findings).toEqual([expect.objectContaining({ metric: 'SERVER_MEDIAN_TTFT', value: 40, baseline: 20, regression: false, gated: false })]);
    expect(describeFinding('t', outcome.findings[0])).toMatch(/shown, not gating, upstream's rule\)$/);
    // a record without a gate list and no list given: nothing gates
    expect(checkRecord({ record: record({ runId: 'n', day: 5, ttft: 40 }), baselines: new Map([[ttft, seriesBaseline(ttft, flat)]]), runKind: 'post-merge', identity }).findings[0].regression).toBe(false);
  });

  it('exempts a pre-merge run from a regression its baseline branch already has', () => {
    // ten days at 100, then main's latest day at 80 (sd 6.03: a drop to 80 is beyond 3 sd of the median)
    const days = Array.from({ length: 11 }, (_, d) => day + d);
    const history = { days, sums: days.map((_, d) => (d === 10 ? 80 : 100)), counts: days.map(() => 1) };
    const r = record({ runId: 'pr', day: 12, throughput: 80, kind: 'pre-merge' });
    const f = judgeWith(r, new Map([[tput, history]]), { runKind: 'pre-merge' });
    expect(f).toMatchObject({ regression: false, threshold: 0.1 });
    expect(f.note).toMatch(/baseline branch's latest day \(80\.0000\) is beyond the threshold too/);
    // a post-merge run with the same value is the regression
    expect(judgeWith(r, new Map([[tput, history]])).regression).toBe(true);
  });

  it('judges a local run as a post-merge run of its own branch: 5 %, no exemption; it only feeds no baseline', () => {
    // 7 % below five flat days: beyond the post-merge 5 %, within the pre-merge 10 %.
    const flat = Array.from({ length: 5 }, (_, d) => day + d);
    const five = new Map([[tput, { days: flat, sums: flat.map(() => 1000), counts: flat.map(() => 1) }]]);
    const r = record({ runId: 'l', day: 10, throughput: 930, kind: 'local' });
    expect(judgeWith(r, five, { runKind: 'local' })).toMatchObject({ regression: true, threshold: 0.05 });
    expect(judgeWith(r, five, { runKind: 'pre-merge' })).toMatchObject({ regression: false, threshold: 0.1 });
    // The latest day already as low: a pre-merge run is exempt, a local one is not.
    const days = Array.from({ length: 11 }, (_, d) => day + d);
    const history = { days, sums: days.map((_, d) => (d === 10 ? 80 : 100)), counts: days.map(() => 1) };
    expect(judgeWith(record({ runId: 'l', day: 12, throughput: 80, kind: 'local' }), new Map([[tput, history]]), { runKind: 'local' })).toMatchObject({ regression: true, threshold: 0.05 });
    expect(baselineBranchOf('local', 'dev', 'main')).toBe('dev');
    expect(baselineBranchOf('post-merge', 'dev', 'main')).toBe('dev');
    expect(baselineBranchOf('pre-merge', 'dev', 'release')).toBe('release');
    expect(baselineBranchOf('pre-merge', 'dev', undefined)).toBe('main');
    expect(baselineBranchOf('local', undefined, 'main')).toBeUndefined();
  });
});

describe('gating metrics', () => {
  const metrics = record({ runId: 'x', day: 0 }).metrics;
  const tput = metrics.filter((m) => m.name === 'SERVER_OUTPUT_TOKEN_THROUGHPUT');
  it('headline figures at their label sets by default; all, names and -NAME from DISAGG_GATE_METRICS; the config last', () => {
    expect(gatedMetrics(metrics, tput, ['headline'])).toEqual(tput.map(gateKey));
    expect(gatedMetrics(metrics, [], ['headline'])).toEqual([]);
    expect(gatedMetrics(metrics, [], ['all'])).toEqual(['SERVER_MEDIAN_TTFT', 'SERVER_OUTPUT_TOKEN_THROUGHPUT']); // metrics with a direction only
    expect(gatedMetrics(metrics, tput, ['headline', 'SERVER_MEDIAN_TTFT', '-SERVER_OUTPUT_TOKEN_THROUGHPUT'])).toEqual(['SERVER_MEDIAN_TTFT']);
    expect(gatedMetrics(metrics, tput, ['headline'], { SERVER_MEDIAN_TTFT: { gate: true }, SERVER_OUTPUT_TOKEN_THROUGHPUT: { gate: false } })).toEqual(['SERVER_MEDIAN_TTFT']);
  });
  it('a headline figure gates at its own label set only, a name at every label set', () => {
    const at = (block: number) => ({ name: 'BW_GBPS', labels: { block_size: block }, value: 1, unit: 'GB/s', higherIsBetter: true });
    const sweep = [at(4096), at(65536), at(1048576)];
    const gate = gatedMetrics(sweep, [sweep[2]], ['headline']);
    expect(gate).toEqual(['BW_GBPS{"block_size":1048576}']);
    expect(sweep.map((m) => isGated(gate, m))).toEqual([false, false, true]);
    expect(sweep.map((m) => isGated(gatedMetrics(sweep, [sweep[2]], ['headline', 'BW_GBPS']), m))).toEqual([true, true, true]);
  });
});
