import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { detectGpuType, gpuForType, gpuNotice, gpuSkipReason, gpuTypeFromName, resourceTypeOf } from '../../framework/select/gpu.ts';
import { gpuTypeProblem } from '../../framework/select/plan.ts';
import { readSettings } from '../../framework/settings.ts';
import { gpuResources } from '../../framework/config/gpu-resources.ts';

describe('GPU type', () => {
  it('maps NVML names and gres types', () => {
    expect(gpuTypeFromName('NVIDIA H200')).toBe('H200');
    expect(gpuTypeFromName('NVIDIA H100 80GB HBM3')).toBe('H100');
    expect(gpuTypeFromName('NVIDIA GB200')).toBe('GB200');
    expect(gpuTypeFromName('gb300')).toBe('GB300');
    expect(gpuTypeFromName('NVIDIA B200')).toBe('B200');
    expect(gpuTypeFromName('NVIDIA A100-SXM4-80GB')).toBe('A100');
    expect(gpuTypeFromName('NVIDIA L40S')).toBe('L40S');
  });

  it('GPU_TYPE set but empty filters nothing, as upstream (`if gpu_type and ...`): every config runs, and the run says so', async () => {
    const probe = async () => ['NVIDIA H200'];
    const empty = await detectGpuType({ GPU_TYPE: '' }, probe);
    expect(empty).toMatchObject({ gpuType: undefined, source: 'GPU_TYPE', everyConfig: true });
    expect(gpuSkipReason(['GB200'], empty)).toBeUndefined();
    expect(gpuSkipReason(['H100', 'B200'], gpuForType(empty, 'GB200'))).toBeUndefined();
    expect(gpuNotice(empty, 'disagg', 'GB200')).toMatch(/^GPU_TYPE is set but empty: every disagg config runs/);
  });

  it('prefers GPU_TYPE, then NVML, and says why there is none', async () => {
    const probe = async () => ['NVIDIA H200', 'NVIDIA H200'];
    expect(await detectGpuType({ GPU_TYPE: 'GB300' }, probe)).toEqual({ gpuType: 'GB300', source: 'GPU_TYPE' });
    // Upstream has an entry of this name (no --gres): kept for its resources, a GB200 for filtering.
    const lyris = await detectGpuType({ GPU_TYPE: 'GB200_LYRIS' }, probe);
    expect(lyris).toEqual({ gpuType: 'GB200', resourceType: 'GB200_LYRIS', source: 'GPU_TYPE' });
    expect(resourceTypeOf(lyris)).toBe('GB200_LYRIS');
    // NVML also says how many GPUs this machine has: what a config run here by the local scheduler must fit.
    expect(await detectGpuType({}, probe)).toEqual({ gpuType: 'H200', source: 'nvml', node: { gpus: 2, where: `node ${hostname()}` } });
    const none = await detectGpuType({}, async () => {
      throw new Error('libnvidia-ml.so.1: cannot open shared object file');
    });
    expect(none).toMatchObject({ gpuType: undefined, source: 'none' });
    expect(none.detail).toMatch(/libnvidia-ml/);
  });

  it('gives a skip reason only when the config cannot run here', () => {
    const h200 = { gpuType: 'H200', source: 'nvml' as const };
    expect(gpuSkipReason(['H200', 'GB200'], h200)).toBeUndefined();
    expect(gpuSkipReason(undefined, h200)).toBeUndefined();
    expect(gpuSkipReason(['GB200'], h200)).toBe('GPU type H200 is not in supported_gpus [GB200]');
    expect(gpuSkipReason(['GB200'], { gpuType: undefined, source: 'none' })).toMatch(/none was detected and GPU_TYPE is unset/);
  });
});

// Upstream's config loader (utils/config_loader.py scan_configs, utils/common.py): GPU_TYPE as
// written, `GB200_*` folded to GB200 for filtering only, `gpu_type in supported_gpus` on the list as
// written, GPU_RESOURCE_CONFIG.get(GPU_TYPE) with the name as written.
describe('GPU_TYPE spelled exactly as upstream takes it', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'gpu-spelling-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const dir = path.join(root, 'test_configs', 'nixl', 'perf');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'sweep.yaml'), 'metadata:\n  supported_gpus: [H100, GB200]\nbenchmark: {kind: sweep, ranks: 2, backend: shm}\n');
  const settings = readSettings({ WORK_DIR: root, OUTPUT_PATH: path.join(root, 'out') });
  const problem = (value: string) => gpuTypeProblem(settings, { GPU_TYPE: value });

  it('a lower-case type matches nothing upstream: refused in one line naming the type meant', async () => {
    expect(await detectGpuType({ GPU_TYPE: 'gb200' }, async () => [])).toEqual({ gpuType: 'gb200', source: 'GPU_TYPE' });
    expect(gpuSkipReason(['GB200'], { gpuType: 'gb200', source: 'GPU_TYPE' })).toBe('GPU type gb200 is not in supported_gpus [GB200] (matched exactly, as upstream: "GB200" is not gb200)');
    expect(problem('gb200')).toBe(
      'GPU_TYPE="gb200": gb200 is no known GPU type (GB200, GB300, B200, B300, H200, H100, A100) and no config lists it in metadata.supported_gpus; every config that needs a GPU would be skipped; GPU types match exactly, as upstream ("gb200" does not run [GB200] configs): set GPU_TYPE=GB200',
    );
  });

  it('H100_PCIE does not run [H100] configs', async () => {
    const detected = await detectGpuType({ GPU_TYPE: 'H100_PCIE' }, async () => []);
    expect(detected).toEqual({ gpuType: 'H100_PCIE', source: 'GPU_TYPE' });
    expect(gpuSkipReason(['H100'], detected)).toMatch(/^GPU type H100_PCIE is not in supported_gpus \[H100\]/);
    expect(problem('H100_PCIE')).toMatch(/\("H100_PCIE" does not run \[H100\] configs\): set GPU_TYPE=H100$/);
  });

  it('GB200_* is GB200 for filtering; upstream\'s resources are read with the name as given, and a name it has none for is refused', async () => {
    const lyris = await detectGpuType({ GPU_TYPE: 'GB200_LYRIS' }, async () => []);
    expect(gpuSkipReason(['GB200'], lyris)).toBeUndefined();
    expect(gpuResources(resourceTypeOf(lyris))).toMatchObject({ slurmExtraArgs: '', setSegment: true });
    expect(problem('GB200_LYRIS')).toBeUndefined();
    // Upstream runs the GB200 configs with GB200_NVL72, with no --gres and no --segment, then its CSV writer fails.
    const nvl72 = await detectGpuType({ GPU_TYPE: 'GB200_NVL72' }, async () => []);
    expect(nvl72).toEqual({ gpuType: 'GB200', resourceType: 'GB200_NVL72', source: 'GPU_TYPE' });
    expect(problem('GB200_NVL72')).toBe(
      'GPU_TYPE="GB200_NVL72": upstream filters it as GB200 but has no resources for it (no --gres=gpu:4, no --segment, and its CSV writer fails on it); set GPU_TYPE=GB200 or GB200_LYRIS',
    );
  });

  it('supported_gpus is matched as written: a config listing gb200 or GB200_LYRIS does not run on GB200', () => {
    const gb200 = { gpuType: 'GB200', source: 'GPU_TYPE' as const };
    expect(gpuSkipReason(['gb200'], gb200)).toBe('GPU type GB200 is not in supported_gpus [gb200] (matched exactly, as upstream: "gb200" is not GB200)');
    expect(gpuSkipReason(['GB200_LYRIS'], gb200)).toMatch(/\(matched exactly, as upstream: "GB200_LYRIS" is not GB200\)$/);
    expect(gpuResources('gb200')).toEqual({ slurmExtraArgs: '', setSegment: false });
  });
});
