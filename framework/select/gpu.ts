// Which GPU this run is on: GPU_TYPE if set, else the gres type of the SLURM partition's nodes
// (a login node has no GPU to ask), else what NVML says on this node, else none (a test type may
// then assume one: upstream's GB200 for the serving types). What the Python framework keeps per GPU
// type (extra sbatch arguments, --segment, locked clocks for the CSV) is config/gpu-resources.ts.
import { hostname } from 'node:os';
import type { NodeSize } from '../contract/test-type.ts';

/** GPU types recognised in names (NVML's, GPU_TYPE's, SLURM gres types'). */
export const knownGpuTypes: readonly string[] = ['GB200', 'GB300', 'B200', 'B300', 'H200', 'H100', 'A100'];

/**
 * GPU type from an NVML device name or a SLURM gres type: `NVIDIA H200` -> H200,
 * `NVIDIA GB200` -> GB200, `NVIDIA H100 80GB HBM3` -> H100, `A100-SXM4-80GB` -> A100. Not for
 * GPU_TYPE, which is taken exactly as written (gpuTypeFromEnv).
 */
export function gpuTypeFromName(name: string): string {
  const upper = name.trim().toUpperCase().replace(/^NVIDIA\s+/, '');
  for (const known of [...knownGpuTypes].sort((a, b) => b.length - a.length)) {
    if (new RegExp(`^${known}(?![0-9])`).test(upper)) return known;
  }
  return upper.split(/[\s_-]+/)[0];
}

/**
 * GPU_TYPE as upstream's config loader takes it: exactly as written (`gb200` is not GB200, and
 * `H100_PCIE` is not H100), except that a `GB200_` prefix is GB200 for filtering while upstream's
 * per-GPU resources are read with the name as given (GB200_LYRIS keeps its own entry).
 */
export function gpuTypeFromEnv(value: string): { gpuType: string; resourceType?: string } {
  return value.startsWith('GB200_') ? { gpuType: 'GB200', resourceType: value } : { gpuType: value };
}

export interface GpuDetection {
  /** The GPU type, or undefined when neither GPU_TYPE nor a GPU is there. */
  gpuType: string | undefined;
  /**
   * The key upstream's GPU_RESOURCE_CONFIG is read with, when it differs from gpuType: GPU_TYPE as
   * given (GB200_LYRIS; a GB200_ name without an entry is refused before the run, select/plan.ts).
   */
  resourceType?: string;
  /** Where the type came from; `assumed`: nothing was found and the test type assumes one. */
  source: 'GPU_TYPE' | 'slurm' | 'nvml' | 'none' | 'assumed';
  /** What SLURM / NVML said (why detection found nothing, or which partition's gres named the type). */
  detail?: string;
  /** The jobs run on this host (the local scheduler): no GPU found here means none, nothing is assumed. */
  here?: boolean;
  /** What one node of the run's jobs holds, where SLURM (sinfo) or NVML (this machine) told it. */
  node?: NodeSize;
  /** GPU_TYPE set but empty: upstream filters nothing (`if gpu_type and ...`), so every config runs. */
  everyConfig?: boolean;
}

export type GpuNameProbe = () => Promise<string[]>;

/** What SLURM says of a partition's GPUs (framework/scheduler/slurm-gpus.ts answers it). */
export interface SlurmGpuAnswer {
  partition: string;
  /** Distinct gres GPU types of its nodes, as SLURM spells them. */
  types: string[];
  /** Nodes declaring GPUs without a type. */
  untypedNodes: string[];
  cpusPerNode?: number;
  gpusPerNode?: number;
}

export type SlurmGpuProbe = () => Promise<SlurmGpuAnswer>;

/** NVML through the engine's binding; throws with the reason when NVML is not there. */
const nvmlProbe: GpuNameProbe = async () => {
  const { nvmlDeviceNames } = await import('../../runners/xfer/native/nvml.ts');
  return nvmlDeviceNames();
};

/** A gres type as a GPU type: `h200` -> H200, `nvidia_h100_80gb_hbm3` -> H100, `gb200` -> GB200. */
export function gpuTypeFromGres(gresType: string): string {
  return gpuTypeFromName(gresType.replace(/^nvidia[_-]?/i, ''));
}

/** The one GPU type of a partition's nodes, or why there is none to take. */
function typeFromSlurm(answer: SlurmGpuAnswer): { gpuType: string; detail: string } | { reason: string } {
  const where = `SLURM partition ${answer.partition}`;
  const types = [...new Set(answer.types.map(gpuTypeFromGres))];
  if (types.length === 1 && answer.untypedNodes.length === 0) {
    return { gpuType: types[0], detail: `${where}: its nodes' gres type is ${answer.types.join(', ')}` };
  }
  if (types.length > 1) return { reason: `${where}: its nodes have several GPU types (${answer.types.join(', ')})` };
  if (answer.untypedNodes.length > 0) {
    const nodes = answer.untypedNodes.slice(0, 3).join(', ') + (answer.untypedNodes.length > 3 ? ', ...' : '');
    return { reason: `${where}: ${nodes} declare${answer.untypedNodes.length === 1 ? 's' : ''} GPUs without a type (gres gpu:N)` };
  }
  return { reason: `${where}: its nodes declare no GPUs` };
}

/**
 * GPU_TYPE; else the gres type of the SLURM partition's nodes (when the run submits to SLURM:
 * `slurm` asks it); else NVML on this node; else none, with every reason in `detail`.
 */
export async function detectGpuType(
  env: NodeJS.ProcessEnv = process.env,
  probe: GpuNameProbe = nvmlProbe,
  slurm?: SlurmGpuProbe,
  options: { jobsRunHere?: boolean } = {},
): Promise<GpuDetection> {
  if (env.GPU_TYPE) return { ...gpuTypeFromEnv(env.GPU_TYPE), source: 'GPU_TYPE' };
  if (env.GPU_TYPE === '') return { gpuType: undefined, source: 'GPU_TYPE', everyConfig: true, detail: 'GPU_TYPE is set but empty' };
  const reasons: string[] = [];
  // The size of the jobs' nodes: SLURM's, when the run submits there; else this machine's GPUs (the local scheduler runs here).
  let node: NodeSize | undefined;
  if (slurm) {
    try {
      const answer = await slurm();
      const sized = answer.cpusPerNode !== undefined || answer.gpusPerNode !== undefined;
      if (sized) node = { cpus: answer.cpusPerNode, gpus: answer.gpusPerNode, where: `the nodes of SLURM partition ${answer.partition}` };
      const found = typeFromSlurm(answer);
      if ('gpuType' in found) return { gpuType: found.gpuType, source: 'slurm', detail: found.detail, node };
      reasons.push(found.reason);
    } catch (err) {
      reasons.push(`SLURM: ${(err as Error).message}`);
    }
  }
  try {
    const names = await probe();
    node ??= slurm ? undefined : { gpus: names.length, where: `node ${hostname()}` };
    if (names.length > 0) return { gpuType: gpuTypeFromName(names[0]), source: 'nvml', ...(node && { node }) };
    reasons.push('NVML found no GPU');
  } catch (err) {
    reasons.push((err as Error).message);
  }
  return { gpuType: undefined, source: 'none', detail: reasons.join('; '), ...(node && { node }), ...(options.jobsRunHere ? { here: true } : {}) };
}

/**
 * The run's GPU as a test type sees it: the detected one, else the type's assumed GPU (upstream's
 * GPU_TYPE default, GB200, for the serving types); a type that assumes none sees none.
 */
export function gpuForType(detection: GpuDetection, assumedGpuType: string | undefined): GpuDetection {
  if (detection.gpuType || !assumedGpuType || detection.everyConfig || detection.here) return detection;
  return { gpuType: assumedGpuType, source: 'assumed', detail: detection.detail };
}

/** The one line a run prints about its GPU, for one test type (undefined when there is nothing to say). */
export function gpuNotice(detection: GpuDetection, typeName: string, assumedGpuType: string | undefined): string | undefined {
  if (detection.everyConfig) return `GPU_TYPE is set but empty: every ${typeName} config runs, whatever its supported_gpus (upstream filters nothing then); unset GPU_TYPE to detect the GPU`;
  if (detection.gpuType) return detection.source === 'slurm' ? `GPU type ${detection.gpuType} from ${detection.detail}` : undefined;
  if (assumedGpuType && !detection.here) {
    return `No GPU found and GPU_TYPE unset (${detection.detail}): ${typeName} configs run as ${assumedGpuType}, upstream's default GPU_TYPE; set GPU_TYPE to choose.`;
  }
  const where = detection.here ? ' on this host, where the jobs run,' : '';
  return `No GPU detected${where} and GPU_TYPE unset (${detection.detail}): only configs that need no GPU run.`;
}

/**
 * Why a config cannot run on this GPU, or undefined when it can. As upstream: the GPU type must be
 * in metadata.supported_gpus as written (`gb200` or `GB200_LYRIS` there never matches GB200).
 */
export function gpuSkipReason(supported: string[] | undefined, detection: GpuDetection): string | undefined {
  if (supported === undefined || detection.everyConfig) return undefined;
  const gpuType = detection.gpuType;
  if (!gpuType) {
    return `needs a GPU (${supported.join(', ')}) but none was detected and GPU_TYPE is unset`;
  }
  if (supported.includes(gpuType)) return undefined;
  const reason = `GPU type ${gpuType} is not in supported_gpus [${supported.join(', ')}]`;
  const near = supported.filter((s) => s.toUpperCase() === gpuType.toUpperCase() || gpuTypeFromName(s) === gpuType);
  return near.length > 0 ? `${reason} (matched exactly, as upstream: ${near.map((s) => JSON.stringify(s)).join(', ')} is not ${gpuType})` : reason;
}

/** The name to read upstream's GPU_RESOURCE_CONFIG with (GB200_LYRIS keeps its own entry). */
export function resourceTypeOf(detection: GpuDetection): string | undefined {
  return detection.resourceType ?? detection.gpuType;
}
