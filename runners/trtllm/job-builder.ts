// The disagg/wideep job builder: plans the job, writes its artefacts into the test's log folder
// (worker configs, router config, allocations, environment, job.sh) and says what to ask the
// scheduler for.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import type { BuiltJob, JobBuildContext } from '../../framework/types/test-type.ts';
import type { JobResources } from '../../framework/scheduler/scheduler.ts';
import type { Allocation } from './allocation.ts';
import { nodePlaceholder } from './server-config.ts';
import { jobFiles } from './job-files.ts';
import { planServingJob, type JobPlan, type Unresolved } from './job-plan.ts';
import { renderJobScript } from './job-script.ts';
import { isUnfilled, servingConfig, type ServingConfig } from './serving-config.ts';
import { jobTimeSeconds } from '../../framework/types/common/job-time.ts';
import { splitShellWords } from '../../framework/types/common/shell.ts';

/** What the GPU type's clusters need when the config does not say (framework/select/gpu.ts). */
export interface GpuDefaults {
  sbatchArgs: string[];
  segment: boolean;
}

export interface ServingJobOptions {
  gpuDefaults?: GpuDefaults;
}

/** The job needs values that are still `<placeholders>`: nothing is submitted. */
export class UnresolvedPlaceholderError extends Error {
  override name = 'UnresolvedPlaceholderError';
  constructor(readonly unresolved: Unresolved[]) {
    super(`the job needs values that are still placeholders: ${unresolved.map((u) => `${u.path} = ${u.value}`).join(', ')}`);
  }
}

export async function buildServingJob(ctx: JobBuildContext, options: ServingJobOptions = {}): Promise<BuiltJob> {
  const config = servingConfig(ctx.config);
  const plan = planServingJob({ testId: ctx.testId, config, logDir: ctx.logDir, packageRoot: ctx.packageRoot, workDir: ctx.workDir });
  if (plan.unresolved.length > 0) throw new UnresolvedPlaceholderError(plan.unresolved);
  const files = jobArtefacts(config, plan);
  await mkdir(ctx.logDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(ctx.logDir, name), text);
  const scriptPath = path.join(ctx.logDir, jobFiles.script);
  await chmod(scriptPath, 0o755);
  const resources = jobResources(config, plan.allocation, options.gpuDefaults);
  // Config secrets reach the job through the scheduler's environment, not through job.sh.
  return Object.keys(plan.jobEnv).length > 0 ? { scriptPath, resources, env: plan.jobEnv } : { scriptPath, resources };
}

/** Every file the job writes before it runs, by name. */
export function jobArtefacts(config: ServingConfig, plan: JobPlan): Record<string, string> {
  // aliasDuplicateObjects off: YAML anchors of the source come out as plain copies.
  const dump = (value: unknown) => stringify(value, { aliasDuplicateObjects: false });
  const files: Record<string, string> = {
    [jobFiles.genConfig]: dump(config.worker_config.gen),
    [jobFiles.serverConfig]: plan.script.serverConfig.template,
    [jobFiles.allocations]: `${JSON.stringify(allocationsJson(plan.allocation), null, 2)}\n`,
    [jobFiles.envVars]: `${JSON.stringify(plan.env, null, 2)}\n`,
    [jobFiles.script]: renderJobScript(plan.script),
  };
  if (config.worker_config.ctx) files[jobFiles.ctxConfig] = dump(config.worker_config.ctx);
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
 * sbatch resources: nodes, tasks = nodes * gpus_per_node, the time limit, partition and account
 * when they are real values (a leftover placeholder means: the cluster's default), extra_args
 * (else the GPU type's), `--segment` when asked (true = all nodes in one segment).
 */
export function jobResources(config: ServingConfig, allocation: Allocation, gpu?: GpuDefaults): JobResources {
  const slurm = config.slurm;
  const extraArgs = slurm.extra_args !== undefined ? splitShellWords(slurm.extra_args) : [...(gpu?.sbatchArgs ?? [])];
  const segment = slurm.set_segment ?? gpu?.segment ?? false;
  if (segment !== false) extraArgs.push(`--segment=${segment === true ? allocation.totalNodes : segment}`);
  const real = (value: string | undefined) => (value && value.trim() && !isUnfilled(value) ? value.trim() : undefined);
  return {
    nodes: allocation.totalNodes,
    ntasks: allocation.totalTasks,
    ntasksPerNode: allocation.gpusPerNode,
    // GPUs asked for in the extra arguments (--gres=gpu:4) are not asked for twice.
    gpusPerNode: extraArgs.some((a) => ASKS_FOR_GPUS.test(a)) ? undefined : allocation.gpusPerNode,
    timeLimitSec: jobTimeSeconds(slurm.job_time),
    partition: real(slurm.partition),
    account: real(slurm.account),
    extraArgs,
  };
}
