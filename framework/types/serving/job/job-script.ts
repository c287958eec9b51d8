// Renders job.sh from a plan of steps. The fixed machinery (traps, health wait, stopping steps)
// lives in job-prelude.sh; this file only emits the job-specific part, every value through
// shell.ts's quoting, and each step's command line through the plan's launcher.
import { readFileSync } from 'node:fs';
import { renderWords, shellQuote, type EnvAssignment } from '../../../../runners/common/shell.ts';
import { launcherNamed } from '../../../scheduler/launch/launchers.ts';
import { launchWords, type CommandStep, type Launcher } from '../../../scheduler/launch/launcher.ts';
import type { ExactWarmup } from './warmup.ts';
import { InputError } from '../../../../runners/common/errors.ts';
import { JOB_ENDED_FILE, jobEndedFunction } from '../../../scheduler/log-folder.ts';

export interface StepPlan {
  /** CTX_0, ROUTER, client c=8... */
  name: string;
  /** Absolute path of the step's log. */
  log: string;
  /** Where it runs, its environment and command, in no launcher's words. */
  launch: CommandStep;
}

export interface BenchmarkPlan {
  concurrency: number;
  numPrompts: number;
  /** The client's result folder, created first (as run_benchmark.sh does). */
  resultDir: string;
  step: StepPlan;
  /** The exact-shape warm-up before this run (warmup.ts). */
  exactWarmup?: ExactWarmup & { step: StepPlan };
}

export interface JobScriptPlan {
  testId: string;
  jobName?: string;
  logDir: string;
  /** The launcher (framework/scheduler/launch/) that turns each step into its command line. */
  launcher: string;
  nodesNeeded: number;
  healthTimeoutS: number;
  healthIntervalS: number;
  /** The job's time limit (slurm.job_time): the health wait ends in time to report before it. */
  timeLimitS: number;
  /** The path on the router's URL that answers once the servers are up (the engine's). */
  healthPath: string;
  /**
   * Script variables holding node names (`NODES`, for --nodelist) or node addresses (`HOSTS`, for
   * URLs and --host), by node index: GEN_0_NODES=n0,n1 and GEN_0_HOST=<address of n0>.
   */
  nodeVars: Array<{ name: string; nodes: number[]; of: 'NODES' | 'HOSTS' }>;
  routerPort: number;
  /** The router's config with <nodeN> placeholders, rendered with the real node names at run time. */
  serverConfig: { path: string; template: string };
  /** Variables exported to every step (the engine's mode switches). */
  exports: EnvAssignment[];
  /** Variables the job's environment must hold (config secrets, see job-secrets.ts). */
  secretVars: string[];
  containerLaunch?: StepPlan;
  servers: StepPlan[];
  router: StepPlan;
  waitLog: string;
  benchLog: string;
  /** The UCX warm-up of e2e mode, before every measured run (warmup.ts). */
  ucxWarmup?: { requests: number; step: StepPlan };
  benchmarks: BenchmarkPlan[];
  accuracy: StepPlan[];
  doneMarker: string;
}

/** Seconds between SIGTERM and SIGKILL when stopping steps. */
export const STOP_GRACE_S = 15;
/** Lines of each server log shown when the job fails. */
export const TAIL_LINES = 40;

const prelude = readFileSync(new URL('./job-prelude.sh', import.meta.url), 'utf8');

/** A comment line that cannot end the comment early. */
function comment(text: string): string {
  return `# ${text.replace(/[\r\n\u2028\u2029]+/g, ' ')}`;
}

function assign(name: string, value: string | number): string {
  return `${name}=${shellQuote(value)}`;
}

function nodeListExpr(array: 'NODES' | 'HOSTS', nodes: number[]): string {
  return `"${nodes.map((n) => `\${${array}[${n}]}`).join(',')}"`;
}

function heredoc(target: string, body: string): string {
  let tag = 'DISAGG_BENCH_EOF';
  while (body.split('\n').includes(tag)) tag += '_';
  return `render_nodes >${target} <<'${tag}'\n${body.replace(/\n$/, '')}\n${tag}`;
}

function stepLine(fn: 'start_server' | 'run_step', step: StepPlan, launcher: Launcher): string {
  return `${fn} ${shellQuote(step.name)} ${shellQuote(step.log)} ${renderWords(launchWords(launcher, step.launch))}`;
}

/** The health URL, inside double quotes after ${ROUTER_URL}: an engine's path is plain URL characters. */
function healthUrl(path: string): string {
  if (!/^\/[A-Za-z0-9/._~-]*$/.test(path)) throw new InputError(`the engine's health path ${JSON.stringify(path)}: expected a URL path of plain characters`, { place: 'healthPath' });
  return `"\${ROUTER_URL}${path}"`;
}

const jobInfoFile = (plan: JobScriptPlan) => `${plan.logDir}/job_info.txt`;

/**
 * What one attempt of the job writes into its log folder (files and folders, the submission's own
 * files excluded: job.sh, the configs, allocations.json, env_vars.json are the job's input). An
 * attempt after a requeue appends to the same step logs, and the log parser would then read the
 * killed attempt's cut-off result block first: the job moves these aside before it starts again.
 */
export function attemptOutputs(plan: JobScriptPlan): string[] {
  const steps = [plan.containerLaunch, ...plan.servers, plan.router, plan.ucxWarmup?.step, ...plan.accuracy];
  const paths = [
    jobInfoFile(plan), plan.waitLog, plan.benchLog, plan.doneMarker, `${plan.logDir}/${JOB_ENDED_FILE}`,
    ...steps.map((step) => step?.log),
    ...plan.benchmarks.flatMap((b) => [b.resultDir, b.step.log, b.exactWarmup?.resultDir, b.exactWarmup?.step.log, b.exactWarmup?.split?.warmup, b.exactWarmup?.split?.measurement]),
  ];
  const inside = (p: string) => p.startsWith(`${plan.logDir}/`);
  return [...new Set(paths.filter((p): p is string => p !== undefined && inside(p)))];
}

export function renderJobScript(plan: JobScriptPlan): string {
  const q = shellQuote;
  const launcher = launcherNamed(plan.launcher, 'launch.launcher');
  const step = (fn: 'start_server' | 'run_step', s: StepPlan) => stepLine(fn, s, launcher);
  const lines: string[] = [
    '#!/usr/bin/env bash',
    comment(`disagg-bench job for ${plan.testId}: generated from its config by framework/types/serving/job; rebuild it instead of editing.`),
    'set -euo pipefail',
    '',
    assign('LOG_DIR', plan.logDir),
    assign('TEST_ID', plan.testId),
    assign('JOB_NAME', plan.jobName ?? plan.testId),
    // The environment may shorten or lengthen the health wait of a whole run.
    `HEALTH_TIMEOUT=\${DISAGG_HEALTH_TIMEOUT:-${plan.healthTimeoutS}}`,
    `HEALTH_INTERVAL=\${DISAGG_HEALTH_INTERVAL:-${plan.healthIntervalS}}`,
    `JOB_TIME_LIMIT=${plan.timeLimitS}`,
    // Config secrets come from the job's environment (BuiltJob.env), never from this file.
    ...plan.secretVars.map((name) => `: "\${${name}?must be set in the job environment, config secrets are not written to job.sh}"`),
    `STOP_GRACE=${STOP_GRACE_S}`,
    `TAIL_LINES=${TAIL_LINES}`,
    jobEndedFunction(plan.logDir),
    '',
    prelude.trimEnd(),
    '',
    `[[ $HEALTH_TIMEOUT =~ ^[0-9]+$ && $HEALTH_INTERVAL =~ ^[1-9][0-9]*$ ]] || { log "DISAGG_HEALTH_TIMEOUT/DISAGG_HEALTH_INTERVAL must be whole seconds" >&2; exit 2; }`,
    'mkdir -p "$LOG_DIR"',
    comment('A requeued job starts again from the top: what the attempt before wrote goes to attempt-<n>/ (set_aside_attempt).'),
    `set_aside_attempt "\${SLURM_RESTART_COUNT:-0}" ${attemptOutputs(plan).map(q).join(' ')}`,
    'log "job ${SLURM_JOB_ID:-local} of ${TEST_ID} (${JOB_NAME}) on $(hostname)"',
    `printf 'job_id: %s\\ntest_id: %s\\njob_name: %s\\nstarted: %s\\n' "\${SLURM_JOB_ID:-local}" "$TEST_ID" "$JOB_NAME" "$(date -Iseconds)" >${q(jobInfoFile(plan))}`,
    '',
    comment('Nodes, in the order allocations.json numbers them.'),
    `resolve_nodes ${plan.nodesNeeded}`,
    ...plan.nodeVars.map((v) => `${v.name}=${nodeListExpr(v.of, v.nodes)}`),
    `ROUTER_NODE="\${NODES[0]}"`,
    `ROUTER_HOST="\${HOSTS[0]}"`,
    `ROUTER_URL="http://\${ROUTER_HOST}:${plan.routerPort}"`,
    ...plan.exports.map((e) => `export ${assign(e.name, e.value)}`),
    '',
    comment('The router config with the real node addresses.'),
    heredoc(q(plan.serverConfig.path), plan.serverConfig.template),
    '',
  ];
  if (plan.containerLaunch) {
    lines.push(comment('Start the container on every node once.'), step('run_step', plan.containerLaunch), '');
  }
  lines.push(comment('Servers and router.'));
  for (const server of plan.servers) lines.push(step('start_server', server));
  lines.push(step('start_server', plan.router), '');
  lines.push(`wait_for_health ${healthUrl(plan.healthPath)} ${q(plan.waitLog)}`, '');
  const bench = q(plan.benchLog);
  const say = (text: string) => `echo ${q(text)} >>${bench}`;
  // The markers are run_benchmark.sh's, word for word (the log parser reads them).
  if (plan.ucxWarmup) {
    lines.push(
      comment('UCX warm-up (e2e): connections set up before anything is measured.'),
      say(`warming up ucx connections with small requests... ${plan.ucxWarmup.requests}`),
      step('run_step', plan.ucxWarmup.step),
      say('UCX warmup done'),
      'check_servers',
    );
  }
  if (plan.benchmarks.length > 0) {
    lines.push(
      comment('Benchmark, one client run per concurrency.'),
      `echo "Hostname: \${ROUTER_HOST}, Port: ${plan.routerPort}" >>${bench}`,
      say('Starting benchmark...'),
    );
  }
  for (const b of plan.benchmarks) {
    const w = b.exactWarmup;
    if (w) {
      if (w.split) lines.push(`split_dataset ${bench} ${q(w.split.source)} ${q(w.split.warmup)} ${q(w.split.measurement)} ${w.prompts} ${b.numPrompts}`);
      lines.push(
        `mkdir -p ${q(w.resultDir)}`,
        say(`Warming up exact request shape with concurrency ${b.concurrency} ... ${w.prompts} prompts`),
        step('run_step', w.step),
        say(`Exact-shape warmup with concurrency ${b.concurrency} done`),
        'check_servers',
      );
    }
    lines.push(
      `mkdir -p ${q(b.resultDir)}`,
      say(`Benchmarking with concurrency ${b.concurrency} ... ${b.numPrompts} prompts`),
      step('run_step', b.step),
      say(`Benchmark with concurrency ${b.concurrency} done`),
      'check_servers',
    );
  }
  if (plan.accuracy.length > 0) lines.push('', comment('Accuracy evaluation.'));
  for (const task of plan.accuracy) lines.push(step('run_step', task), 'check_servers');
  lines.push('', `date -Iseconds >${q(plan.doneMarker)}`, 'log "all steps done"', 'exit 0', '');
  return lines.join('\n');
}
