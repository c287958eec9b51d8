// The embedded scheduler: runs SLURM job scripts on this host with bash, so the suite runs on a
// laptop or in CI with no cluster. Jobs queue PENDING (reason 'Resources') until enough CPUs and
// GPUs are free, run with a SLURM-like environment (local-env.ts) and srun/scontrol/scancel shims
// (local-bin/), and end COMPLETED, FAILED, TIMEOUT or CANCELLED (local-job.ts).
//
// Job ids are `L<pid>-<t>-<n>`: the scheduler's process id, the time its module was loaded (ms,
// base 36) and a counter. No two live processes share a pid, and a later process reusing a pid
// has a later t, so two runs writing slurm-<id>.out into the same OUTPUT_PATH never collide.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  SchedulerError,
  type JobLogs,
  type JobRequest,
  type JobStatus,
  type Scheduler,
  type SchedulerCapabilities,
} from './scheduler.ts';
import type { SchedulerDefinition } from './registry.ts';
import { batchEnvironment, defaultVirtualNodeNames, detectGpuIds, splitGpusOverNodes } from './local-env.ts';
import { LocalJobProcess, type LocalJobEnd } from './local-job.ts';
import { redactEnv } from '../secrets.ts';
import { jobOutputFiles } from './log-folder.ts';
import { InputError } from '../../runners/common/errors.ts';

export interface LocalSchedulerOptions {
  /** CPUs jobs may hold at once (default: os.availableParallelism()). */
  cpus?: number;
  /**
   * GPUs jobs may hold at once: a count (ids 0..n-1) or the ids themselves. Default: the entries
   * of CUDA_VISIBLE_DEVICES when set, else one per /dev/nvidiaN, else none.
   */
  gpus?: number | string[];
  /** The name a one-node job runs on (default: os.hostname()). */
  nodeName?: string;
  /**
   * Job records: <stateDir>/<id>/local-job.json, rewritten on every state change, next to the files the
   * shims keep per job. Default: <os.tmpdir()>/disagg-bench-local-<uid>.
   */
  stateDir?: string;
  /** Seconds from SIGTERM to SIGKILL on time limit, cancel and close (default 2). */
  killGraceSec?: number;
  /** Virtual node names of a job asking for `count` nodes (default: defaultVirtualNodeNames). */
  virtualNodeNames?: (count: number, nodeName: string) => string[];
  /** Environment every job inherits, like sbatch's --export=ALL (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

interface LocalJob {
  id: string;
  request: JobRequest;
  jobDir: string;
  /** What the job holds while it runs: requests above this host's size are capped to it. */
  cpus: number;
  gpuCount: number;
  gpus: string[];
  /** Virtual node names, fixed at submission. */
  nodes: string[];
  status: JobStatus;
  process?: LocalJobProcess;
}

/**
 * The local scheduler's record of one job (its request, process group, state), for people and
 * post-mortems; not `job.json`, which is a test log folder's record of how its job ended (log-folder.ts).
 */
export const LOCAL_JOB_RECORD_FILE = 'local-job.json';

const idPrefix = `L${process.pid}-${Date.now().toString(36)}`;
let idCounter = 0;

// One 'exit' handler for every scheduler of this process: SIGKILL whatever still runs, so a run
// that crashes leaves no job behind (a run killed by a signal is covered by local-job's watchdog).
const liveJobs = new Set<LocalJobProcess>();
process.on('exit', () => {
  for (const job of liveJobs) job.killNow();
});

function positiveInteger(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1) throw new InputError(`${what} must be a whole number >= 1, got ${value}`);
  return value;
}

// Its jobs are its children: they die with the run, and asking about them costs nothing.
const capabilities: SchedulerCapabilities = {
  jobsOutliveRun: false, costlyPolls: false, pollFailureSpanMs: 0,
  arrays: false, gres: true, segment: false, requeue: false, nodeLists: true,
};

export class LocalScheduler implements Scheduler {
  readonly name = 'local';
  readonly capabilities = capabilities;
  readonly cpus: number;
  readonly gpuIds: readonly string[];
  readonly nodeName: string;
  readonly stateDir: string;
  private readonly killGraceMs: number;
  private readonly virtualNodeNames: (count: number, nodeName: string) => string[];
  private readonly env: NodeJS.ProcessEnv;

  private readonly jobs = new Map<string, LocalJob>();
  private readonly pending: LocalJob[] = [];
  private freeCpus: number;
  private freeGpus: string[];
  private closed = false;

  constructor(options: LocalSchedulerOptions = {}) {
    this.cpus = positiveInteger(options.cpus ?? os.availableParallelism(), 'cpus');
    this.env = options.env ?? process.env;
    const gpus = options.gpus ?? detectGpuIds(this.env, fs.existsSync('/dev') ? fs.readdirSync('/dev') : []);
    this.gpuIds = typeof gpus === 'number' ? Array.from({ length: gpus }, (_, i) => String(i)) : [...gpus];
    this.nodeName = options.nodeName ?? os.hostname();
    this.stateDir = path.resolve(
      options.stateDir ?? path.join(os.tmpdir(), `disagg-bench-local-${process.getuid?.() ?? 'user'}`),
    );
    this.killGraceMs = (options.killGraceSec ?? 2) * 1000;
    this.virtualNodeNames = options.virtualNodeNames ?? defaultVirtualNodeNames;
    this.freeCpus = this.cpus;
    this.freeGpus = [...this.gpuIds];
  }

  async submit(request: JobRequest): Promise<string> {
    const command = `bash ${request.scriptPath}`;
    if (this.closed) throw new SchedulerError('the local scheduler is closed', command);
    const res = request.resources;
    let nodes: string[];
    try {
      positiveInteger(res.nodes, 'resources.nodes');
      positiveInteger(res.ntasks, 'resources.ntasks');
      positiveInteger(res.cpusPerTask ?? 1, 'resources.cpusPerTask');
      if (!fs.statSync(request.scriptPath).isFile()) throw new SchedulerError(`job script ${request.scriptPath} is not a file`, 'submit');
      if (!fs.statSync(request.workDir).isDirectory()) throw new SchedulerError(`work dir ${request.workDir} is not a folder`, 'submit');
      nodes = this.virtualNodeNames(res.nodes, this.nodeName);
      fs.mkdirSync(request.logDir, { recursive: true });
    } catch (error) {
      throw new SchedulerError(`local submit of ${request.name} refused: ${(error as Error).message}`, command);
    }
    const id = `${idPrefix}-${++idCounter}`;
    const jobDir = path.join(this.stateDir, id);
    try {
      fs.mkdirSync(jobDir, { recursive: true });
    } catch (error) {
      throw new SchedulerError(`cannot create the job folder ${jobDir}: ${(error as Error).message}`, command);
    }
    const job: LocalJob = {
      id,
      request,
      jobDir,
      cpus: Math.min(res.ntasks * (res.cpusPerTask ?? 1), this.cpus),
      gpuCount: Math.min((res.gpusPerNode ?? 0) * res.nodes, this.gpuIds.length),
      gpus: [],
      nodes,
      status: { id, state: 'PENDING', terminal: false, reason: 'Resources' },
    };
    this.jobs.set(id, job);
    this.pending.push(job);
    this.writeRecord(job);
    this.startWhatFits();
    return id;
  }

  /** Answers from memory: no command runs. Ids this scheduler never issued are absent. */
  async poll(ids: string[]): Promise<Map<string, JobStatus>> {
    const statuses = new Map<string, JobStatus>();
    for (const id of ids) {
      const job = this.jobs.get(id);
      if (job) statuses.set(id, { ...job.status, nodes: job.status.nodes && [...job.status.nodes] });
    }
    return statuses;
  }

  /** Resolves once every named job has ended (at most the kill grace for running ones). */
  async cancel(ids: string[], reason = 'cancelled'): Promise<void> {
    const endings: Promise<unknown>[] = [];
    for (const id of new Set(ids)) {
      const job = this.jobs.get(id);
      if (!job || job.status.terminal) continue;
      if (job.process) {
        endings.push(job.process.cancel(reason));
      } else {
        this.pending.splice(this.pending.indexOf(job), 1);
        this.end(job, { state: 'CANCELLED', reason, endTime: Date.now() });
      }
    }
    await Promise.all(endings);
  }

  /**
   * Starts cancelling at once, synchronously (SIGTERM now, SIGKILL after the grace): for signal
   * handlers, where the process may be gone before a promise settles; should it end first, its
   * 'exit' handler and each job's watchdog finish the work.
   */
  cancelNow(ids: string[]): string | undefined {
    for (const id of new Set(ids)) {
      const job = this.jobs.get(id);
      if (!job || job.status.terminal) continue;
      if (job.process) void job.process.cancel('cancelled');
      else {
        this.pending.splice(this.pending.indexOf(job), 1);
        this.end(job, { state: 'CANCELLED', reason: 'cancelled', endTime: Date.now() });
      }
    }
    return undefined;
  }

  logs(id: string, request: JobRequest): JobLogs {
    return jobOutputFiles(request.logDir, id);
  }

  /** Ends every job not yet ended (no job outlives the scheduler) and refuses later submissions. */
  async close(): Promise<void> {
    this.closed = true;
    const unfinished = [...this.jobs.values()].filter((job) => !job.status.terminal).map((job) => job.id);
    await this.cancel(unfinished, 'local scheduler closed');
  }

  // First fit in submission order: a job too big for what is free now does not hold back smaller
  // ones behind it. A steady stream of small jobs could delay a big one; the batch manager's
  // batches are finite, so it still starts.
  private startWhatFits(): void {
    for (const job of [...this.pending]) {
      if (job.cpus > this.freeCpus || job.gpuCount > this.freeGpus.length) continue;
      this.pending.splice(this.pending.indexOf(job), 1);
      try {
        this.start(job);
      } catch (error) {
        // Nothing in start() is expected to throw; if it does, the job fails instead of the caller.
        this.release(job);
        this.end(job, { state: 'FAILED', reason: `local start failed: ${String(error)}`, endTime: Date.now() });
      }
    }
  }

  private start(job: LocalJob): void {
    const { request } = job;
    this.freeCpus -= job.cpus;
    job.gpus = this.freeGpus.splice(0, job.gpuCount);
    const { nodes } = job;
    const nodeGpus = splitGpusOverNodes(job.gpus, nodes.length);
    const logs = this.logs(job.id, request);
    const env = batchEnvironment({ id: job.id, request, nodes, nodeGpus, jobDir: job.jobDir, baseEnv: this.env });
    const jobProcess = new LocalJobProcess({
      id: job.id,
      scriptPath: path.resolve(request.scriptPath),
      workDir: request.workDir,
      stdoutPath: logs.stdout,
      stderrPath: logs.stderr,
      env,
      firstNode: nodes[0],
      timeLimitMs: request.resources.timeLimitSec * 1000,
      killGraceMs: this.killGraceMs,
      jobDir: job.jobDir,
    });
    job.process = jobProcess;
    liveJobs.add(jobProcess);
    job.status = { id: job.id, state: 'RUNNING', terminal: false, nodes, startTime: jobProcess.startTime };
    this.writeRecord(job);
    void jobProcess.ended.then((end) => {
      liveJobs.delete(jobProcess);
      this.release(job);
      this.end(job, end);
      this.startWhatFits();
    });
  }

  private release(job: LocalJob): void {
    this.freeCpus += job.cpus;
    // Back in the host's order, so GPU assignment stays predictable.
    this.freeGpus = this.gpuIds.filter((gpu) => this.freeGpus.includes(gpu) || job.gpus.includes(gpu));
  }

  private end(job: LocalJob, end: LocalJobEnd): void {
    job.status = {
      id: job.id,
      state: end.state,
      terminal: true,
      reason: end.reason,
      exitCode: end.exitCode,
      signal: end.signal,
      nodes: job.status.nodes,
      startTime: job.status.startTime,
      endTime: end.endTime,
    };
    this.writeRecord(job);
  }

  private writeRecord(job: LocalJob): void {
    const record = {
      id: job.id,
      schedulerPid: process.pid,
      pgid: job.process?.pgid,
      gpus: job.gpus,
      // The job's own variables may carry secrets; the job gets them, the record does not.
      request: { ...job.request, env: redactEnv(job.request.env) },
      status: job.status,
    };
    try {
      fs.writeFileSync(path.join(job.jobDir, LOCAL_JOB_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
    } catch {
      // A record is for people and post-mortems; the job's state lives in memory.
    }
  }
}

export const localDefinition: SchedulerDefinition = {
  name: 'local',
  description: 'this host: job scripts run with bash, SLURM-like environment and srun shims',
  capabilities,
  // Job scripts written for srun run unchanged: local-bin/srun starts a step's tasks on this host.
  launcher: 'srun',
  // Last: a cluster's scheduler, when one is here, is what a run means.
  autoSelect: { rank: 100, available: () => true },
  jobsRunHere: true,
  create: ({ settings, env }) => new LocalScheduler({ stateDir: path.join(settings.outputPath, 'local-scheduler'), env }),
};
