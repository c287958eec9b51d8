import { describe, expect, it } from 'vitest';
import type { Metric } from '../../framework/metrics/metric.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import { formatBytes, planPlots } from '../../framework/results/report/plots.ts';
import { changeStatus, compareResults } from '../../framework/results/report/compare.ts';

const record = (testId: string, metrics: Metric[], end = '2025-11-03T10:00:00.000Z', jobId = '1'): TestRecord => ({
  testId,
  type: 'xfer',
  category: 'perf',
  configPath: `test_configs/xfer/perf/${testId}.yaml`,
  jobId,
  verdict: 'passed',
  failures: [],
  metrics,
  timing: { start: '2025-11-03T09:00:00.000Z', end, durationSec: 3600 },
  host: 'n1',
});
const metric = (name: string, value: number, labels: Metric['labels'], unit = 'ms', higherIsBetter?: boolean): Metric => ({ name, value, unit, labels, higherIsBetter });

describe('which plots metrics make', () => {
  it('makes a line over any numeric label that repeats, sorted by value, and a bar chart over a text label', () => {
    const plots = planPlots([
      record('t', [
        metric('COPY_TIME', 3, { message_size: 64 }),
        metric('COPY_TIME', 1, { message_size: 8 }),
        metric('SCORE', 0.5, { task: 'b' }, 'fraction'),
        metric('SCORE', 0.7, { task: 'a' }, 'fraction'),
      ]),
    ]);
    expect(plots.map((p) => [p.axis, p.chart, p.xLabels, p.series[0].values])).toEqual([
      ['message_size', 'line', ['8 B', '64 B'], [1, 3]],
      ['task', 'bar', ['b', 'a'], [0.5, 0.7]], // names keep the order the test produced them in
    ]);
  });

  it('draws no series of nothing but zeros (a figure a tool printed rounded below its resolution), and no chart of only such series', () => {
    const plots = planPlots([
      record('t', [
        ...[1, 2].map((round) => metric('THROUGHPUT_GBPS', 0, { round }, 'GB/s', true)),
        ...[1, 2].map((round) => metric('SEND_TIME_S', 0.5 * round, { round }, 's', false)),
        ...[4096, 8192].flatMap((block_size) => [metric('BW_GBPS', 0, { block_size, op_type: 'READ' }, 'GB/s', true), metric('BW_GBPS', 0.2, { block_size, op_type: 'WRITE' }, 'GB/s', true)]),
      ]),
    ]);
    const drawn = plots.flatMap((p) => p.series.map((s) => `${s.metric}:${s.name}`));
    expect(drawn.some((d) => d.startsWith('THROUGHPUT_GBPS'))).toBe(false);
    expect(drawn.some((d) => d.startsWith('SEND_TIME_S'))).toBe(true);
    expect(plots.flatMap((p) => p.series).filter((s) => s.metric === 'BW_GBPS').every((s) => s.values.some((v) => v !== 0 && v !== null))).toBe(true);
    expect(plots.flatMap((p) => p.series).some((s) => s.metric === 'BW_GBPS')).toBe(true);
  });

  it('plots nothing for metrics that do not repeat, nor counts', () => {
    const plots = planPlots([
      record('t', [
        metric('AVG', 1, {}),
        metric('ACCURACY', 0.9, { dataset: 'gsm8k', run: 1 }, 'fraction'),
        metric('SERVER_FAILED_REQUESTS', 0, { concurrency: 8 }, 'count'),
        metric('SERVER_FAILED_REQUESTS', 2, { concurrency: 16 }, 'count'),
      ]),
    ]);
    expect(plots).toEqual([]);
  });

  it('prefers the known axes and splits the other varying labels into series', () => {
    const metrics = [1, 2].flatMap((rank) =>
      [4096, 8192].map((size) => metric('BW_GBPS', rank * size, { rank, block_size: size, host: 'n1' }, 'GB/s', true)),
    );
    const [plot] = planPlots([record('t', metrics)]);
    expect(plot.axis).toBe('block_size');
    expect(plot.xLabels).toEqual(['4 KiB', '8 KiB']);
    // host does not vary: not in the names.
    expect(plot.series.map((s) => [s.name, s.values])).toEqual([
      ['BW_GBPS rank=1', [4096, 8192]],
      ['BW_GBPS rank=2', [8192, 16384]],
    ]);
  });

  it('keeps units apart, one chart per unit, and uses a log scale when a line chart spans more than 20x', () => {
    const metrics = [8, 16].flatMap((c) => [
      metric('TTFT', 100 * c, { concurrency: c }),
      metric('E2EL', 10000 * c, { concurrency: c }),
      metric('TPUT', 50 * c, { concurrency: c }, 'tok/s', true),
    ]);
    const plots = planPlots([record('t', metrics)]);
    expect(plots.map((p) => [p.unit, p.series.map((s) => s.name), p.yScale, p.title])).toEqual([
      ['ms', ['TTFT', 'E2EL'], 'logarithmic', 'latency vs concurrency (ms)'],
      ['tok/s', ['TPUT'], 'linear', 'throughput vs concurrency (tok/s)'],
    ]);
  });

  it('leaves a gap where a series lacks a point, and gives each record of a test its own plots', () => {
    const a = record('t', [metric('X', 1, { rank: 0 }), metric('X', 2, { rank: 1 }), metric('Y', 5, { rank: 1 }), metric('Y', 6, { rank: 2 })]);
    const b = { ...record('t', [metric('X', 3, { rank: 0 }), metric('X', 4, { rank: 1 })]), jobId: '2' };
    const plots = planPlots([a, b]);
    expect(plots[0].series.map((s) => s.values)).toEqual([
      [1, 2, null],
      [null, 5, 6],
    ]);
    expect(plots.map((p) => [p.id, p.jobId])).toEqual([
      ['plot-1', '1'],
      ['plot-2', '2'],
    ]);
  });

  it('formats sizes in binary units', () => {
    expect([512, 4096, 1536, 64 * 2 ** 20, 2 ** 40].map(formatBytes)).toEqual(['512 B', '4 KiB', '1.5 KiB', '64 MiB', '1 TiB']);
  });
});

describe('regressions against a baseline', () => {
  it('judges a change by the metric direction, strictly beyond the threshold', () => {
    expect(changeStatus(100, 105, false, 0.05)).toBe('within'); // exactly 5% worse: not beyond
    expect(changeStatus(100, 105.1, false, 0.05)).toBe('regression');
    expect(changeStatus(100, 94.9, true, 0.05)).toBe('regression');
    expect(changeStatus(100, 105.1, true, 0.05)).toBe('improvement');
    expect(changeStatus(100, 90, false, 0.05)).toBe('improvement');
    expect(changeStatus(100, 200, undefined, 0.05)).toBe('undirected');
    expect(changeStatus(0, 3, false, 0.05)).toBe('regression'); // failed requests 0 -> 3
    expect(changeStatus(0, 0, false, 0.05)).toBe('within');
    expect(changeStatus(-10, -12, true, 0.05)).toBe('regression'); // relative to |baseline|
  });

  it('compares the latest record of each test, by name and labels in any order', () => {
    const old = [record('t', [metric('LAT', 10, { a: 1, b: 'x' }, 'ms', false)])];
    const current = [
      record('t', [metric('LAT', 99, { b: 'x', a: 1 }, 'ms', false)], '2025-11-03T10:00:00.000Z', '5'),
      record('t', [metric('LAT', 10.4, { b: 'x', a: '1' }, 'ms', false)], '2025-11-03T11:00:00.000Z', '6'),
    ];
    const comparison = compareResults(current, old);
    expect(comparison.metrics).toHaveLength(1);
    expect(comparison.metrics[0]).toMatchObject({ current: 10.4, baseline: 10, status: 'within' });
    expect(comparison.metrics[0].change).toBeCloseTo(0.04);
    expect(() => compareResults(current, old, -1)).toThrow(/threshold must be a fraction >= 0/);
  });

  it('a skip is no result: a test skipped since is compared by its last result, and a skip-only test is in neither side', () => {
    const skip = (testId: string, end: string): TestRecord => ({ ...record(testId, [], end, ''), jobId: null, verdict: 'skipped', skipReason: 'GPU type GB200 is not in supported_gpus [GB300]' });
    const old = [record('t', [metric('LAT', 10, {}, 'ms', false)]), skip('only-skipped', '2025-11-03T08:00:00.000Z')];
    const current = [record('t', [metric('LAT', 12, {}, 'ms', false)], '2025-11-03T10:00:00.000Z', '5'), skip('t', '2025-11-03T12:00:00.000Z'), skip('only-skipped', '2025-11-03T12:00:00.000Z')];
    const comparison = compareResults(current, old);
    expect(comparison.metrics.map((m) => [m.testId, m.current, m.status])).toEqual([['t', 12, 'regression']]);
    expect(comparison.verdictChanges).toEqual([]); // not passed -> skipped
    expect([comparison.onlyInCurrent, comparison.onlyInBaseline]).toEqual([[], []]);
  });
});
