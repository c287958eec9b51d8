// The CT perftests' JSON reports as metrics: reports built by the benchmarks' own report code
// (so the extractors read what the commands write), plus truncated and malformed files.
import { describe, expect, it } from 'vitest';
import { extractCtPerftestMetrics } from '../../../framework/metrics/extractors/ct-perftest.ts';
import { extractSequentialCtPerftestMetrics } from '../../../framework/metrics/extractors/sequential-ct-perftest.ts';
import { getExtractor } from '../../../framework/metrics/extractors/index.ts';
import { ctReport } from '../../../runners/xfer/benches/ct-report.ts';
import { sequentialReport, type PatternInfo } from '../../../runners/xfer/benches/sequential-report.ts';
import { formatCtReport } from '../../../runners/xfer/benches/ct-report.ts';

const ms = 1e6;

const ctJson = JSON.stringify(
  ctReport(
    { matrixFile: 'm.txt', ranks: 2, backend: 'shm', xferOp: 'READ', shards: 1, memType: 'cpu', iterations: 2, warmupIterations: 0, verifiedBuffers: true, bytesPerIteration: 3e6 },
    [{ rank: 1, bytes: 3e6, spans: [[0, 1 * ms], [2 * ms, 5 * ms]] }],
  ),
  null,
  2,
);

describe('ct-perftest extractor', () => {
  it('is registered, and reads totals and per-rank bandwidths with units', () => {
    expect(getExtractor('ct-perftest')).toBe(extractCtPerftestMetrics);
    const { metrics, problems } = extractCtPerftestMetrics(ctJson);
    expect(problems).toEqual([]);
    const by = (name: string) => metrics.filter((m) => m.name === name);
    expect(by('TOTAL_LATENCY_S')).toEqual([{ name: 'TOTAL_LATENCY_S', value: 0.005, unit: 's', higherIsBetter: false, labels: {} }]);
    expect(by('AVG_ITER_LATENCY_MS')[0]).toMatchObject({ value: 2, unit: 'ms' });
    expect(by('TOTAL_SIZE_GB')[0]).toMatchObject({ value: 0.003, unit: 'GB' });
    expect(by('AGGREGATE_BW_GBPS')[0]).toMatchObject({ value: 1.5, unit: 'GB/s', higherIsBetter: true });
    expect(by('BW_GBPS')).toEqual([{ name: 'BW_GBPS', value: 1.5, unit: 'GB/s', higherIsBetter: true, labels: { rank: 1 } }]);
    expect(by('MIN_BW_GBPS')[0]).toMatchObject({ value: 1, labels: { rank: 1 } });
    expect(by('MAX_BW_GBPS')[0]).toMatchObject({ value: 3, labels: { rank: 1 } });
  });

  it("reads kvbench's own ct-perftest output (no JSON there): its table, after its logger's prefix line", () => {
    // What kvbench's ct-perftest logs on rank 0 (tabulate, floatfmt .6f), srun --label prefixes included.
    const log = [
      '0: 2025-08-26 10:00:00,000 - test.custom_traffic_perftest - INFO - Performance metrics:',
      '0:   Iters    Total time (s)    Avg latency/iter (s)    Total size (GB)',
      '0: -------  ----------------  ----------------------  -----------------',
      '0:      50          0.123456                0.002469           0.004205',
      '1: 2025-08-26 10:00:00,100 - nixl - INFO - done',
    ].join('\n');
    const { metrics, problems } = extractCtPerftestMetrics(log);
    expect(problems).toEqual([]);
    expect(metrics.map((m) => [m.name, m.value, m.unit])).toEqual([['TOTAL_LATENCY_S', 0.123456, 's'], ['AVG_LATENCY_PER_ITER_S', 0.002469, 's'], ['TOTAL_SIZE_GB', 0.004205, 'GB']]);
    // This project's stdout carries the same table with its columns after kvbench's.
    const ours = extractCtPerftestMetrics(formatCtReport(JSON.parse(ctJson)));
    expect(ours.problems).toEqual([]);
    expect(ours.metrics.map((m) => m.name)).toEqual(['TOTAL_LATENCY_S', 'AVG_LATENCY_PER_ITER_S', 'TOTAL_SIZE_GB', 'AVG_BW_GBPS', 'AGGREGATE_BW_GBPS', 'AVG_ITER_LATENCY_MS']);
    expect(ours.metrics[1].value).toBe(0.0025); // 5 ms over 2 iterations
    expect(extractCtPerftestMetrics('0: starting\n').problems).toEqual(["no CT perftest report: neither a JSON report nor kvbench's table (Iters | Total time (s) | Avg latency/iter (s) | Total size (GB))"]);
    expect(extractCtPerftestMetrics(log.split('\n').slice(0, 3).join('\n')).problems).toEqual(["kvbench's table is cut short after its header (line 2)"]);
  });

  it('reports a truncated file, a missing field and a report without ranks as problems', () => {
    expect(extractCtPerftestMetrics(ctJson.slice(0, 200)).problems[0]).toMatch(/the ct-perftest JSON report does not parse \(truncated\?\)/);
    const partial = JSON.parse(ctJson);
    delete partial.avg_bw_gbps;
    partial.per_rank = [];
    expect(extractCtPerftestMetrics(JSON.stringify(partial)).problems).toEqual(['avg_bw_gbps: expected a number, got undefined', 'per_rank: no rank moved any bytes']);
    expect(extractCtPerftestMetrics('[1, 2]').problems).toEqual(['the ct-perftest JSON report is not an object']);
  });
});

describe('sequential-ct-perftest extractor', () => {
  const p = (matrix: number[][]): PatternInfo => ({ matrixFile: 'm', matrix, op: 'WRITE', memType: 'cpu', shards: 1, sleepBeforeSec: 0, sleepAfterSec: 0, metadata: {} });
  const report = sequentialReport({
    patterns: [p([[0, 2e6], [0, 0]]), p([[0, 0], [1e6, 0]])],
    bytes: [[2e6, 0], [0, 1e6]],
    isolationMeanNs: [[1 * ms, null], [null, 0.5 * ms]],
    iterations: [
      { startNs: 10 * ms, spans: [[[11 * ms, 13 * ms], null], [null, [14 * ms, 15 * ms]]] },
      { startNs: 20 * ms, spans: [[[20 * ms, 24 * ms], null], [null, [25 * ms, 27 * ms]]] },
    ],
    startNs: 0,
    preparedNs: 1 * ms,
    isolationStartNs: 2 * ms,
    finishedNs: 30 * ms,
    epochOffsetNs: 1e18,
    settings: {},
  });

  it('reads per pattern and iteration: latency, own mean bandwidth, isolated latency, size, workload latency', () => {
    const { metrics, problems } = extractSequentialCtPerftestMetrics(JSON.stringify(report));
    expect(problems).toEqual([]);
    const values = (name: string) => metrics.filter((m) => m.name === name).map((m) => [m.labels, Number(m.value.toFixed(6))]);
    expect(values('LATENCY_MS')).toEqual([[{ pattern: 0, iteration: 1 }, 2], [{ pattern: 1, iteration: 1 }, 1], [{ pattern: 0, iteration: 2 }, 4], [{ pattern: 1, iteration: 2 }, 2]]);
    expect(values('MEAN_BW_GBPS')).toEqual([[{ pattern: 0, iteration: 1 }, 1], [{ pattern: 1, iteration: 1 }, 1], [{ pattern: 0, iteration: 2 }, 0.5], [{ pattern: 1, iteration: 2 }, 0.5]]);
    expect(values('ISOLATED_LATENCY_MS')).toEqual([[{ pattern: 0 }, 1], [{ pattern: 1 }, 0.5]]);
    expect(values('TRANSFER_SIZE_GB')).toEqual([[{ pattern: 0 }, 0.002], [{ pattern: 1 }, 0.001]]);
    // From epoch-second timestamps (as the reference writes them): exact to a fraction of a microsecond.
    const workload = metrics.filter((m) => m.name === 'WORKLOAD_LATENCY_MS');
    expect(workload.map((m) => m.labels)).toEqual([{ iteration: 1 }, { iteration: 2 }]);
    expect(workload[0].value).toBeCloseTo(5, 3);
    expect(workload[1].value).toBeCloseTo(7, 3);
    expect(metrics.find((m) => m.name === 'MEAN_BW_GBPS')).toMatchObject({ unit: 'GB/s', higherIsBetter: true });
  });

  it("reads kvbench's JSON, whose nulls (a pattern nobody ran, rank 0's own unset timestamps) are not values", () => {
    const kvbench = {
      iterations_results: [[
        { size: 0.004, latency: 2.5, isolated_latency: 2.0, num_senders: 2, mean_bw: 1.6, min_start_ts: 100.001, max_end_ts: 100.0035 },
        { size: 0, latency: null, isolated_latency: 1.0, num_senders: 0, mean_bw: 1.6, min_start_ts: 100.0, max_end_ts: 100.0 },
      ]],
      metadata: { ts: 99.0, iters: [{ start_ts: 100.0, tps_start_ts: [100.001, null], tps_end_ts: [100.0035, null] }], prepare_tp_time: 0.5, sol_calculation_ts: 99.6, finished_ts: 101.0 },
    };
    const { metrics, problems } = extractSequentialCtPerftestMetrics(JSON.stringify(kvbench));
    expect(problems).toEqual([]);
    expect(metrics.filter((m) => m.name === 'LATENCY_MS').map((m) => [m.labels, m.value])).toEqual([[{ pattern: 0, iteration: 1 }, 2.5]]);
    expect(metrics.find((m) => m.name === 'WORKLOAD_LATENCY_MS')!.value).toBeCloseTo(3.5, 6);
  });

  it('reports malformed results', () => {
    expect(extractSequentialCtPerftestMetrics('{"iterations_results": {}}').problems).toEqual(['iterations_results: expected a list of workload iterations, each a list of patterns']);
    const ragged = { iterations_results: [report.iterations_results[0], report.iterations_results[1].slice(0, 1)] };
    expect(extractSequentialCtPerftestMetrics(JSON.stringify(ragged)).problems).toContain('iterations_results: the iterations do not all have 2 patterns');
    expect(extractSequentialCtPerftestMetrics('{"iterations_results": [[{"latency": "x"').problems[0]).toMatch(/does not parse/);
  });
});
