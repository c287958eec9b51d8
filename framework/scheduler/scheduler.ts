// The one interface every scheduler backend (slurm, local, replay) implements.
// Nothing above this layer shells out to SLURM or spawns job scripts itself.
import { DisaggBenchError } from '../../runners/common/errors.ts';

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

export interface Scheduler {
  readonly name: 'slurm' | 'local' | 'replay';
  /** Submit one job; resolves to its id. Transient failures are retried inside. */
  submit(request: JobRequest): Promise<string>;
  /**
   * Status of many jobs with one scheduler command. Ids the scheduler does not report are
   * absent from the map (the caller decides what a vanished job means).
   */
  poll(ids: string[]): Promise<Map<string, JobStatus>>;
  /** Cancel many jobs with one command. Unknown or finished ids are ignored. */
  cancel(ids: string[]): Promise<void>;
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
