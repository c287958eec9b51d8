// The Grid Engine backend (Son of Grid Engine 8.1, Debian's gridengine-*): qsub to submit, one
// `qstat -xml` per poll for every queued or running job (plus `qstat -j` for why pending ones
// wait), the cell's accounting file for how finished ones ended, one qdel for many. A job of
// several tasks asks a parallel environment for its slots; its steps start their tasks with the
// gridengine launcher (launch/gridengine.ts). SGE_ROOT and SGE_CELL are taken from the environment.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SchedulerError, type JobLogs, type JobRequest, type JobStatus, type Scheduler, type SchedulerCapabilities } from './scheduler.ts';
import type { SchedulerDefinition } from './registry.ts';
import { commandError, retryTransient, runSlurmCommand, type CommandOutcome } from './slurm-command.ts';
import { jobOutputFiles } from './log-folder.ts';
import { endedStatus, liveStatus, parseAccounting, parseQstatXml, parseWaitReasons } from './gridengine-status.ts';
import { filledValue } from '../../runners/common/placeholder.ts';

export interface GridEngineOptions {
  /** The environment of every command (SGE_ROOT, SGE_CELL, PATH). Default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** The parallel environment a job of several tasks asks for (DISAGG_GE_PE). Default `disagg`. */
  parallelEnvironment?: string;
  /**
   * The cell's consumable resource counting GPUs, asked once per job (DISAGG_GE_GPU_RESOURCE).
   * Default `gpu`; a cell without it refuses a job that asks for GPUs at submission.
   */
  gpuResource?: string;
  /** Transient failures of qsub and qdel retried after the first attempt. Default 4. */
  retries?: number;
  /** Limit for one command. Default 60 000 ms. */
  commandTimeoutMs?: number;
}

// A job that left qstat is written to the accounting file within a second (the cell's
// accounting_flush_time); until its record is there, it is still ending.
const ACCOUNTING_GRACE_MS = 60_000;

/** What qsub submits: the job script, run with the submitter's PATH (see the script). */
const jobStart = path.join(path.dirname(fileURLToPath(import.meta.url)), 'gridengine-bin', 'job-start');

const GONE_JOB = /job "?\d+"? does not exist|has already been deleted/i;

/** The qsub arguments of a request; the job's environment travels with -V. */
export function qsubArgs(request: JobRequest, parallelEnvironment = 'disagg', gpuResource = 'gpu'): string[] {
  const r = request.resources;
  const where = `job "${request.name}"`;
  if (r.extraArgs?.length) throw new SchedulerError(`${where}: slurm.extra_args are sbatch arguments (${r.extraArgs.join(' ')}); Grid Engine cannot take them: remove them to run on Grid Engine`, 'qsub');
  if (!Number.isFinite(r.timeLimitSec) || r.timeLimitSec <= 0) throw new SchedulerError(`${where}: time limit must be a positive number of seconds, got ${r.timeLimitSec}`, 'qsub');
  const slots = parallelSlots(r, parallelEnvironment);
  const queue = filledValue(r.partition);
  const account = filledValue(r.account);
  const logs = jobOutputFiles(request.logDir, '$JOB_ID'); // qsub expands $JOB_ID in -o and -e
  return [
    '-terse',
    '-N', request.name,
    '-S', '/bin/bash',
    '-wd', request.workDir,
    '-o', logs.stdout,
    '-e', logs.stderr,
    '-V',
    // Refused at once when no queue could ever run it, instead of waiting forever.
    '-w', 'e',
    '-l', `h_rt=${Math.ceil(r.timeLimitSec)}`,
    ...(slots ? ['-pe', slots.environment, String(slots.count)] : []),
    // The resource is counted per slot: a node's share, rounded up, on each of its slots.
    ...(r.gpusPerNode ? ['-l', `${gpuResource}=${Math.ceil(r.gpusPerNode / (slots?.perHost ?? 1))}`] : []),
    ...(queue ? ['-q', queue] : []),
    ...(account ? ['-A', account] : []),
    jobStart,
    request.scriptPath,
  ];
}

/**
 * The parallel environment a job of several tasks asks for, and how many slots. Grid Engine places
 * slots, not nodes: a job of one node asks `<pe>`, which keeps all its slots on one host
 * ($pe_slots); a job of N nodes with K tasks each asks `<pe>.K` for N*K slots, an environment
 * whose allocation rule is exactly K slots on each host, so its N nodes are N hosts.
 */
export function parallelSlots(r: JobRequest['resources'], parallelEnvironment: string): { environment: string; count: number; perHost: number } | undefined {
  if (r.nodes <= 1) {
    const tasks = Math.max(r.ntasks, r.ntasksPerNode ?? 1);
    return tasks > 1 ? { environment: parallelEnvironment, count: tasks, perHost: tasks } : undefined;
  }
  const perHost = r.ntasksPerNode ?? Math.max(1, Math.ceil(r.ntasks / r.nodes));
  return { environment: `${parallelEnvironment}.${perHost}`, count: r.nodes * perHost, perHost };
}

/** True when qsub is an executable on PATH. */
export function gridEngineAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.PATH ?? '').split(path.delimiter).some((dir) => {
    if (!dir) return false;
    try {
      accessSync(path.join(dir, 'qsub'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const capabilities: SchedulerCapabilities = {
  jobsOutliveRun: true, costlyPolls: true, pollFailureSpanMs: 180_000,
  arrays: false, gres: true, segment: false, requeue: false, nodeLists: true,
};

export class GridEngineScheduler implements Scheduler {
  readonly name = 'gridengine';
  readonly capabilities = capabilities;
  private readonly env: NodeJS.ProcessEnv;
  private readonly pe: string;
  private readonly gpuResource: string;
  private readonly retries: number;
  private readonly timeoutMs: number;
  private readonly timeLimits = new Map<string, number>();
  private readonly cancelled = new Set<string>();
  /** When each job was first missing from qstat without an accounting record. */
  private readonly missingSince = new Map<string, number>();

  constructor(options: GridEngineOptions = {}) {
    this.env = options.env ?? process.env;
    this.pe = options.parallelEnvironment ?? this.env.DISAGG_GE_PE ?? 'disagg';
    this.gpuResource = options.gpuResource ?? this.env.DISAGG_GE_GPU_RESOURCE ?? 'gpu';
    this.retries = options.retries ?? 4;
    this.timeoutMs = options.commandTimeoutMs ?? 60_000;
  }

  async submit(request: JobRequest): Promise<string> {
    const args = qsubArgs(request, this.pe, this.gpuResource);
    await mkdir(request.logDir, { recursive: true });
    const { outcome, attempts } = await retryTransient(() => this.run('qsub', args, request.env), { retries: this.retries, baseDelayMs: 500 });
    if (!outcome.ok) throw commandError(outcome, `qsub of job "${request.name}"`, attempts);
    const id = /^(\d+)/.exec(outcome.stdout.trim())?.[1];
    if (!id) throw new SchedulerError(`qsub of job "${request.name}" printed no job id: ${JSON.stringify(outcome.stdout)}`, outcome.command, 0, outcome.stderr);
    this.timeLimits.set(id, request.resources.timeLimitSec);
    return id;
  }

  async poll(ids: string[]): Promise<Map<string, JobStatus>> {
    const wanted = [...new Set(ids.map((id) => id.trim()))].filter((id) => /^\d+$/.test(id));
    const statuses = new Map<string, JobStatus>();
    if (wanted.length === 0) return statuses;
    const listed = await this.run('qstat', ['-u', '*', '-xml']);
    if (!listed.ok) throw commandError(listed, 'qstat status query');
    const live = new Map(parseQstatXml(listed.stdout).map((job) => [job.id, job]));
    const waiting = wanted.filter((id) => live.get(id) && /[qwhE]/.test(live.get(id)!.letters) && !/r/.test(live.get(id)!.letters));
    const reasons = waiting.length > 0 ? await this.waitReasons(waiting) : new Map();
    const gone = new Set<string>();
    for (const id of wanted) {
      const job = live.get(id);
      if (job) {
        statuses.set(id, liveStatus(job, reasons.get(id)));
        this.missingSince.delete(id);
      } else gone.add(id);
    }
    if (gone.size === 0) return statuses;
    for (const [id, record] of parseAccounting(this.accountingText(), gone)) {
      statuses.set(id, endedStatus(record, { timeLimitSec: this.timeLimits.get(id), cancelledHere: this.cancelled.has(id) }));
      gone.delete(id);
      this.missingSince.delete(id);
    }
    const now = Date.now();
    for (const id of gone) {
      // A job this process deleted before it started leaves no accounting record.
      if (this.cancelled.has(id)) {
        statuses.set(id, { id, state: 'CANCELLED', terminal: true, reason: 'deleted before it started' });
        continue;
      }
      const since = this.missingSince.get(id) ?? now;
      this.missingSince.set(id, since);
      if (now - since < ACCOUNTING_GRACE_MS) statuses.set(id, { id, state: 'COMPLETING', terminal: false });
    }
    return statuses;
  }

  async cancel(ids: string[]): Promise<void> {
    const wanted = [...new Set(ids.map((id) => id.trim()))].filter((id) => /^\d+$/.test(id));
    if (wanted.length === 0) return;
    for (const id of wanted) this.cancelled.add(id);
    const { outcome, attempts } = await retryTransient(() => this.run('qdel', wanted), { retries: this.retries, baseDelayMs: 500 });
    if (outcome.ok || onlyGoneJobs(outcome.stderr, outcome.stdout)) return;
    throw commandError(outcome, `qdel of ${wanted.length} job(s)`, attempts);
  }

  cancelNow(ids: string[]): string | undefined {
    const wanted = [...new Set(ids.map((id) => id.trim()))].filter((id) => /^\d+$/.test(id));
    if (wanted.length === 0) return undefined;
    for (const id of wanted) this.cancelled.add(id);
    const result = spawnSync('qdel', wanted, { env: this.env, stdio: ['ignore', 'pipe', 'pipe'], timeout: this.timeoutMs, encoding: 'utf8' });
    if (result.status === 0 || onlyGoneJobs(result.stderr ?? '', result.stdout ?? '')) return undefined;
    const how = result.error ? result.error.message : `exit code ${result.status ?? result.signal}`;
    return `qdel ${wanted.join(' ')} failed: ${how}${result.stderr?.trim() ? `: ${result.stderr.trim()}` : ''}`;
  }

  logs(id: string, request: JobRequest): JobLogs {
    return jobOutputFiles(request.logDir, id);
  }

  async close(): Promise<void> {
    // Every command is awaited where it is issued; jobs live on in the cell.
  }

  private async waitReasons(ids: string[]): Promise<Map<string, { reason: string; error: boolean }>> {
    const outcome = await this.run('qstat', ['-j', ids.join(',')]);
    // Reasons are for people: without them the states still hold.
    return outcome.ok ? parseWaitReasons(outcome.stdout) : new Map();
  }

  private accountingText(): string {
    const root = this.env.SGE_ROOT ?? '/var/lib/gridengine';
    const file = path.join(root, this.env.SGE_CELL ?? 'default', 'common', 'accounting');
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return ''; // no job has ended in this cell yet
    }
  }

  private run(file: string, args: string[], jobEnv?: Record<string, string>): Promise<CommandOutcome> {
    return runSlurmCommand(file, args, { env: { ...this.env, ...jobEnv }, timeoutMs: this.timeoutMs });
  }
}

/** qdel's complaints, every one about a job that is gone already (deleting it is a no-op by contract). */
function onlyGoneJobs(stderr: string, stdout: string): boolean {
  const lines = `${stderr}\n${stdout}`.split('\n').filter((l) => /denied|error/i.test(l));
  return lines.length > 0 && lines.every((l) => GONE_JOB.test(l));
}

export const gridEngineDefinition: SchedulerDefinition = {
  name: 'gridengine',
  description: 'Grid Engine: qsub (a parallel environment for several tasks), one qstat per poll and the accounting file, qdel',
  capabilities,
  launcher: 'gridengine',
  autoSelect: { rank: 20, available: gridEngineAvailable, when: 'qsub is on PATH' },
  create: ({ env }) => new GridEngineScheduler({ env }),
};
