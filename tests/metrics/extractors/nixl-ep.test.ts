import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractNixlEpMetrics } from '../../../framework/metrics/extractors/nixl-ep.ts';

const log = (name: string) => readFileSync(new URL(`../../fixtures/logs/nixl/${name}`, import.meta.url), 'utf8');

describe('NIXL EP extractor', () => {
  it("reads the NIXL EP tests' data-plane lines and control-plane table", () => {
    const { metrics, problems } = extractNixlEpMetrics(log('nixl-ep-seed.log'));
    expect(problems).toEqual([]);
    const data = { mode: 'e2e', experts_per_rank: 36 };
    expect(metrics.filter((m) => m.name.startsWith('BW_GBPS_') || m.name.startsWith('LAT_US_')).map((m) => [m.name, m.value, m.labels])).toEqual([
      ['BW_GBPS_AVG', 42.88, data],
      ['BW_GBPS_MIN', 42.86, data],
      ['BW_GBPS_MAX', 42.89, data],
      ['LAT_US_AVG', 519.3, data],
      ['LAT_US_MIN', 519.1, data],
      ['LAT_US_MAX', 519.5, data],
    ]);
    expect(metrics.find((m) => m.name === 'RANKS_PASSED')?.value).toBe(8);
    const cp = metrics.filter((m) => m.name === 'CP_AVG_MS');
    expect(cp.map((m) => [m.labels.operation, m.value])).toEqual([
      ['init', 150.23],
      ['connect', 245.67],
      ['disconnect', 12.45],
      ['reconnect', 198.34],
      ['destroy', 85.12],
    ]);
    expect(metrics.find((m) => m.name === 'CP_MAX_MS' && m.labels.operation === 'reconnect')).toMatchObject({ value: 201.56, unit: 'ms', labels: { experts_per_rank: 8 } });
    expect(metrics.find((m) => m.name === 'CP_TOTAL_MS')).toMatchObject({ value: 691.81, labels: { experts_per_rank: 8 } });
  });

  it('reads the ep command\'s output: three modes, two expert counts, both control-plane tables', () => {
    const { metrics, problems } = extractNixlEpMetrics(log('ep-shm.log'));
    expect(problems).toEqual([]);
    const bw = metrics.filter((m) => m.name === 'BW_GBPS_AVG');
    expect(bw.map((m) => [m.labels.mode, m.labels.experts_per_rank])).toEqual([
      ['dispatch', 8],
      ['combine', 8],
      ['e2e', 8],
      ['dispatch', 32],
      ['combine', 32],
      ['e2e', 32],
    ]);
    expect(metrics.filter((m) => m.name === 'RANKS_PASSED').every((m) => m.value === 4)).toBe(true);
    expect(metrics.filter((m) => m.name === 'CP_TOTAL_MS').map((m) => m.labels.experts_per_rank)).toEqual([8, 32]);
    expect(metrics.filter((m) => m.name === 'CP_AVG_MS')).toHaveLength(10);
  });

  it("reads the ep command's cross-GPU rate (bytes received from other GPUs) beside the test's bandwidth", () => {
    const text = [
      'Mode: dispatch',
      'Experts: 36/rank (72 total), TopK: 8',
      'Data Plane (dispatch): 2/2 ranks passed',
      'Bandwidth (GB/s): avg=600.10, min=599.00, max=601.20',
      'Latency (μs):     avg=404.5, min=404.0, max=405.0',
      'Cross-GPU bytes per rank per iteration (received from other GPUs): avg=121000000, min=120500000, max=121500000',
      'Cross-GPU rate (GB/s): avg=299.10, min=297.40, max=300.80',
      'Kernel dispatch (μs per run): data avg=380.0, min=379.0, max=381.0; flag wait avg=20.0, min=18.0, max=22.0',
    ].join('\n');
    const { metrics, problems } = extractNixlEpMetrics(text);
    expect(problems).toEqual([]);
    const labels = { mode: 'dispatch', experts_per_rank: 36 };
    expect(metrics.filter((m) => m.name.startsWith('CROSS_GPU_') || m.name.startsWith('BW_GBPS_')).map((m) => [m.name, m.value, m.labels])).toEqual([
      ['BW_GBPS_AVG', 600.1, labels],
      ['BW_GBPS_MIN', 599, labels],
      ['BW_GBPS_MAX', 601.2, labels],
      ['CROSS_GPU_GBPS_AVG', 299.1, labels],
      ['CROSS_GPU_GBPS_MIN', 297.4, labels],
      ['CROSS_GPU_GBPS_MAX', 300.8, labels],
    ]);
    const host = extractNixlEpMetrics('Mode: e2e\nCross-rank rate (GB/s): avg=1.50, min=1.25, max=1.75');
    expect(host.metrics.find((m) => m.name === 'CROSS_GPU_GBPS_MIN')).toMatchObject({ value: 1.25, labels: { mode: 'e2e' } });
  });

  it("reads --test <op>'s line (test_control_plane.py log_single_op_results): the mean across ranks, labelled across: ranks", () => {
    const { metrics, problems } = extractNixlEpMetrics('Running: connect (8 experts/rank, 64 total)\nCONNECT: 2812.40ms avg across 8 ranks (min=2790.11, max=2841.95) [8 experts/rank]\n');
    expect(problems).toEqual([]);
    const labels = { operation: 'connect', experts_per_rank: 8, across: 'ranks' };
    expect(metrics.map((m) => [m.name, m.value, m.labels])).toEqual([
      ['CP_AVG_MS', 2812.4, labels],
      ['CP_MIN_MS', 2790.11, labels],
      ['CP_MAX_MS', 2841.95, labels],
      ['CP_RANKS', 8, labels],
    ]);
  });

  it("reads the data-plane test's [Node N] prefixed lines", () => {
    const { metrics } = extractNixlEpMetrics('[Node 0] Mode: dispatch\n[Node 0] Experts: 8/rank (64 total)\n[Node 0] Data Plane (dispatch): 8/8 ranks passed\n[Node 0] Bandwidth (GB/s): avg=103.10, min=101.20, max=104.90\n');
    expect(metrics.find((m) => m.name === 'BW_GBPS_AVG')).toMatchObject({ value: 103.1, labels: { mode: 'dispatch', experts_per_rank: 8 } });
  });

  it('reports ranks that failed verification, and a log without result lines', () => {
    const failed = extractNixlEpMetrics(log('nixl-ep-seed.log').replace('8/8 ranks passed', '7/8 ranks passed'));
    expect(failed.problems).toEqual([expect.stringMatching(/Data Plane \(e2e\): 7\/8 ranks passed: 1 rank\(s\) failed/)]);
    expect(extractNixlEpMetrics('Traceback (most recent call last):\n  RuntimeError: etcd unreachable\n').problems[0]).toMatch(/no NIXL EP result lines/);
  });
});
