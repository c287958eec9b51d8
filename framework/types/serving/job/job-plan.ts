// From a resolved config to the job's steps: which command runs where, with which environment,
// writing which log. Pure (no file system), so the whole plan can be checked in tests. Each part
// is a named step of its own (plan-servers.ts, plan-clients.ts) over one shared context
// (plan-context.ts); the steps are launcher-neutral, and job-script.ts renders them through the
// plan's launcher. What belongs to the serving engine comes from its table (../engines/).
import type { Allocation } from './allocation.ts';
import { jobFiles } from './job-files.ts';
import type { JobScriptPlan } from './job-script.ts';
import { planContext, type PlanContext, type PlanInput, type Unresolved } from './plan-context.ts';
import { planContainerLaunch, planNodeVars, planRouter, planWorkers } from './plan-servers.ts';
import { planAccuracy, planBenchmarks, planUcxWarmup } from './plan-clients.ts';
import { clientUsesDataset, warmupPlan } from './warmup.ts';
import { jobTimeSeconds } from '../../../../runners/common/job-time.ts';

export type { PlanInput, Unresolved } from './plan-context.ts';

export interface JobPlan {
  allocation: Allocation;
  script: JobScriptPlan;
  /** Environment of each step, by step name, as written to env_vars.json (secrets <redacted>). */
  env: Record<string, Record<string, string>>;
  /** Secret-named values the job's environment must carry (job.sh only expands them). */
  jobEnv: Record<string, string>;
  unresolved: Unresolved[];
}

/** How long the job waits for the router's health, and how often it asks. */
function planHealthWait(ctx: PlanContext): { timeoutS: number; intervalS: number } {
  const launch = ctx.config.launch ?? {};
  return { timeoutS: launch.health_timeout_s ?? ctx.engine.health.timeoutS, intervalS: launch.health_interval_s ?? ctx.engine.health.intervalS };
}

/** The engine's switches for the benchmark mode, exported to every step (env_vars.json's `job`). */
function planExports(ctx: PlanContext) {
  const exports = ctx.engine.env.everyStep(ctx.config);
  ctx.env.job = Object.fromEntries(exports.map((e) => [e.name, e.value]));
  return exports;
}

export function planServingJob(input: PlanInput): JobPlan {
  // The order of the steps is the order their placeholders are reported in and their
  // environments are listed in env_vars.json.
  const ctx = planContext(input);
  const health = planHealthWait(ctx);
  const servers = planWorkers(ctx);
  const router = planRouter(ctx, health.timeoutS);
  const clientEnv = ctx.envOf(ctx.config.benchmark.env_var, 'benchmark.env_var');
  const warmups = warmupPlan(ctx.config, input.logDir, clientUsesDataset(ctx.config));
  const benchmarks = planBenchmarks(ctx, warmups, clientEnv);
  const ucxWarmup = planUcxWarmup(ctx, warmups, clientEnv);
  const accuracy = planAccuracy(ctx);
  const exports = planExports(ctx);
  const script: JobScriptPlan = {
    testId: input.testId,
    jobName: ctx.config.slurm.job_name,
    logDir: input.logDir,
    launcher: ctx.launcherName,
    nodesNeeded: ctx.allocation.totalNodes,
    healthTimeoutS: health.timeoutS,
    healthIntervalS: health.intervalS,
    timeLimitS: jobTimeSeconds(ctx.config.slurm.job_time),
    healthPath: ctx.engine.healthPath,
    nodeVars: planNodeVars(ctx),
    routerPort: ctx.allocation.router.port,
    serverConfig: { path: ctx.file(ctx.engine.files.routerConfig), template: ctx.engine.routerConfig(ctx.allocation) },
    exports,
    secretVars: ctx.secrets.names,
    containerLaunch: planContainerLaunch(ctx),
    servers,
    router,
    waitLog: ctx.file(jobFiles.wait),
    benchLog: ctx.file(jobFiles.bench),
    ucxWarmup,
    benchmarks,
    accuracy,
    doneMarker: ctx.file(jobFiles.done),
  };
  return { allocation: ctx.allocation, script, env: ctx.env, jobEnv: ctx.secrets.env, unresolved: dedupe(ctx.unresolved) };
}

function dedupe(items: Unresolved[]): Unresolved[] {
  const seen = new Map(items.map((u) => [u.path, u]));
  return [...seen.values()];
}
