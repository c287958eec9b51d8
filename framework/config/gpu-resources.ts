// What upstream keeps per GPU type: part of how its config loader fills a config (slurm.extra_args,
// set_segment), and the locked clocks its result saver writes to the CSV. Below the test types,
// which read it when they build a job; the run's GPU detection is select/gpu.ts.

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
 * The resources of a GPU type, as upstream's `GPU_RESOURCE_CONFIG.get(gpu_type, {})` reads them
 * (the name exactly as written): a type it has no entry for (H200, A100...) gets no extra
 * arguments, no segment and no clocks.
 */
export function gpuResources(gpuType: string | undefined): GpuResources {
  return (gpuType !== undefined && Object.hasOwn(gpuResourceConfig, gpuType) && gpuResourceConfig[gpuType]) || { slurmExtraArgs: '', setSegment: false };
}
