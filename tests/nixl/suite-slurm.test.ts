// The CT perftest's example matrix (test_configs/nixl/perf/ct_seed_*.yaml) with READ and WRITE on shm, verified, and a sequence of patterns, through
// `vitest run --project nixl` on the REAL local SLURM cluster (scripts/slurm-local.sh): sbatch,
// srun starting the ranks on a node, the metrics and verdict from the job's files.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import { recordOf, runNixlSuite, valuesOf } from './nixl-suite.ts';

describeCluster('nixl project on the local SLURM cluster', () => {
  test('the seed example (READ and WRITE, verified) and a sequence pass as SLURM jobs', { timeout: 300_000 }, async () => {
    const run = await runNixlSuite(['ct_seed_write_shm', 'ct_seed_read_shm', 'sequential_shm'], 'slurm', clusterEnv());
    expect(run.exitCode, run.output).toBe(0);
    for (const id of ['nixl_perf_ct_seed_write_shm', 'nixl_perf_ct_seed_read_shm', 'nixl_perf_sequential_shm']) {
      const record = recordOf(run, id);
      expect(record, run.output).toMatchObject({ verdict: 'passed', schedulerState: 'COMPLETED' });
      expect(record.jobId).toMatch(/^\d+$/); // a SLURM job id, not the local scheduler's
      expect(existsSync(path.join(record.logDir!, `slurm-${record.jobId}.out`))).toBe(true);
    }
    expect(valuesOf(recordOf(run, 'nixl_perf_ct_seed_write_shm'), 'BW_GBPS').map((m) => m.labels.rank)).toEqual([0, 1, 2, 3]);
    expect(valuesOf(recordOf(run, 'nixl_perf_ct_seed_read_shm'), 'BW_GBPS').map((m) => m.labels.rank)).toEqual([2, 3]);
    expect(valuesOf(recordOf(run, 'nixl_perf_sequential_shm'), 'LATENCY_MS')).toHaveLength(6);
  });
});
