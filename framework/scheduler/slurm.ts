// The SLURM backend: sbatch to submit, one status command per poll for all jobs, one scancel
// for many. SLURM's own configuration (SLURM_CONF, PATH) is taken from the environment as-is.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { SchedulerError, type JobLogs, type JobRequest, type JobStatus, type Scheduler, type SchedulerCapabilities } from './scheduler.ts';
import type { SchedulerDefinition } from './registry.ts';
import { partitionGpus } from './slurm-gpus.ts';
import { commandError, retryTransient, runSlurmCommand, type CommandOutcome } from './slurm-command.ts';
import {
  collectStatuses,
  jobcompStatusArgs,
  parseSacctStatus,
  parseSqueueStatus,
  sacctStatusArgs,
  squeueStatusArgs,
  type StatusRecord,
} from './slurm-status.ts';
import { isStepId, parseJobId } from './states.ts';
import { filledValue } from '../../runners/common/placeholder.ts';
import { jobOutputFiles, sbatchOutputPatterns } from './log-folder.ts';
import { InputError } from '../../runners/common/errors.ts';

/** Where job states come from: sacct (accounting) or squeue plus the jobcomp file (no accounting). */
export type StatusSource = 'sacct' | 'squeue';

/** What a SLURM command was run for; `commandsIssued` counts each. */
export type CommandPurpose = 'submit' | 'status' | 'cancel' | 'probe';

export interface SlurmSchedulerOptions {
  /** Variables added to every SLURM command's environment (e.g. SLURM_CONF). Default: none. */
  env?: Record<string, string | undefined>;
  /** Transient failures of sbatch and scancel retried after the first attempt. Default 4. */
  retries?: number;
  /** Back-off before the first retry, doubled for each next one. Default 500 ms. */
  retryBaseDelayMs?: number;
  /** Limit for one SLURM command. Default 60 000 ms. */
  commandTimeoutMs?: number;
  /** PREEMPTED is final (sites with PreemptMode=CANCEL). Default false (requeue). */
  preemptedIsTerminal?: boolean;
  /** 'auto' probes once whether sacct works (one `sacct` run). Default 'auto'. */
  statusSource?: StatusSource | 'auto';
}

// With -j, sacct reaches back to the epoch; from a little before our first submission is enough
// and keeps older jobs that had the same id (after a controller reset) out.
const SACCT_SINCE_SLACK_MS = 10 * 60_000;

/** `sbatch --time` from seconds: `[D-]HH:MM:SS`. */
export function formatTimeLimit(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InputError(`time limit must be a positive number of seconds, got ${seconds}`);
  const total = Math.ceil(seconds);
  const days = Math.floor(total / 86_400);
  const two = (n: number) => String(n).padStart(2, '0');
  const clock = `${two(Math.floor((total % 86_400) / 3600))}:${two(Math.floor((total % 3600) / 60))}:${two(total % 60)}`;
  return days > 0 ? `${days}-${clock}` : clock;
}

/** The sbatch arguments for a request; the job's env travels in sbatch's environment (--export=ALL). */
export function sbatchArgs(request: JobRequest): string[] {
  const r = request.resources;
  const positive = (name: string, n: number | undefined) => {
    if (n !== undefined && (!Number.isInteger(n) || n < 1)) throw new InputError(`${name} must be a positive integer, got ${n}`);
  };
  positive('nodes', r.nodes);
  positive('ntasks', r.ntasks);
  positive('ntasksPerNode', r.ntasksPerNode);
  positive('cpusPerTask', r.cpusPerTask);
  if (r.gpusPerNode !== undefined && (!Number.isInteger(r.gpusPerNode) || r.gpusPerNode < 0)) {
    throw new InputError(`gpusPerNode must be a non-negative integer, got ${r.gpusPerNode}`);
  }
  // A blank or unfilled `<partition>` / `<account>` means the cluster's default, not one by that name.
  const partition = filledValue(r.partition);
  const account = filledValue(r.account);
  const logs = sbatchOutputPatterns(request.logDir);
  return [
    '--parsable',
    `--job-name=${request.name}`,
    ...(partition ? [`--partition=${partition}`] : []),
    ...(account ? [`--account=${account}`] : []),
    `--time=${formatTimeLimit(r.timeLimitSec)}`,
    `--nodes=${r.nodes}`,
    `--ntasks=${r.ntasks}`,
    ...(r.ntasksPerNode ? [`--ntasks-per-node=${r.ntasksPerNode}`] : []),
    ...(r.cpusPerTask ? [`--cpus-per-task=${r.cpusPerTask}`] : []),
    ...(r.gpusPerNode ? [`--gres=gpu:${r.gpusPerNode}`] : []),
    `--output=${logs.output}`,
    `--error=${logs.error}`,
    `--chdir=${request.workDir}`,
    '--export=ALL',
    ...(r.extraArgs ?? []),
    request.scriptPath,
  ];
}

/** `123` or `123;cluster` (--parsable), or `Submitted batch job 123`; undefined when neither. */
export function parseSubmitOutput(stdout: string): string | undefined {
  const last = stdout.trim().split('\n').pop()?.trim() ?? '';
  return /^(\d+)(?:;\S+)?$/.exec(last)?.[1] ?? /Submitted batch job (\d+)/.exec(stdout)?.[1];
}

// scancel complaints about jobs that are already gone: cancelling them is a no-op by contract.
const GONE_JOB = /invalid job id specified|already completing or completed|job has already finished/i;

function onlyGoneJobErrors(stderr: string): boolean {
  const errors = stderr.split('\n').filter((line) => /error/i.test(line));
  return errors.length > 0 && errors.every((line) => GONE_JOB.test(line));
}

/** True when `sbatch` is an executable on PATH (the default for choosing this backend). */
export function slurmAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.PATH ?? '').split(delimiter).some((dir) => {
    if (!dir) return false;
    try {
      accessSync(join(dir, 'sbatch'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

// SLURM clients fail fast or after their connect retries (~10 s here); either way a controller
// restart or fail-over (SlurmctldTimeout, 120 s by default) must not fail the tests waiting.
const POLL_FAILURE_SPAN_MS = 180_000;

const capabilities: SchedulerCapabilities = {
  jobsOutliveRun: true, costlyPolls: true, pollFailureSpanMs: POLL_FAILURE_SPAN_MS,
  arrays: true, gres: true, segment: true, requeue: true, nodeLists: true,
};

export class SlurmScheduler implements Scheduler {
  readonly name = 'slurm';
  readonly capabilities = capabilities;
  /** SLURM commands run so far, by purpose (retries included): tests check one status command per poll. */
  readonly commandsIssued: Record<CommandPurpose, number> = { submit: 0, status: 0, cancel: 0, probe: 0 };
  private readonly options: Required<Omit<SlurmSchedulerOptions, 'env'>> & Pick<SlurmSchedulerOptions, 'env'>;
  private source?: Promise<StatusSource>;
  /** Cleared when `sacct -c` fails for good (the site's JobCompType is not filetxt). */
  private jobcompReadable = true;
  private readonly submittedAt = new Map<string, number>();

  constructor(options: SlurmSchedulerOptions = {}) {
    this.options = {
      env: options.env,
      retries: options.retries ?? 4,
      retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
      commandTimeoutMs: options.commandTimeoutMs ?? 60_000,
      preemptedIsTerminal: options.preemptedIsTerminal ?? false,
      statusSource: options.statusSource ?? 'auto',
    };
  }

  async submit(request: JobRequest): Promise<string> {
    let args: string[];
    try {
      args = sbatchArgs(request);
    } catch (error) {
      throw new SchedulerError(`job "${request.name}": ${(error as Error).message}`, 'sbatch');
    }
    await mkdir(request.logDir, { recursive: true }); // sbatch does not create --output folders
    const { outcome, attempts } = await retryTransient(
      () => this.run('submit', 'sbatch', args, request.env),
      this.retryOptions(),
    );
    if (!outcome.ok) throw commandError(outcome, `sbatch of job "${request.name}"`, attempts);
    const id = parseSubmitOutput(outcome.stdout);
    if (!id) {
      throw new SchedulerError(
        `sbatch of job "${request.name}" printed no job id: ${JSON.stringify(outcome.stdout)}`,
        outcome.command,
        0,
        outcome.stderr,
      );
    }
    this.submittedAt.set(id, Date.now());
    return id;
  }

  async poll(ids: string[]): Promise<Map<string, JobStatus>> {
    const wanted = [...new Set(ids.map((id) => id.trim()))].filter((id) => parseJobId(id) && !isStepId(id));
    const statuses = new Map<string, JobStatus>();
    if (wanted.length === 0) return statuses;
    const source = await this.statusSource();
    collectStatuses(wanted, source === 'sacct' ? await this.sacctRecords(wanted) : await this.squeueRecords(wanted), statuses);
    // A second command only for jobs the first did not report: too new for the accounting
    // database, or purged by the controller (MinJobAge) and left only in the jobcomp file. Its
    // failure leaves them unreported rather than losing the first command's answer.
    const missing = wanted.filter((id) => !statuses.has(id));
    if (missing.length > 0) {
      const fallback = source === 'sacct' ? this.squeueRecords(missing) : this.jobcompRecords(missing);
      collectStatuses(missing, await fallback.catch(() => []), statuses);
    }
    return statuses;
  }

  async cancel(ids: string[]): Promise<void> {
    const wanted = [...new Set(ids.map((id) => id.trim()))].filter((id) => parseJobId(id));
    if (wanted.length === 0) return;
    const { outcome, attempts } = await retryTransient(() => this.run('cancel', 'scancel', wanted), this.retryOptions());
    if (outcome.ok || onlyGoneJobErrors(outcome.stderr)) return;
    throw commandError(outcome, `scancel of ${wanted.length} job(s)`, attempts);
  }

  /**
   * One scancel, synchronously and without retries: for signal handlers, where the process may be
   * gone before a promise settles. Returns why it failed, or undefined when the jobs are cancelled.
   */
  cancelNow(ids: string[]): string | undefined {
    const wanted = [...new Set(ids.map((id) => id.trim()))].filter((id) => parseJobId(id));
    if (wanted.length === 0) return undefined;
    this.commandsIssued.cancel++;
    const result = spawnSync('scancel', wanted, {
      env: { ...process.env, ...this.options.env },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: this.options.commandTimeoutMs,
      encoding: 'utf8',
    });
    const stderr = result.stderr ?? '';
    if (result.status === 0 || onlyGoneJobErrors(stderr)) return undefined;
    const how = result.error ? result.error.message : `exit code ${result.status ?? result.signal}`;
    return `scancel ${wanted.join(' ')} failed: ${how}${stderr.trim() ? `: ${stderr.trim()}` : ''}`;
  }

  logs(id: string, request: JobRequest): JobLogs {
    return jobOutputFiles(request.logDir, id);
  }

  async close(): Promise<void> {
    // Every command is awaited where it is issued; nothing outlives a call.
  }

  /** Which command reports job states; decided once (a `sacct` probe) unless set in the options. */
  statusSource(): Promise<StatusSource> {
    if (this.options.statusSource !== 'auto') return Promise.resolve(this.options.statusSource);
    // Without accounting sacct exits 1 ("Slurm accounting storage is disabled").
    this.source ??= this.run('probe', 'sacct', ['-X', '-P', '-n', '-o', 'JobIDRaw', '-j', '1']).then((outcome) =>
      outcome.ok ? 'sacct' : 'squeue',
    );
    return this.source;
  }

  private async sacctRecords(ids: string[]): Promise<StatusRecord[]> {
    const submitted = ids.map((id) => this.submittedAt.get(id));
    const since = submitted.every((t) => t !== undefined) ? (submitted as number[]).reduce((a, b) => Math.min(a, b), Infinity) - SACCT_SINCE_SLACK_MS : undefined;
    const outcome = await this.run('status', 'sacct', sacctStatusArgs(ids, since));
    if (!outcome.ok) throw commandError(outcome, 'sacct status query');
    return parseSacctStatus(outcome.stdout, this.options);
  }

  private async squeueRecords(ids: string[]): Promise<StatusRecord[]> {
    const outcome = await this.run('status', 'squeue', squeueStatusArgs(ids));
    if (outcome.ok) return parseSqueueStatus(outcome.stdout, this.options);
    // squeue -j with a single id the controller no longer knows exits 1 instead of printing nothing.
    if (/invalid job id specified/i.test(outcome.stderr)) return [];
    throw commandError(outcome, 'squeue status query');
  }

  private async jobcompRecords(ids: string[]): Promise<StatusRecord[]> {
    if (!this.jobcompReadable) return [];
    const outcome = await this.run('status', 'sacct', jobcompStatusArgs(ids));
    if (outcome.ok) return parseSacctStatus(outcome.stdout, this.options);
    this.jobcompReadable = false; // not a filetxt jobcomp site: the ids stay unreported
    return [];
  }

  private run(purpose: CommandPurpose, file: string, args: string[], jobEnv?: Record<string, string>): Promise<CommandOutcome> {
    this.commandsIssued[purpose]++;
    return runSlurmCommand(file, args, {
      env: { ...this.options.env, ...jobEnv },
      timeoutMs: this.options.commandTimeoutMs,
    });
  }

  private retryOptions() {
    return { retries: this.options.retries, baseDelayMs: this.options.retryBaseDelayMs };
  }
}

export const slurmDefinition: SchedulerDefinition = {
  name: 'slurm',
  description: 'SLURM: sbatch, one sacct or squeue per poll, scancel',
  capabilities,
  launcher: 'srun',
  autoSelect: { rank: 10, available: slurmAvailable, when: 'sbatch is on PATH' },
  create: () => new SlurmScheduler(),
  gpuProbe: (env) => {
    const partition = filledValue(env.SLURM_PARTITION);
    return () => partitionGpus(partition);
  },
};
