// Which GPU this run is on: GPU_TYPE if set, else what NVML says, else none. Also what the Python
// framework keeps per GPU type (extra sbatch arguments, --segment, locked clocks for the CSV).

/**
 * What upstream keeps per GPU type (utils/common.py GPU_RESOURCE_CONFIG): the sbatch arguments and
 * `--segment` its config_loader puts in place of a config's slurm.extra_args / set_segment, and the
 * locked clocks its result saver writes to the CSV.
 */
export interface GpuResources {
  /** `slurm_extra_args`, as one string (split like a shell line). */
  slurmExtraArgs: string;
  /** `set_segment`: jobs get `--segment=<nodes>` (NVL72 racks). */
  setSegment: boolean;
  /** `lock_freq_graphics_mhz` / `lock_freq_memory_mhz`; none where upstream has None. */
  smClockMHz?: number;
  memClockMHz?: number;
}

/**
 * Upstream's GPU_RESOURCE_CONFIG, keyed as upstream keys it: by GPU_TYPE as given, so GB200_LYRIS
 * (a GB200 for filtering) keeps its own entry.
 */
export const gpuResourceConfig: Readonly<Record<string, GpuResources>> = {
  GB200: { slurmExtraArgs: '--gres=gpu:4', setSegment: true, smClockMHz: 2062, memClockMHz: 3996 },
  GB200_LYRIS: { slurmExtraArgs: '', setSegment: true },
  GB300: { slurmExtraArgs: '', setSegment: true },
  H100: { slurmExtraArgs: '', setSegment: false },
  B200: { slurmExtraArgs: '--gres=gpu:4', setSegment: false },
  B300: { slurmExtraArgs: '--gres=gpu:4', setSegment: false },
};

/**
 * The resources of a GPU type, as upstream's `GPU_RESOURCE_CONFIG.get(gpu_type, {})` reads them: a
 * type it has no entry for (H200, A100...) gets no extra arguments, no segment and no clocks.
 */
export function gpuResources(gpuType: string | undefined): GpuResources {
  const key = gpuType?.trim().toUpperCase();
  return (key && gpuResourceConfig[key]) || { slurmExtraArgs: '', setSegment: false };
}

/** GPU types recognised in names (NVML's, GPU_TYPE's, SLURM gres types'). */
export const knownGpuTypes: readonly string[] = ['GB200', 'GB300', 'B200', 'B300', 'H200', 'H100', 'A100'];

/**
 * GPU type from a GPU_TYPE value or an NVML device name: `NVIDIA H200` -> H200,
 * `NVIDIA GB200`/`GB200_NVL72` -> GB200, `NVIDIA H100 80GB HBM3` -> H100, `A100-SXM4-80GB` -> A100.
 */
export function gpuTypeFromName(name: string): string {
  const upper = name.trim().toUpperCase().replace(/^NVIDIA\s+/, '');
  for (const known of [...knownGpuTypes].sort((a, b) => b.length - a.length)) {
    if (new RegExp(`^${known}(?![0-9])`).test(upper)) return known;
  }
  return upper.split(/[\s_-]+/)[0];
}

export interface GpuDetection {
  /** The GPU type, or undefined when neither GPU_TYPE nor a GPU is there. */
  gpuType: string | undefined;
  /**
   * The key upstream's GPU_RESOURCE_CONFIG is read with, when it differs from gpuType: GPU_TYPE as
   * given where upstream has an entry of that name (GB200_LYRIS).
   */
  resourceType?: string;
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
  if (env.GPU_TYPE?.trim()) {
    const given = env.GPU_TYPE.trim().toUpperCase();
    const gpuType = gpuTypeFromName(given);
    return given !== gpuType && gpuResourceConfig[given] ? { gpuType, resourceType: given, source: 'GPU_TYPE' } : { gpuType, source: 'GPU_TYPE' };
  }
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

/** The name to read upstream's GPU_RESOURCE_CONFIG with (GB200_LYRIS keeps its own entry). */
export function resourceTypeOf(detection: GpuDetection): string | undefined {
  return detection.resourceType ?? detection.gpuType;
}
