// A nixl config the nodes of the run cannot hold is skipped with the reason, as a config for
// another GPU is: more ranks on a node than it has CPUs (SLURM would refuse the job at submission),
// more GPUs per node than it has (the job's gpu-check would refuse it before any rank starts).
// The shipped configs, planned as on a one-GPU H100 machine and on the local SLURM cluster's
// 4-CPU nodes; DISAGG_FAIL_UNFIT=1 keeps them in the run, to fail.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planRun } from '../../framework/select/plan.ts';
import { readSettings } from '../../framework/settings.ts';
import type { GpuDetection } from '../../framework/select/gpu.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const plan = (gpu: GpuDetection, env: Record<string, string> = {}) => {
  const all = { WORK_DIR: repo, OUTPUT_PATH: path.join(repo, 'results'), ...env };
  const tests = planRun({ settings: readSettings(all), gpu, env: all, testType: 'nixl' }).tests;
  return new Map(tests.map((t) => [t.id, t.skipReason]));
};

describe('nixl configs a node cannot hold', () => {
  it('on a one-GPU H100 machine the configs asking for 2 GPUs are skipped, saying so; the one-GPU and host-memory ones run', () => {
    const skipped = plan({ gpuType: 'H100', source: 'nvml', node: { gpus: 1, where: 'node vm' } });
    expect(skipped.get('nixl_perf_ep_cuda_2gpu')).toBe('cannot run here: the config asks for 2 GPU(s) per node (benchmark.gpus_per_node) but node vm has 1 GPU(s)');
    const twoGpu = [...skipped].filter(([, why]) => why?.startsWith('cannot run here')).map(([id]) => id);
    expect(twoGpu.length).toBeGreaterThanOrEqual(1);
    for (const id of twoGpu) expect(skipped.get(id)).toMatch(/GPU\(s\)/);
    expect(skipped.get('nixl_perf_sweep_shm_read_write')).toBeUndefined();
    // The same machine with 2 GPUs holds them.
    const two = plan({ gpuType: 'H100', source: 'nvml', node: { gpus: 2, where: 'node vm' } });
    expect(two.get('nixl_perf_ep_cuda_2gpu')).toBeUndefined();
  });

  it('on 4-CPU SLURM nodes the 16-rank one-node config is skipped naming the CPUs; DISAGG_FAIL_UNFIT=1 keeps it', () => {
    const gpu: GpuDetection = { gpuType: undefined, source: 'none', node: { cpus: 4, gpus: 4, where: 'the nodes of SLURM partition debug' } };
    expect(plan(gpu).get('nixl_perf_matgen_llama405b_shm')).toBe('cannot run here: 16 ranks on one node (benchmark.ranks / nodes) need 16 tasks, but the nodes of SLURM partition debug have 4 CPUs');
    expect(plan(gpu).get('nixl_perf_sequential_shm')).toBeUndefined();
    expect(plan(gpu, { DISAGG_FAIL_UNFIT: '1' }).get('nixl_perf_matgen_llama405b_shm')).toBeUndefined();
    // Unknown sizes skip nothing.
    expect(plan({ gpuType: undefined, source: 'none' }).get('nixl_perf_matgen_llama405b_shm')).toBeUndefined();
  });
});
