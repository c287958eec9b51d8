// As upstream, a config whose supported_gpus does not hold the run's GPU type is skipped with the
// GPU reason whether it is valid or not; its errors stay for `disagg-bench validate` and fail it
// on a GPU it supports. Upstream's GPU types with their cluster defaults.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { planRun } from '../../framework/select/plan.ts';
import { readSettings } from '../../framework/settings.ts';
import { gpuForType, gpuNotice } from '../../framework/select/gpu.ts';
import { gpuResources } from '../../framework/config/gpu-resources.ts';
import { disaggType } from '../../framework/types/disagg.ts';
import { nixlType } from '../../framework/types/nixl.ts';
import { baseConfig } from '../fixtures/serving/base-config.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const root = mkdtempSync(path.join(tmpdir(), 'gpu-skip-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function plan(gpuType: string | undefined) {
  const dir = path.join(root, 'test_configs', 'disagg', 'perf');
  mkdirSync(dir, { recursive: true });
  // Invalid (streaming false) and for GB200/H200 only; and one without supported_gpus at all.
  writeFileSync(path.join(dir, 'invalid_gb200_h200.yaml'), stringify(baseConfig({ metadata: { supported_gpus: ['GB200', 'H200'] }, benchmark: { streaming: false } })));
  const unnamed = baseConfig();
  delete (unnamed.metadata as Record<string, unknown>).supported_gpus;
  writeFileSync(path.join(dir, 'no_supported_gpus.yaml'), stringify(unnamed));
  const settings = readSettings({ WORK_DIR: root, OUTPUT_PATH: path.join(root, 'out') });
  const tests = planRun({ settings, gpu: { gpuType, source: gpuType ? 'GPU_TYPE' : 'none' }, env: {} }).tests;
  return (name: string) => tests.find((t) => t.id === `disagg_perf_${name}`)!;
}

describe('a config for another GPU type', () => {
  it('is skipped with the GPU reason, valid or not; its issues are kept', () => {
    const on = plan('H100');
    expect(on('invalid_gb200_h200').skipReason).toBe('GPU type H100 is not in supported_gpus [GB200, H200]');
    expect(on('invalid_gb200_h200').issues.map((i) => i.path)).toEqual(['benchmark.streaming']);
  });

  it('fails with its errors on a GPU it supports', () => {
    const on = plan('H200');
    expect(on('invalid_gb200_h200').skipReason).toBeUndefined();
    expect(on('invalid_gb200_h200').issues).toHaveLength(1);
  });

  it('without supported_gpus: upstream\'s default list [GB200, GB300, H100, B200, B300]', () => {
    expect(plan('B300')('no_supported_gpus')).toMatchObject({ skipReason: undefined, issues: [] });
    expect(plan('H200')('no_supported_gpus').skipReason).toBe('GPU type H200 is not in supported_gpus [GB200, GB300, H100, B200, B300]');
  });
});

describe('no GPU found (no GPU_TYPE, no typed SLURM gres, no NVML)', () => {
  it('disagg configs run as GB200, upstream\'s default GPU_TYPE, saying so in one line; a nixl config that needs a GPU is still skipped', () => {
    const dir = path.join(root, 'test_configs', 'nixl', 'perf');
    mkdirSync(dir, { recursive: true });
    copyFileSync(path.join(repo, 'test_configs/nixl/perf/kvpipe_cuda.yaml'), path.join(dir, 'kvpipe_cuda.yaml'));
    const on = plan(undefined);
    expect(on('no_supported_gpus')).toMatchObject({ skipReason: undefined, issues: [] });
    expect(on('invalid_gb200_h200').skipReason).toBeUndefined();
    const settings = readSettings({ WORK_DIR: root, OUTPUT_PATH: path.join(root, 'out') });
    const none = { gpuType: undefined, source: 'none' as const, detail: 'NVML: libnvidia-ml.so.1 not found' };
    const nixl = planRun({ settings, gpu: none, env: {}, testType: 'nixl' }).tests.find((t) => t.id === 'nixl_perf_kvpipe_cuda')!;
    expect(nixl.skipReason).toMatch(/needs a GPU \(H100, H200, B200, GB200\) but none was detected/);
    expect(gpuNotice(none, 'disagg', disaggType.assumedGpuType)).toBe(
      "No GPU found and GPU_TYPE unset (NVML: libnvidia-ml.so.1 not found): disagg configs run as GB200, upstream's default GPU_TYPE; set GPU_TYPE to choose.",
    );
    expect(gpuNotice(none, 'nixl', nixlType.assumedGpuType)).toMatch(/only configs that need no GPU run\.$/);
    // The job and the CSV see GB200 too: its --gres and --segment, its locked clocks.
    expect(gpuForType(none, disaggType.assumedGpuType)).toMatchObject({ gpuType: 'GB200', source: 'assumed' });
  });
});
describe('GPU types upstream knows', () => {
  it('extra args, --segment and locked clocks as upstream\'s GPU_RESOURCE_CONFIG, read as its .get(gpu_type, {}) reads it', () => {
    const view = (t: string) => {
      const r = gpuResources(t);
      return [r.slurmExtraArgs, r.setSegment, r.smClockMHz ?? null, r.memClockMHz ?? null];
    };
    expect(view('GB200')).toEqual(['--gres=gpu:4', true, 2062, 3996]);
    expect(view('GB200_LYRIS')).toEqual(['', true, null, null]);
    expect(view('GB300')).toEqual(['', true, null, null]);
    expect(view('B200')).toEqual(['--gres=gpu:4', false, null, null]);
    expect(view('B300')).toEqual(['--gres=gpu:4', false, null, null]);
    expect(view('H100')).toEqual(['', false, null, null]);
    // No entry upstream (H200 is a type of its perf-sanity harness): nothing, as .get() gives.
    expect(view('H200')).toEqual(['', false, null, null]);
    expect(view('A100')).toEqual(['', false, null, null]);
  });
});
