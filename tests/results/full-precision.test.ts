// Full precision: a figure an upstream tool or this project printed rounded (`Throughput: 0.00
// GB/s` from a `.2f` on a busy host) is recorded exactly where the same log holds what it was
// computed from, and otherwise kept as printed with the step it was rounded to (Metric.rounded),
// so no chart, digest change or gate reads a rounded-away 0.00 as a measurement: not a -100 %
// regression, not a curve through zero. The logs are written here in the tools' formats.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extractLmcacheMetrics } from '../../framework/metrics/extractors/lmcache.ts';
import { extractNixlEpMetrics } from '../../framework/metrics/extractors/nixl-ep.ts';
import { belowResolution, printedStep } from '../../framework/metrics/resolution.ts';
import type { Metric } from '../../framework/metrics/metric.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import { recordProblem } from '../../framework/results/record-check.ts';
import { planPlots } from '../../framework/results/report/plots.ts';
import { renderReport } from '../../framework/results/report/render.ts';
import { buildDigest, previousKey } from '../../framework/results/digest/digest.ts';
import { digestTerminal } from '../../framework/results/digest/digest-text.ts';
import { checkRecord, newPoints } from '../../framework/history/regression.ts';
import { withHistory } from '../../framework/history/store.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'full-precision-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const GIB_IN_GB = 2 ** 30 / 1e9;
const find = (metrics: Metric[], name: string, labels: Metric['labels'] = {}) =>
  metrics.find((m) => m.name === name && JSON.stringify(m.labels) === JSON.stringify(labels))!;

/** `disagg-bench kvpipe` on a busy host: 4 objects of 4 KiB per round, so small that `.2f` prints 0.00. */
const KVPIPE_BUSY = [
  'Generated 4 objects (4096 bytes each, 16 KiB in total)',
  'Round 1/2: sending 4 objects...',
  'Sent 4 objects in 0.004000 seconds',
  'Throughput: 0.00 GB/s (0.00 GiB/s)',
  'Round 2/2: sending 4 objects...',
  'Sent 4 objects in 0.008000 seconds',
  'Throughput: 0.00 GB/s (0.00 GiB/s)',
  'Mean throughput: 0.00 ± 0.00 GB/s (0.00 ± 0.00 GiB/s) over 2 round(s)',
].join('\n');

/** A record of a kvpipe run whose per-round throughput was printed 0.00 and only that print exists. */
function roundedRecord(rounded: number | undefined): TestRecord {
  const metric = (round: number): Metric => ({ name: 'THROUGHPUT_GBPS', value: 0, unit: 'GB/s', higherIsBetter: true, labels: { round }, ...(rounded !== undefined && { rounded }) });
  return {
    testId: 'nixl_perf_kvpipe_shm', type: 'nixl', category: 'perf', configPath: 'k.yaml', jobId: '7', verdict: 'passed', failures: [], host: 'h',
    metrics: [metric(1), metric(2), { name: 'SEND_TIME_S', value: 0.004, unit: 's', higherIsBetter: false, labels: { round: 1 } }, { name: 'SEND_TIME_S', value: 0.008, unit: 's', higherIsBetter: false, labels: { round: 2 } }],
    headline: [{ name: 'THROUGHPUT_GBPS', labels: { round: 1 } }],
    timing: { start: '2026-11-28T02:00:00.000Z', end: '2026-11-28T02:00:10.000Z', durationSec: 10 },
    run: { id: 'busy', kind: 'post-merge', gate: ['THROUGHPUT_GBPS'] },
  };
}

describe('exact where the log holds the raw values', () => {
  it("this project's kvpipe: each round's throughput from its bytes and its 6-decimal time, the summary from the rounds", () => {
    const { metrics, problems } = extractLmcacheMetrics(KVPIPE_BUSY);
    expect(problems).toEqual([]);
    const [r1, r2] = [16384 / 0.004 / 1e9, 16384 / 0.008 / 1e9];
    expect(find(metrics, 'THROUGHPUT_GBPS', { round: 1 })).toEqual({ name: 'THROUGHPUT_GBPS', value: r1, unit: 'GB/s', higherIsBetter: true, labels: { round: 1 } });
    expect(find(metrics, 'THROUGHPUT_GIBPS', { round: 2 }).value).toBeCloseTo(r2 / GIB_IN_GB, 15);
    expect(find(metrics, 'MEAN_THROUGHPUT_GBPS').value).toBeCloseTo((r1 + r2) / 2, 15);
    expect(find(metrics, 'THROUGHPUT_STD_GBPS').value).toBeCloseTo((r1 - r2) / 2, 15);
    expect(metrics.filter((m) => m.unit !== 'count' && m.unit !== 's').every((m) => m.rounded === undefined && m.value > 0)).toBe(true);
  });
});

describe('marked where only the rounded print exists', () => {
  it("LMCache's bare `X GB/s` (GiB/s, 2 decimals) and the EP test's `avg=0.00`: kept as printed, with their step", () => {
    const lmcache = extractLmcacheMetrics('Sent 500 objects in 0.117705 seconds\nThroughput: 0.00 GB/s').metrics;
    expect(find(lmcache, 'THROUGHPUT_GIBPS', { round: 1 })).toMatchObject({ value: 0, rounded: 0.01 });
    expect(find(lmcache, 'THROUGHPUT_GBPS', { round: 1 }).rounded).toBeCloseTo(0.01 * GIB_IN_GB, 15);
    expect(belowResolution(find(lmcache, 'THROUGHPUT_GBPS', { round: 1 }))).toBe(true);

    const ep = extractNixlEpMetrics('Data Plane (e2e): 4/4 ranks passed\nBandwidth (GB/s): avg=0.00, min=0.00, max=0.01\nLatency (μs):     avg=519.3, min=519.1, max=519.5').metrics;
    expect(find(ep, 'BW_GBPS_AVG', { mode: 'e2e' })).toMatchObject({ value: 0, rounded: 0.01 });
    expect(find(ep, 'LAT_US_AVG', { mode: 'e2e' })).toMatchObject({ value: 519.3, rounded: 0.1 });
    // counts are exact: no step, and no 4.00
    expect(find(ep, 'RANKS_PASSED', { mode: 'e2e' })).toEqual({ name: 'RANKS_PASSED', value: 4, unit: 'count', higherIsBetter: true, labels: { mode: 'e2e' } });
    expect([printedStep('42.88'), printedStep('519.3'), printedStep('12'), printedStep('inf')]).toEqual([0.01, 0.1, 1, undefined]);
    expect(recordProblem({ ...roundedRecord(0.01), metrics: [{ name: 'X', value: 0, unit: 'GB/s', labels: {}, rounded: -1 }] })).toBe('metrics[0].rounded is -1, expected a step > 0 (0.01: printed with 2 decimals)');
  });

  it('the gate: a 0.00 print is no -100 % regression (the same value unmarked would be one)', () => {
    const stats = { p95: 5, p5: 4.5, median: 4.8, sd: 0.1, days: 10, historyValues: 10, lastDay: 4.8 };
    const judged = (record: TestRecord) => {
      const points = newPoints(record, {});
      const baselines = new Map(points.map((p) => [p.seriesId, { seriesId: p.seriesId, ...stats }]));
      return { points, outcome: checkRecord({ record, baselines, runKind: 'post-merge' }) };
    };
    const unmarked = judged(roundedRecord(undefined));
    expect(unmarked.outcome.findings.filter((f) => f.metric === 'THROUGHPUT_GBPS').map((f) => [f.diffPercent, f.regression])).toEqual([[-100, true], [-100, true]]);
    const marked = judged(roundedRecord(0.01));
    expect(marked.points.map((p) => p.value)).toEqual([0.004, 0.008]); // only the send times are judged
    expect(marked.outcome.findings.filter((f) => f.metric === 'THROUGHPUT_GBPS')).toEqual([]);
  });

  it('the digest: the headline reads `<0.01`, with no change against the run before', () => {
    const record = roundedRecord(0.01);
    const previous = new Map([[previousKey(record.testId, 'THROUGHPUT_GBPS', { round: 1 }), { value: 5.2, runId: 'before' }]]);
    const digest = buildDigest({ runId: 'busy', tests: [{ testId: record.testId, record }], previous, files: { results: 'r', summaryMd: 'm', summaryJson: 'j' } });
    expect(digest.tests[0].headline).toMatchObject({ value: 0, rounded: 0.01, belowResolution: true });
    expect(digest.tests[0].headline?.previous).toBeUndefined();
    expect(digestTerminal(digest)).toMatch(/^PASSED\s+nixl_perf_kvpipe_shm\s+THROUGHPUT_GBPS\{round=1\} <0\.01 GB\/s\s+-\s+-/m);
    // now exact, after an older run recorded the same figure as an unmarked 0: no percent from zero
    const exact = roundedRecord(undefined);
    exact.metrics[0] = { ...exact.metrics[0], value: 0.004096 };
    const fromZero = new Map([[previousKey(exact.testId, 'THROUGHPUT_GBPS', { round: 1 }), { value: 0, runId: 'older' }]]);
    const after = buildDigest({ runId: 'now', tests: [{ testId: exact.testId, record: exact }], previous: fromZero, files: { results: 'r', summaryMd: 'm', summaryJson: 'j' } });
    expect(after.tests[0].headline).toMatchObject({ value: 0.004096 });
    expect(after.tests[0].headline?.previous).toBeUndefined();
  });

  it('the report: no chart of a series rounded to zero, a gap where one point is; no trend card of it either', () => {
    const allZero = roundedRecord(0.01);
    expect(planPlots([allZero]).map((p) => p.series.map((s) => s.metric))).toEqual([['SEND_TIME_S']]);
    const oneZero = roundedRecord(0.01);
    oneZero.metrics[1] = { ...oneZero.metrics[1], value: 3.27 };
    expect(planPlots([oneZero]).find((p) => p.unit === 'GB/s')!.series[0].values).toEqual([null, 3.27]);

    const points = [0, 1].map((k) => ({ tsMs: Date.UTC(2026, 10, 27 + k), value: 0, runId: `r${k}`, current: k === 1 }));
    const trends = { store: 'h', charts: [{ testId: allZero.testId, metric: 'THROUGHPUT_GBPS', labels: { round: 1 }, unit: 'GB/s', higherIsBetter: true, points, regression: false, rounded: 0.01 }] };
    const html = renderReport({ records: [allZero], trends }).html;
    expect(html).not.toMatch(/"id":"trend-1"/);
    expect(html).toContain('Every charted figure was printed rounded to zero: nothing to draw.');
  });

  it('the history keeps the step, and a value rounded to zero feeds no baseline', async () => {
    const target = { kind: 'duckdb' as const, file: path.join(scratch, 'h.duckdb') };
    const record = roundedRecord(0.01);
    await withHistory(target, (s) => s.append([{ record, run: record.run!, source: 'run' }]), { create: true });
    const [back] = await withHistory(target, (s) => s.records(['busy']));
    expect(find(back.metrics, 'THROUGHPUT_GBPS', { round: 1 })).toMatchObject({ value: 0, rounded: 0.01 });
    expect(find(back.metrics, 'SEND_TIME_S', { round: 1 }).rounded).toBeUndefined();
    const points = await withHistory(target, (s) => s.points({ testIds: [record.testId] }));
    expect(points.map((p) => [p.metric, p.valid])).toEqual(expect.arrayContaining([['THROUGHPUT_GBPS', false], ['SEND_TIME_S', true]]));
  });
});
