// The disagg/wideep job builder: plans the job (for the run's launcher, unless the config names
// one), writes its artefacts into the test's log folder (worker configs, router config,
// allocations, environment, job.sh) and says what to ask the scheduler for.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { dumpYamlForPyYaml } from '../../../../runners/common/yaml-dump.ts';
import type { BuiltJob, JobBuildContext } from '../../../contract/test-type.ts';
import type { JobResources } from '../../../scheduler/scheduler.ts';
import type { Allocation } from './allocation.ts';
import { nodePlaceholder } from './node-placeholder.ts';
import { jobFiles } from './job-files.ts';
import { planServingJob, type JobPlan, type Unresolved } from './job-plan.ts';
import { renderJobScript } from './job-script.ts';
import { servingConfig, type ServingConfig } from '../serving-config.ts';
import { engineOf } from '../engines/engines.ts';
import { jobTimeSeconds } from '../../../../runners/common/job-time.ts';
import { splitShellWords } from '../../../../runners/common/shell.ts';
import { DisaggBenchError } from '../../../../runners/common/errors.ts';
import type { ErrorCategory } from '../../../../runners/common/errors.ts';

/**
 * The run's GPU type and what upstream keeps for it (GPU_RESOURCE_CONFIG, see
 * framework/config/gpu-resources.ts): the sbatch arguments and `--segment` its clusters need.
 */
export interface GpuSlurmArgs {
  name: string;
  slurmExtraArgs: string;
  setSegment: boolean;
}

export interface ServingJobOptions {
  gpu?: GpuSlurmArgs;
}

/** The job needs values that are still `<placeholders>`: nothing is submitted. */
export class UnresolvedPlaceholderError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  override name = 'UnresolvedPlaceholderError';
  constructor(readonly unresolved: Unresolved[]) {
    super(`the job needs values that are still placeholders: ${unresolved.map((u) => `${u.path} = ${u.value}`).join(', ')}`, {
      place: unresolved.map((u) => u.path).join(', '),
    });
  }
}

export async function buildServingJob(ctx: JobBuildContext, options: ServingJobOptions = {}): Promise<BuiltJob> {
  const config = servingConfig(ctx.config);
  const plan = planServingJob({ testId: ctx.testId, config, logDir: ctx.logDir, packageRoot: ctx.packageRoot, workDir: ctx.workDir, launcher: ctx.launcher });
  if (plan.unresolved.length > 0) throw new UnresolvedPlaceholderError(plan.unresolved);
  const files = jobArtefacts(config, plan);
  await mkdir(ctx.logDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(ctx.logDir, name), text);
  const scriptPath = path.join(ctx.logDir, jobFiles.script);
  await chmod(scriptPath, 0o755);
  const { resources, notes } = jobResources(config, plan.allocation, options.gpu);
  // Config secrets reach the job through the scheduler's environment, not through job.sh.
  return { scriptPath, resources, ...(Object.keys(plan.jobEnv).length > 0 ? { env: plan.jobEnv } : {}), ...(notes.length > 0 ? { notes } : {}) };
}

/** Every file the job writes before it runs, by name. */
export function jobArtefacts(config: ServingConfig, plan: JobPlan): Record<string, string> {
  // The engine reads these with PyYAML: written as YAML 1.1 (runners/common/yaml-dump.ts).
  // aliasDuplicateObjects off: YAML anchors of the source come out as plain copies.
  const dump = (value: unknown) => dumpYamlForPyYaml(value, { aliasDuplicateObjects: false });
  const { files: engineFiles } = engineOf(config);
  const files: Record<string, string> = {
    [engineFiles.workerConfig.GEN]: dump(config.worker_config.gen),
    [engineFiles.routerConfig]: plan.script.serverConfig.template,
    [jobFiles.allocations]: `${JSON.stringify(allocationsJson(plan.allocation), null, 2)}\n`,
    [jobFiles.envVars]: `${JSON.stringify(plan.env, null, 2)}\n`,
    [jobFiles.script]: renderJobScript(plan.script),
  };
  if (config.worker_config.ctx) files[engineFiles.workerConfig.CTX] = dump(config.worker_config.ctx);
  return files;
}

function allocationsJson(allocation: Allocation) {
  return {
    gpus_per_node: allocation.gpusPerNode,
    total_nodes: allocation.totalNodes,
    total_tasks: allocation.totalTasks,
    roles: { ctx: allocation.ctx, gen: allocation.gen },
    router: { ...allocation.router, host: nodePlaceholder(allocation.router.node) },
    servers: allocation.servers.map((s) => ({
      server_type: s.role,
      server_id: s.index,
      name: s.name,
      port: s.port,
      world_size: s.worldSize,
      node_indices: s.nodes,
      nodes: Object.fromEntries(s.nodes.map((n) => [nodePlaceholder(n), s.gpuIds])),
      ntasks_per_node: s.ntasksPerNode,
    })),
  };
}

const ASKS_FOR_GPUS = /^(--gres=(.*,)?gpu|--gpus|-G)/;

/**
 * Where slurm.extra_args / set_segment come from. As upstream's config_loader
 * (`_apply_env_overrides`: `("slurm", "extra_args")` and `("slurm", "set_segment")` set from
 * EnvManager.get_slurm_extra_args() / get_slurm_set_segment()), the GPU type's values replace the
 * config's; `slurm.use_gpu_type_args: false` keeps the config's own (this project's earlier
 * behaviour, and the only way to a segment size other than all nodes). Without a GPU type the
 * config's own are used. A replaced value that differed is noted.
 */
function slurmArgs(config: ServingConfig, gpu: GpuSlurmArgs | undefined): { words: string[]; segment: boolean | number; notes: string[] } {
  const slurm = config.slurm;
  const own = { words: slurm.extra_args !== undefined ? splitShellWords(slurm.extra_args) : [], segment: slurm.set_segment ?? false };
  if (!gpu || slurm.use_gpu_type_args === false) return { ...own, notes: [] };
  const words = splitShellWords(gpu.slurmExtraArgs);
  const notes: string[] = [];
  const shown = (w: string[]) => (w.length > 0 ? `'${w.join(' ')}'` : 'none');
  if (slurm.extra_args !== undefined && own.words.join('\u0000') !== words.join('\u0000')) {
    notes.push(`slurm.extra_args ${shown(own.words)} replaced by ${gpu.name}'s ${shown(words)}, as upstream's config_loader does (slurm.use_gpu_type_args: false keeps the config's)`);
  }
  if (slurm.set_segment !== undefined && slurm.set_segment !== gpu.setSegment) {
    notes.push(`slurm.set_segment ${slurm.set_segment} replaced by ${gpu.name}'s ${gpu.setSegment}, as upstream's config_loader does (slurm.use_gpu_type_args: false keeps the config's)`);
  }
  return { words, segment: gpu.setSegment, notes };
}

/**
 * sbatch resources: nodes, tasks = nodes * gpus_per_node, the time limit, partition and account
 * as the config gives them (the job manager reads a leftover placeholder as the cluster's default), the extra
 * arguments and `--segment` (slurmArgs says whose; true = all nodes in one segment).
 */
export function jobResources(config: ServingConfig, allocation: Allocation, gpu?: GpuSlurmArgs): { resources: JobResources; notes: string[] } {
  const slurm = config.slurm;
  const { words, segment, notes } = slurmArgs(config, gpu);
  const extraArgs = [...words];
  if (segment !== false) extraArgs.push(`--segment=${segment === true ? allocation.totalNodes : segment}`);
  const resources: JobResources = {
    nodes: allocation.totalNodes,
    ntasks: allocation.totalTasks,
    ntasksPerNode: allocation.gpusPerNode,
    // GPUs asked for in the extra arguments (--gres=gpu:4) are not asked for twice.
    gpusPerNode: extraArgs.some((a) => ASKS_FOR_GPUS.test(a)) ? undefined : allocation.gpusPerNode,
    timeLimitSec: jobTimeSeconds(slurm.job_time),
    // As the config gives them; the job manager drops a blank or `<placeholder>` one (cluster default).
    partition: slurm.partition,
    account: slurm.account,
    extraArgs,
  };
  return { resources, notes };
}
