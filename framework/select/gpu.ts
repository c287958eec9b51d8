// Which GPU this run is on: GPU_TYPE if set, else what NVML says, else none. Also what the Python
// framework kept per GPU type (extra sbatch arguments, --segment, locked clocks for the CSV).

export interface GpuTypeInfo {
  /** Extra sbatch arguments this GPU type's clusters need. */
  sbatchArgs: string[];
  /** Whether jobs set `--segment` (NVL72 racks). */
  segment: boolean;
  /** Locked clocks recorded in the CSV (MHz), when known. */
  smClockMHz?: number;
  memClockMHz?: number;
}

/**
 * As upstream's utils/common.py GPU_RESOURCE_CONFIG (gres 4 -> --gres=gpu:4, set_segment, locked
 * clocks; none where upstream has none). H200 is a type of upstream's perf-sanity harness with no
 * entry there (its `.get(gpu, {})`: no extra args, no segment, no clocks); A100 is ours.
 */
export const knownGpuTypes: Record<string, GpuTypeInfo> = {
  GB200: { sbatchArgs: ['--gres=gpu:4'], segment: true, smClockMHz: 2062, memClockMHz: 3996 },
  GB300: { sbatchArgs: [], segment: true },
  B200: { sbatchArgs: ['--gres=gpu:4'], segment: false },
  B300: { sbatchArgs: ['--gres=gpu:4'], segment: false },
  H200: { sbatchArgs: [], segment: false },
  H100: { sbatchArgs: [], segment: false },
  A100: { sbatchArgs: [], segment: false },
};

/**
 * GPU type from a GPU_TYPE value or an NVML device name: `NVIDIA H200` -> H200,
 * `NVIDIA GB200`/`GB200_NVL72` -> GB200, `NVIDIA H100 80GB HBM3` -> H100, `A100-SXM4-80GB` -> A100.
 */
export function gpuTypeFromName(name: string): string {
  const upper = name.trim().toUpperCase().replace(/^NVIDIA\s+/, '');
  for (const known of Object.keys(knownGpuTypes).sort((a, b) => b.length - a.length)) {
    if (new RegExp(`^${known}(?![0-9])`).test(upper)) return known;
  }
  return upper.split(/[\s_-]+/)[0];
}

export interface GpuDetection {
  /** The GPU type, or undefined when neither GPU_TYPE nor a GPU is there. */
  gpuType: string | undefined;
  source: 'GPU_TYPE' | 'nvml' | 'none';
  /** Why detection found nothing (NVML missing, no device...). */
  detail?: string;
}

export type GpuNameProbe = () => Promise<string[]>;

/** NVML through the engine's binding; throws with the reason when NVML is not there. */
const nvmlProbe: GpuNameProbe = async () => {
  const { nvmlDeviceNames } = await import('../../runners/xfer/native/nvml.ts');
  return nvmlDeviceNames();
};

export async function detectGpuType(
  env: NodeJS.ProcessEnv = process.env,
  probe: GpuNameProbe = nvmlProbe,
): Promise<GpuDetection> {
  if (env.GPU_TYPE?.trim()) return { gpuType: gpuTypeFromName(env.GPU_TYPE), source: 'GPU_TYPE' };
  try {
    const names = await probe();
    if (names.length === 0) return { gpuType: undefined, source: 'none', detail: 'NVML found no GPU' };
    return { gpuType: gpuTypeFromName(names[0]), source: 'nvml' };
  } catch (err) {
    return { gpuType: undefined, source: 'none', detail: (err as Error).message };
  }
}

/** Why a config cannot run on this GPU, or undefined when it can. */
export function gpuSkipReason(supported: string[] | undefined, detection: GpuDetection): string | undefined {
  if (supported === undefined) return undefined;
  const wanted = supported.map(gpuTypeFromName);
  if (!detection.gpuType) {
    return `needs a GPU (${wanted.join(', ')}) but none was detected and GPU_TYPE is unset`;
  }
  if (!wanted.includes(detection.gpuType)) {
    return `GPU type ${detection.gpuType} is not in supported_gpus [${wanted.join(', ')}]`;
  }
  return undefined;
}
