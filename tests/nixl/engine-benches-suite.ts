// The sweep, ep, kvpipe and cache-engine example configs and what their runs must leave (shared by the local
// and the SLURM suites): every test passed, and the metrics each config asks for.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { recordOf, valuesOf, type NixlSuiteRun } from './nixl-suite.ts';

export const ENGINE_BENCH_CONFIGS = [
  'sweep_shm_read_write',
  'sweep_ucx_read_write',
  'ep_shm_4ranks',
  'kvpipe_shm_16x8M',
  'kvpipe_shm_16x8M_work',
  'kvpipe_shm_100x1M',
  'kvpipe_shm_100x1M_work',
  'cache_engine_shm',
];

const BLOCKS = Array.from({ length: 15 }, (_, i) => 4096 * 2 ** i); // 4 KiB .. 64 MiB

export function expectEngineBenchResults(run: NixlSuiteRun): void {
  expect(run.exitCode, run.output).toBe(0);
  for (const name of ENGINE_BENCH_CONFIGS) expect(recordOf(run, `nixl_perf_${name}`), name).toMatchObject({ verdict: 'passed', schedulerState: 'COMPLETED' });

  for (const name of ['sweep_shm_read_write', 'sweep_ucx_read_write']) {
    const record = recordOf(run, `nixl_perf_${name}`);
    for (const op of ['READ', 'WRITE']) {
      const bw = valuesOf(record, 'BW_GBPS').filter((m) => m.labels.op_type === op);
      expect(bw.map((m) => m.labels.block_size), `${name} ${op}`).toEqual(BLOCKS);
      expect(bw.every((m) => m.value > 0)).toBe(true);
      expect(valuesOf(record, 'P99_TX_US').filter((m) => m.labels.op_type === op)).toHaveLength(15);
    }
    expect(readFileSync(path.join(record.logDir!, 'sweep.log'), 'utf8')).toContain('Consistency check passed: every transferred byte verified in all 30 steps');
  }
  expect(run.csvRows.some((row) => row.startsWith('nixl_perf_sweep_shm_read_write_block_size:67108864_batch_size:1_op_type:WRITE,') && row.endsWith(',BW_GBPS'))).toBe(true);

  const ep = recordOf(run, 'nixl_perf_ep_shm_4ranks');
  expect(valuesOf(ep, 'RANKS_PASSED').map((m) => [m.labels.mode, m.labels.experts_per_rank, m.value])).toEqual([
    ['dispatch', 8, 4],
    ['combine', 8, 4],
    ['e2e', 8, 4],
    ['dispatch', 32, 4],
    ['combine', 32, 4],
    ['e2e', 32, 4],
  ]);
  // every mode and size has its figures; a bandwidth is printed with 2 decimals, so on a slow or
  // busy host it may read 0.00, while a latency only grows
  for (const name of ['BW_GBPS_AVG', 'LAT_US_MAX']) expect(valuesOf(ep, name).map((m) => `${m.labels.mode}:${m.labels.experts_per_rank}`), name).toEqual(['dispatch:8', 'combine:8', 'e2e:8', 'dispatch:32', 'combine:32', 'e2e:32']);
  expect(valuesOf(ep, 'BW_GBPS_AVG').every((m) => m.value >= 0)).toBe(true);
  expect(valuesOf(ep, 'LAT_US_MAX').every((m) => m.value > 0)).toBe(true);
  expect(valuesOf(ep, 'CP_AVG_MS').map((m) => `${m.labels.experts_per_rank}:${m.labels.operation}`)).toEqual(
    [8, 32].flatMap((e) => ['init', 'connect', 'disconnect', 'reconnect', 'destroy'].map((op) => `${e}:${op}`)),
  );

  for (const name of ['kvpipe_shm_16x8M', 'kvpipe_shm_16x8M_work', 'kvpipe_shm_100x1M', 'kvpipe_shm_100x1M_work']) {
    const record = recordOf(run, `nixl_perf_${name}`);
    expect(valuesOf(record, 'VERIFIED_ROUNDS'), name).toEqual([{ labels: {}, value: 2 }]);
    // 2 commits per round: the objects are more bytes than the 64 MiB buffer holds
    expect(valuesOf(record, 'COMMITS'), name).toEqual([{ labels: {}, value: 4 }]);
    expect(valuesOf(record, 'THROUGHPUT_GBPS').map((m) => m.labels.round)).toEqual([1, 2]);
    const log = readFileSync(path.join(record.logDir!, 'kvpipe.log'), 'utf8');
    expect(log.match(/All data verified successfully!/g)).toHaveLength(2);
  }

  // the CacheEngine test as a config: both rounds stored, retrieved and checked
  const ce = recordOf(run, 'nixl_perf_cache_engine_shm');
  expect(valuesOf(ce, 'VERIFIED_ROUNDS')).toEqual([{ labels: {}, value: 2 }]);
  for (const name of ['STORE_TIME_S', 'THROUGHPUT_GBPS', 'RETRIEVE_TIME_S', 'RETRIEVAL_THROUGHPUT_GBPS']) {
    expect(valuesOf(ce, name).map((m) => m.labels.round), name).toEqual([1, 2]);
  }
  for (const m of valuesOf(ce, 'THROUGHPUT_GBPS')) {
    const gib = valuesOf(ce, 'THROUGHPUT_GIBPS').find((x) => x.labels.round === m.labels.round)!.value;
    // both printed with 2 decimals, each in its own unit: equal to within their rounding
    expect(Math.abs(m.value - (gib * 2 ** 30) / 1e9)).toBeLessThanOrEqual(0.011);
  }
}
