// The one interface every scheduler backend implements (slurm, local and replay here; others
// register themselves the same way: registry.ts).
// Nothing above this layer shells out to SLURM or spawns job scripts itself.
import { DisaggBenchError } from '../../runners/common/errors.ts';
import type { ErrorCategory } from '../../runners/common/errors.ts';

/** Job states, SLURM's vocabulary; states.ts maps raw scheduler output onto these once. */
export type JobState =
  | 'PENDING'
  | 'CONFIGURING'
  | 'RUNNING'
  | 'COMPLETING'
  | 'SUSPENDED'
  | 'REQUEUED'
  | 'REQUEUE_HOLD'
  | 'RESIZING'
  | 'STAGE_OUT'
  | 'SIGNALING'
  | 'PREEMPTED'
  | 'COMPLETED'
  | 'FAILED'
  | 'TIMEOUT'
  | 'CANCELLED'
  | 'NODE_FAIL'
  | 'OUT_OF_MEMORY'
  | 'BOOT_FAIL'
  | 'DEADLINE'
  /** The scheduler no longer knows the job and nothing says how it ended. */
  | 'UNKNOWN';

/** What a job asks for. Every field maps to one sbatch option; the local backend honours the same. */
export interface JobResources {
  nodes: number;
  ntasks: number;
  ntasksPerNode?: number;
  cpusPerTask?: number;
  gpusPerNode?: number;
  /** Wall-clock limit in seconds (sbatch --time). */
  timeLimitSec: number;
  /** As the config gives them; blank or a `<placeholder>`: the cluster's default (sbatchArgs). */
  partition?: string;
  account?: string;
  /** Extra sbatch arguments, one argument per element (never split on spaces later). */
  extraArgs?: string[];
}

export interface JobRequest {
  /** Job name (sbatch --job-name); usually the test id. */
  name: string;
  /** Path of an executable bash job script already written to disk. */
  scriptPath: string;
  /** Folder the job's stdout/stderr go to (slurm-<id>.out / slurm-<id>.err). */
  logDir: string;
  /** Working directory of the job. */
  workDir: string;
  resources: JobResources;
  /** Extra environment for the job script (exported on top of the submitting environment). */
  env?: Record<string, string>;
}

export interface JobStatus {
  id: string;
  state: JobState;
  /** True once the state can no longer change (see states.ts). */
  terminal: boolean;
  /** Pending reason or the reason of the final state, as the scheduler gave it. */
  reason?: string;
  /** Set on a pending job whose reason means it can never start (bad partition, nodes down...). */
  cannotStart?: string;
  exitCode?: number;
  signal?: number;
  /** Node names the job runs or ran on. */
  nodes?: string[];
  /** Epoch milliseconds. */
  startTime?: number;
  endTime?: number;
}

export interface JobLogs {
  stdout: string;
  stderr: string;
}

/**
 * What a scheduler can do, declared once beside its factory (registry.ts). The jobs layer decides
 * from these, never from the scheduler's name.
 */
export interface SchedulerCapabilities {
  /**
   * Its jobs keep running after the process that submitted them ends (a cluster's do; the local
   * backend's die with their run). Then a later process cancels what an ended run left in flight
   * (jobs/leftover-jobs.ts) and RESUME=1 adopts a job still queued or running (jobs/resume.ts).
   */
  jobsOutliveRun: boolean;
  /** A poll costs a controller something: the watcher's interval grows to DISAGG_POLL_MAX_SEC (else 250 ms). */
  costlyPolls: boolean;
  /** How long polls may fail in a row before the jobs waiting on them fail (a controller restart). */
  pollFailureSpanMs: number;
  /** Job arrays (sbatch --array). */
  arrays: boolean;
  /** Generic resources such as GPUs asked per node (--gres=gpu:N). */
  gres: boolean;
  /** Topology segments (sbatch --segment). */
  segment: boolean;
  /** A job may be requeued and run again under the same id (PREEMPTED, NODE_FAIL). */
  requeue: boolean;
  /** It reports the nodes a job runs on. */
  nodeLists: boolean;
}

export interface Scheduler {
  /** The name it is registered under (registry.ts): SCHEDULER=<name>, and the ledger's `scheduler`. */
  readonly name: string;
  readonly capabilities: SchedulerCapabilities;
  /** Submit one job; resolves to its id. Transient failures are retried inside. */
  submit(request: JobRequest): Promise<string>;
  /**
   * Status of many jobs with one scheduler command. Ids the scheduler does not report are
   * absent from the map (the caller decides what a vanished job means).
   */
  poll(ids: string[]): Promise<Map<string, JobStatus>>;
  /** Cancel many jobs with one command. Unknown or finished ids are ignored. */
  cancel(ids: string[]): Promise<void>;
  /**
   * Cancel at once, synchronously, without retries: for signal handlers, where the process may be
   * gone before a promise settles. Returns why it failed, or undefined once the jobs are cancelled
   * (or cancelling is under way and finishes without this process). A scheduler that owns nothing
   * outliving the process (replay) returns undefined.
   */
  cancelNow(ids: string[]): string | undefined;
  /** Where a submitted job's stdout and stderr are written. */
  logs(id: string, request: JobRequest): JobLogs;
  /**
   * Release resources (timers, connections). Jobs on a cluster outlive it (callers cancel what they
   * own first); jobs the local backend runs as its children are killed, since nothing else could.
   */
  close(): Promise<void>;
}

/** A scheduler command failed in a way that retrying will not fix (bad partition, bad account...). */
export class SchedulerError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'environment';
  }
  constructor(
    message: string,
    readonly command: string,
    readonly exitCode?: number,
    readonly stderr?: string,
  ) {
    super(message, { place: command });
    this.name = 'SchedulerError';
  }
}
