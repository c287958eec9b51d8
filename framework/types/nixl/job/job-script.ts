// job.sh of a nixl test: the kind's prelude, then every rank started by the run's launcher (srun,
// also on the local backend through its srun shim; framework/scheduler/launch/), output into the
// kind's log file, then the kind's cleanup (also on failure). Every value goes through shellQuote; the script is `bash -n`-clean by construction.
import path from 'node:path';
import type { JobResources } from '../../../scheduler/scheduler.ts';
import { jobTimeSeconds } from '../../../../runners/common/job-time.ts';
import { renderWords, shellQuote, splitShellWords } from '../../../../runners/common/shell.ts';
import { launcherNamed } from '../../../scheduler/launch/launchers.ts';
import type { Launcher, LaunchStep } from '../../../scheduler/launch/launcher.ts';
import { DEFAULT_JOB_TIME, nodesOf, usesGpus, type NixlConfig } from '../common.ts';
import { SHARE_GPU_ENV } from '../../../../runners/xfer/gpu-share-env.ts';
import { PEER_DIED_EXIT_CODE } from '../../../../runners/xfer/errors.ts';
import type { RankCommand } from '../kind.ts';
import { ucxSectionEnv } from '../ucx-section.ts';
import { InputError } from '../../../../runners/common/errors.ts';
import { jobEndedFunction } from '../../../scheduler/log-folder.ts';

/** Lines of a failed rank log shown in the job's stderr (so the test's failure shows them). */
export const FAILURE_TAIL_LINES = 40;

const join = (words: readonly (string | number)[]) => words.map(shellQuote).join(' ');

/** The bin script every `disagg-bench <command>` runs through (tsx registers itself there). */
export function disaggBenchBin(packageRoot: string): string {
  return path.join(packageRoot, 'bin', 'disagg-bench.js');
}

/**
 * A bash command line running `disagg-bench <argv>` with the job's node binary ($NODE_BIN:
 * DISAGG_NODE, else `node` on PATH), e.g. for a kind's prelude.
 */
export function disaggBenchCommand(packageRoot: string, argv: readonly string[]): string {
  return `"$NODE_BIN" ${join([disaggBenchBin(packageRoot), ...argv])}`;
}

export interface NixlJobPlan {
  testId: string;
  config: NixlConfig;
  logDir: string;
  packageRoot: string;
  rank: RankCommand;
  /** The launcher that starts the ranks (JobBuildContext.launcher); absent: srun. */
  launcher?: string;
}

/** A launcher's words for a step, then the rest of the line (a launcher with no words adds none). */
function launched(launcher: Launcher, step: LaunchStep, rest: string): string {
  const prefix = launcher.prefix(step);
  return prefix.length > 0 ? `${renderWords(prefix)} ${rest}` : rest;
}

export function renderNixlJobScript(plan: NixlJobPlan): string {
  const { config, rank } = plan;
  const { kind, ranks, backend, timeout_s, cuda_copy } = config.benchmark;
  const nodes = nodesOf(config);
  const rankLog = path.join(plan.logDir, rank.logFile);
  const launch = rank.external ? join(rank.argv) : disaggBenchCommand(plan.packageRoot, rank.argv);
  const launcher = launcherNamed(plan.launcher ?? 'srun', 'the launcher of the ranks');
  if (!launcher.startsTasks && ranks > 1) {
    throw new InputError(`the launcher ${launcher.name} runs a command once, and the ranks are ${ranks}: use a launcher that starts tasks (srun, mpirun)`, { place: 'benchmark.ranks' });
  }
  // A failed rank ends the others: they would wait for their peer until the transfer times out.
  const ranksStep: LaunchStep = { nodes, tasks: ranks, tasksPerNode: ranks / nodes, endsOnTaskFailure: true };
  const env: Record<string, string> = {
    // How each rank learns its rank and world size: from its launcher's variables (runners/xfer/rank.ts).
    ...(launcher.rankVariables !== undefined ? { XFER_RANK_VARIABLES: launcher.rankVariables } : {}),
    ...(timeout_s !== undefined ? { XFER_TIMEOUT_S: String(timeout_s) } : {}),
    ...(config.benchmark.fi_provider !== undefined ? { FI_PROVIDER: config.benchmark.fi_provider } : {}),
    ...(config.benchmark.ranks_may_share_gpu ? { [SHARE_GPU_ENV]: '1' } : {}),
    ...(cuda_copy !== undefined ? { XFER_CUDA_COPY: cuda_copy } : {}),
    ...ucxSectionEnv(config.ucx),
    ...rank.env,
  };
  const lines = [
    '#!/usr/bin/env bash',
    `# disagg-bench nixl job for ${oneLine(plan.testId)} (kind ${oneLine(kind)}): generated from its config; rebuild it instead of editing.`,
    'set -euo pipefail',
    `LOG_DIR=${shellQuote(plan.logDir)}`,
    `RANK_LOG=${shellQuote(rankLog)}`,
    'NODE_BIN="${DISAGG_NODE:-node}"',
    ...Object.entries(env).map(([name, value]) => `export ${checkedName(name)}=${shellQuote(value)}`),
    'mkdir -p "$LOG_DIR"',
    `echo "job \${SLURM_JOB_ID:-local} of "${shellQuote(`${plan.testId}: ${kind}, ${ranks} ranks on ${nodes} node(s), backend ${backend}`)}" on $(hostname) at $(date -Iseconds)"`,
  ];
  // On the way out, whatever the way: the kind's cleanup, then the end mark (log-folder.ts).
  lines.push(jobEndedFunction(plan.logDir));
  if (rank.cleanup?.length) {
    lines.push('cleanup() {', ...rank.cleanup.map((l) => `  ${l}`), '}', `trap 'exit_status=$?; cleanup; mark_job_ended "$exit_status"' EXIT`);
  } else {
    lines.push(`trap 'mark_job_ended "$?"' EXIT`);
  }
  if (usesGpus(config) && !rank.external) lines.push(gpuCheckLine(plan));
  if (rank.prelude?.length) lines.push(...rank.prelude);
  if (backend === 'libfabric') lines.push(...nodeArtefactLines(plan.packageRoot, nodes, launcher));
  lines.push(
    'status=0',
    `${launched(launcher, ranksStep, launch)} >"$RANK_LOG" 2>&1 || status=$?`,
    'if ((status != 0)); then',
    // srun exits with its tasks' highest status; 75 is that of ranks that stopped because another ended.
    `  ((status == ${PEER_DIED_EXIT_CODE})) && why=': ranks that stopped because another rank ended first; that rank names its own error in the log' || why=''`,
    `  echo "the ranks failed (exit code $status$why); last ${FAILURE_TAIL_LINES} lines of $RANK_LOG:" >&2`,
    `  tail -n ${FAILURE_TAIL_LINES} "$RANK_LOG" >&2 || true`,
    'else',
    '  echo "the ranks finished; output in $RANK_LOG"',
    'fi',
    'exit "$status"',
    '',
  );
  return lines.join('\n');
}

/** Before any rank starts: the node has the GPUs the config asks for (or the ranks may share them). */
function gpuCheckLine(plan: NixlJobPlan): string {
  const { benchmark } = plan.config;
  const argv = ['gpu-check', '--gpus-per-node', String(benchmark.gpus_per_node ?? 0), '--ranks-per-node', String(benchmark.ranks / nodesOf(plan.config))];
  if (benchmark.ranks_may_share_gpu) argv.push('--ranks-may-share-gpu');
  return disaggBenchCommand(plan.packageRoot, argv);
}

/** What the job asks the scheduler for: nodes, one task per rank, the time limit, the slurm section. */
export function nixlResources(config: NixlConfig): JobResources {
  const nodes = nodesOf(config);
  const { slurm = {}, benchmark } = config;
  return {
    nodes,
    ntasks: benchmark.ranks,
    ntasksPerNode: benchmark.ranks / nodes,
    timeLimitSec: jobTimeSeconds(slurm.job_time ?? DEFAULT_JOB_TIME),
    ...(benchmark.gpus_per_node ? { gpusPerNode: benchmark.gpus_per_node } : {}),
    ...(slurm.partition !== undefined ? { partition: slurm.partition } : {}),
    ...(slurm.account !== undefined ? { account: slurm.account } : {}),
    ...(slurm.extra_args !== undefined ? { extraArgs: splitShellWords(slurm.extra_args) } : {}),
  };
}

/**
 * fi_info (and the GPU and EFA listings) of every node into the log folder, as NIXL's benchmarking suite on EFA
 * keeps them (runners/nixl/node-artefacts.ts); a failure is reported, never fatal.
 */
function nodeArtefactLines(packageRoot: string, nodes: number, launcher: Launcher): string[] {
  const collect = disaggBenchCommand(packageRoot, ['nixl-tool', 'node-artefacts', '--dir']);
  return [`${launched(launcher, { nodes, tasks: nodes, tasksPerNode: 1 }, collect)} "$LOG_DIR" || echo "fi_info artefacts: the collection step failed (exit code $?)" >&2`];
}

function oneLine(text: string): string {
  return text.replace(/[\r\n\u2028\u2029]+/g, ' ');
}

function checkedName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new InputError(`not a valid environment variable name: ${JSON.stringify(name)}`);
  return name;
}
