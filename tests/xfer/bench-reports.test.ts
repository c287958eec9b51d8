// The CT perftests' reports from known timings: the definitions (first start to last end, each
// pattern's OWN mean bandwidth, isolated latency = the slowest initiator's mean), the reference's
// JSON layout and the 3-decimal table.
import { describe, expect, it } from 'vitest';
import { ctReport, formatCtReport, type CtRunInfo } from '../../runners/xfer/benches/ct-report.ts';
import { formatSequentialReport, sequentialReport, type PatternInfo, type SequentialRunData } from '../../runners/xfer/benches/sequential-report.ts';

const ms = 1e6; // ns

describe('CT perftest report', () => {
  const info: CtRunInfo = {
    matrixFile: 'seed.txt', ranks: 4, backend: 'shm', xferOp: 'WRITE', shards: 1, memType: 'cpu',
    iterations: 2, warmupIterations: 1, verifiedBuffers: true, bytesPerIteration: 4_000_000,
  };
  // Rank 0: 2 MB in 1 ms then 2 ms; rank 1: 2 MB in 2 ms twice; rank 2 initiates nothing.
  const report = ctReport(info, [
    { rank: 1, bytes: 2_000_000, spans: [[10 * ms, 12 * ms], [20 * ms, 22 * ms]] },
    { rank: 0, bytes: 2_000_000, spans: [[11 * ms, 12 * ms], [20 * ms, 22.5 * ms]] },
    { rank: 2, bytes: 0, spans: [[11 * ms, 11 * ms], [21 * ms, 21 * ms]] },
  ]);

  it('total latency spans every rank and iteration; per iteration, first start to last end', () => {
    expect(report.total_latency_s).toBeCloseTo(0.0125, 12);
    expect(report.min_iter_latency_ms).toBeCloseTo(2, 9);
    expect(report.max_iter_latency_ms).toBeCloseTo(2.5, 9);
    expect(report.avg_iter_latency_ms).toBeCloseTo(2.25, 9);
    expect(report.total_size_gb).toBe(0.004);
    expect(report.aggregate_bw_gbps).toBeCloseTo(4e6 / 2.25e6, 9);
  });

  it('bandwidth by rank: average over iterations, min and max, only ranks that initiate', () => {
    expect(report.per_rank.map((r) => r.rank)).toEqual([0, 1]);
    expect(report.per_rank[0]).toMatchObject({ avg_latency_ms: 1.75, min_bw_gbps: 0.8, max_bw_gbps: 2 });
    expect(report.per_rank[0].avg_bw_gbps).toBeCloseTo(2e6 / 1.75e6, 12);
    expect(report.per_rank[1]).toMatchObject({ avg_bw_gbps: 1, min_bw_gbps: 1, max_bw_gbps: 1 });
    expect(report.avg_bw_gbps).toBeCloseTo((2e6 / 1.75e6 + 1) / 2, 12);
  });

  it("prints kvbench's table first (its columns, tabulate's layout, 6 decimals), the project's columns after, and a row per rank", () => {
    const text = formatCtReport(report);
    expect(text).toContain('CT perftest: seed.txt, 4 ranks, backend shm, WRITE, 1 shard(s), mem_type cpu, 2 iteration(s) after 1 warm-up, every receive buffer verified');
    // kvbench (tabulate, floatfmt .6f) prints these three lines for the same figures; ours continue them.
    const lines = text.split('\n');
    const at = lines.indexOf('Performance metrics:');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1].startsWith('  Iters    Total time (s)    Avg latency/iter (s)    Total size (GB)  ')).toBe(true);
    expect(lines[at + 2].startsWith('-------  ----------------  ----------------------  -----------------  ')).toBe(true);
    expect(lines[at + 3].startsWith('      2          0.012500                0.006250           0.004000  ')).toBe(true);
    expect(lines[at + 1]).toMatch(/Total size \(GB\) +Avg BW by rank \(GB\/s\) +Aggregate BW \(GB\/s\) +Xfer latency\/iter \(ms\)$/);
    expect(lines[at + 3]).toMatch(/0\.004000 +1\.071429 +1\.777778 +2\.250000$/);
    expect(report.avg_latency_per_iter_s).toBeCloseTo(0.00625, 12);
    expect(text).toMatch(/\n +0 +2000000 +1\.750 +1\.143 +0\.800 +2\.000\n/);
  });
});

describe('sequential CT perftest report', () => {
  const p = (matrix: number[][], op = 'WRITE'): PatternInfo => ({ matrixFile: 'm.txt', matrix, op, memType: 'cpu', shards: 1, sleepBeforeSec: 0, sleepAfterSec: 0, metadata: {} });
  const data: SequentialRunData = {
    // Pattern 0: ranks 0 and 1 send 1 MB each to rank 2; pattern 1: rank 1 sends 3 MB to rank 0.
    patterns: [p([[0, 0, 1e6], [0, 0, 1e6], [0, 0, 0]]), p([[0, 0, 0], [3e6, 0, 0], [0, 0, 0]])],
    bytes: [[1e6, 0], [1e6, 3e6], [0, 0]],
    isolationMeanNs: [[1 * ms, null], [2 * ms, 1.5 * ms], [null, null]],
    iterations: [
      { startNs: 100 * ms, spans: [[[101 * ms, 102 * ms], null], [[101.5 * ms, 103.5 * ms], [104 * ms, 107 * ms]], [null, null]] },
    ],
    startNs: 50 * ms,
    preparedNs: 60 * ms,
    isolationStartNs: 70 * ms,
    finishedNs: 120 * ms,
    epochOffsetNs: 1_700_000_000e9,
    settings: { backend: 'shm', sleep_scale: 0.001 },
  };
  const report = sequentialReport(data);

  it("gives each pattern its own latency, isolated latency and mean bandwidth (not the last pattern's)", () => {
    const [p0, p1] = report.iterations_results[0];
    expect(p0).toMatchObject({ size: 0.002, num_senders: 2 });
    expect(p0.latency).toBeCloseTo(2.5, 9);
    expect(p0.isolated_latency).toBeCloseTo(2, 9);
    expect(p0.mean_bw).toBeCloseTo((1 + 0.5) / 2, 12);
    expect(p1).toMatchObject({ size: 0.003, num_senders: 1 });
    expect(p1.latency).toBeCloseTo(3, 9);
    expect(p1.isolated_latency).toBeCloseTo(1.5, 9);
    expect(p1.mean_bw).toBeCloseTo(1, 12);
  });

  it("has the reference's JSON layout, timestamps in seconds since the epoch", () => {
    expect(Object.keys(report)).toEqual(['iterations_results', 'metadata']);
    expect(Object.keys(report.iterations_results[0][0]).sort()).toEqual(['isolated_latency', 'latency', 'max_end_ts', 'mean_bw', 'min_start_ts', 'num_senders', 'size']);
    expect(report.metadata.ts).toBeCloseTo(1_700_000_000.05, 6);
    expect(report.metadata.prepare_tp_time).toBeCloseTo(0.01, 9);
    expect(report.metadata.sol_calculation_ts).toBeCloseTo(1_700_000_000.07, 6); // kvbench's: the isolated phase's start
    expect(Object.keys(report.metadata).slice(0, 5)).toEqual(['ts', 'prepare_tp_time', 'sol_calculation_ts', 'finished_ts', 'iters']);
    expect(report.metadata.finished_ts).toBeCloseTo(1_700_000_000.12, 6);
    expect(report.metadata.iters[0].start_ts).toBeCloseTo(1_700_000_000.1, 6);
    expect(report.metadata.iters[0].tps_start_ts[1]).toBeCloseTo(1_700_000_000.104, 6);
    expect(report.metadata.iters[0].tps_end_ts[0]).toBeCloseTo(1_700_000_000.1035, 6);
    expect(report.metadata).toMatchObject({ backend: 'shm', sleep_scale: 0.001 });
  });

  it('prints one table per workload iteration as kvbench does (tabulate, 3 decimals)', () => {
    expect(formatSequentialReport(report)).toBe(
      [
        'Iteration 1/1',
        '  Transfer size (GB)    Latency (ms)    Isolated Latency (ms)    Num Senders    Mean BW (GB/s)',
        '--------------------  --------------  -----------------------  -------------  ----------------',
        '               0.002           2.500                    2.000              2             0.750',
        '               0.003           3.000                    1.500              1             1.000',
        '',
      ].join('\n'),
    );
  });
});
