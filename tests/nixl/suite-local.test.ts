// The example nixl configs through `vitest run --project nixl` on the LOCAL scheduler (the srun
// shim runs the ranks): kvbench's example matrix with READ and WRITE on shm, verified; a sequence of
// patterns; a llama-405b matgen workload (16 ranks) run with its compute sleeps scaled down.
// Checked in what the run leaves: results.json, the CSV, the benchmarks' JSON reports.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { recordOf, runNixlSuite, valuesOf, type NixlSuiteRun } from './nixl-suite.ts';

describe('nixl project on the local scheduler', () => {
  let run: NixlSuiteRun;

  test('every example passes', { timeout: 300_000 }, async () => {
    run = await runNixlSuite(['ct_seed_write_shm', 'ct_seed_read_shm', 'sequential_shm', 'matgen_llama405b_shm'], 'local');
    expect(run.exitCode, run.output).toBe(0);
    expect(run.records.map((r) => [r.testId, r.verdict, r.schedulerState]).sort()).toEqual([
      ['nixl_perf_ct_seed_read_shm', 'passed', 'COMPLETED'],
      ['nixl_perf_ct_seed_write_shm', 'passed', 'COMPLETED'],
      ['nixl_perf_matgen_llama405b_shm', 'passed', 'COMPLETED'],
      ['nixl_perf_sequential_shm', 'passed', 'COMPLETED'],
    ]);
  });

  test('CT WRITE and READ: every initiating rank has a bandwidth, the buffers were verified', () => {
    for (const [id, ranks] of [['nixl_perf_ct_seed_write_shm', [0, 1, 2, 3]], ['nixl_perf_ct_seed_read_shm', [2, 3]]] as const) {
      const record = recordOf(run, id);
      expect(valuesOf(record, 'BW_GBPS').map((m) => m.labels.rank)).toEqual(ranks);
      expect(valuesOf(record, 'TOTAL_SIZE_GB')).toEqual([{ labels: {}, value: (4 * 1048576 + 10240) / 1e9 }]);
      for (const name of ['TOTAL_LATENCY_S', 'AVG_ITER_LATENCY_MS', 'AGGREGATE_BW_GBPS', 'AVG_BW_GBPS']) expect(valuesOf(record, name)[0].value, name).toBeGreaterThan(0);
      const report = JSON.parse(readFileSync(path.join(record.logDir!, 'ct_perftest.json'), 'utf8'));
      expect(report).toMatchObject({ verified_buffers: true, ranks: 4, iterations: 20, xfer_op: id.includes('read') ? 'READ' : 'WRITE' });
    }
    expect(run.csvRows.some((row) => row.startsWith('nixl_perf_ct_seed_read_shm_rank:2,') && row.endsWith(',BW_GBPS'))).toBe(true);
  });

  test('sequential: latency and own mean bandwidth per pattern and iteration, isolated latency per pattern', () => {
    const record = recordOf(run, 'nixl_perf_sequential_shm');
    expect(valuesOf(record, 'LATENCY_MS').map((m) => `${m.labels.pattern}/${m.labels.iteration}`)).toEqual(['0/1', '1/1', '2/1', '0/2', '1/2', '2/2']);
    expect(valuesOf(record, 'ISOLATED_LATENCY_MS').map((m) => m.labels.pattern)).toEqual([0, 1, 2]);
    expect(valuesOf(record, 'MEAN_BW_GBPS')).toHaveLength(6);
    expect(run.csvRows.some((row) => row.startsWith('nixl_perf_sequential_shm_pattern:1_iteration:2,') && row.endsWith(',LATENCY_MS'))).toBe(true);
  });

  test('matgen: the generated workload ran on 16 ranks, sleeps scaled by 0.001', () => {
    const record = recordOf(run, 'nixl_perf_matgen_llama405b_shm');
    expect(valuesOf(record, 'TRANSFER_SIZE_GB')).toHaveLength(4); // 4 user requests, batch size 1
    const report = JSON.parse(readFileSync(path.join(record.logDir!, 'sequential_ct_perftest.json'), 'utf8'));
    expect(report.metadata).toMatchObject({ ranks: 16, sleep_scale: 0.001, verified_buffers: true });
    expect(report.metadata.patterns.every((p: { sleep_before_launch_sec: number }) => p.sleep_before_launch_sec > 0)).toBe(true);
  });
});
