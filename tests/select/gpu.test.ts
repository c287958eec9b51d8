import { describe, expect, it } from 'vitest';
import { detectGpuType, gpuSkipReason, gpuTypeFromName, resourceTypeOf } from '../../framework/select/gpu.ts';

describe('GPU type', () => {
  it('maps NVML names and GPU_TYPE variants', () => {
    expect(gpuTypeFromName('NVIDIA H200')).toBe('H200');
    expect(gpuTypeFromName('NVIDIA H100 80GB HBM3')).toBe('H100');
    expect(gpuTypeFromName('NVIDIA GB200')).toBe('GB200');
    expect(gpuTypeFromName('GB200_NVL72')).toBe('GB200');
    expect(gpuTypeFromName('gb300')).toBe('GB300');
    expect(gpuTypeFromName('NVIDIA B200')).toBe('B200');
    expect(gpuTypeFromName('NVIDIA A100-SXM4-80GB')).toBe('A100');
    expect(gpuTypeFromName('NVIDIA L40S')).toBe('L40S');
  });

  it('prefers GPU_TYPE, then NVML, and says why there is none', async () => {
    const probe = async () => ['NVIDIA H200', 'NVIDIA H200'];
    expect(await detectGpuType({ GPU_TYPE: 'GB200_NVL72' }, probe)).toEqual({ gpuType: 'GB200', source: 'GPU_TYPE' });
    // Upstream has an entry of this name (no --gres): kept for its resources, a GB200 for filtering.
    const lyris = await detectGpuType({ GPU_TYPE: 'GB200_LYRIS' }, probe);
    expect(lyris).toEqual({ gpuType: 'GB200', resourceType: 'GB200_LYRIS', source: 'GPU_TYPE' });
    expect(resourceTypeOf(lyris)).toBe('GB200_LYRIS');
    expect(await detectGpuType({}, probe)).toEqual({ gpuType: 'H200', source: 'nvml' });
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
