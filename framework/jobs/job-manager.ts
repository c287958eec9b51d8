// One test's job from start to verdict: write the resolved config, build the job through the test
// type, submit, wait (with the test's timeout), record the final status, judge from BOTH the
// scheduler's final state and the logs.
import { JOB_SECRET_VARIABLE, newJobSecret } from '../../runners/common/job-secret.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { dumpYamlForPyYaml } from '../../runners/common/yaml-dump.ts';
import type { JobRequest, JobStatus, Scheduler } from '../scheduler/scheduler.ts';
import type { JobWatcher } from '../scheduler/watcher.ts';
import type { PlannedTest } from '../select/plan.ts';
import type { Settings } from '../settings.ts';
import { gpuForType, resourceTypeOf, type GpuDetection } from '../select/gpu.ts';
import { testType } from '../types/registry.ts';
import { packageRoot } from '../settings.ts';
import type { Ledger } from './ledger.ts';
import { judgeJob, type JobOutcome } from './judge.ts';
import { JOB_SCRIPT_FILE, RESOLVED_CONFIG_FILE, setAsideEarlierLogs, testLogDir, writeJobRecord } from '../scheduler/log-folder.ts';
import { defaultLauncher } from '../scheduler/registry.ts';
import type { ResumeAction } from './resume.ts';
import { redactSecrets } from '../secrets.ts';
import { recordCancelled } from './leftover-jobs.ts';
import { DisaggBenchError, FailureError, InternalError, type ErrorCategory } from '../../runners/common/errors.ts';

/** Never-start reasons that may clear on their own, and how long they must hold to count. */
const SETTLING_NEVER_START_MS: Record<string, number> = { ReqNodeNotAvail: 60_000 };
const NEVER_START_RECHECK_MS = 2_000;

/** An adopted job whose deadline has passed still gets this long to report how it ended. */
const ADOPTED_MIN_WAIT_SEC = 60;

export interface SubmittedJob {
  jobId: string;
  request: JobRequest;
  submittedAt: number;
  /** Seconds the test waits for its job (from now) before cancelling it. */
  timeoutSec: number;
  /** A job adopted from an earlier run that had already ended: judged without waiting. */
  ended?: JobStatus;
}

/** The run was interrupted (Ctrl-C, SIGTERM, the Vitest main process gone): nothing more goes out. */
export class RunInterruptedError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'interrupted';
  }
  override name = 'RunInterruptedError';
  /** `testId`: the test that was not submitted, or whose job was cancelled as it was. */
  constructor(message: string, testId: string) {
    super(message, { place: testId });
  }
}

export interface JobManagerOptions {
  scheduler: Scheduler;
  watcher: JobWatcher;
  ledger: Ledger;
  settings: Settings;
  gpu: GpuDetection;
  log?: (line: string) => void;
}

export class JobManager {
  /** Jobs submitted or adopted and not seen to end: job id -> test id. */
  private readonly owned = new Map<string, string>();
  /** Submissions under way (sbatch not returned yet). */
  private readonly submitting = new Set<Promise<unknown>>();
  private interruption: string | undefined;

  constructor(private readonly options: JobManagerOptions) {}

  /** Builds and submits a test's job and records it in the ledger (tracked until it has: submissionsSettled). */
  submit(test: PlannedTest, batch: number): Promise<SubmittedJob> {
    const submission = this.submitNow(test, batch);
    this.submitting.add(submission);
    return submission.finally(() => this.submitting.delete(submission));
  }

  private async submitNow(test: PlannedTest, batch: number): Promise<SubmittedJob> {
    this.refuseIfInterrupted(test.id);
    const { scheduler, settings, ledger } = this.options;
    const type = testType(test.testType)!;
    const config = test.resolved!.config;
    const logDir = testLogDir(settings.outputPath, test.id);
    let request: JobRequest;
    if (settings.debugMode) {
      // A replay reads what is there and writes nothing over it.
      request = { name: test.id, scriptPath: path.join(logDir, JOB_SCRIPT_FILE), logDir, workDir: settings.workDir,
        resources: { nodes: 1, ntasks: 1, timeLimitSec: 1 } };
    } else {
      const earlier = setAsideEarlierLogs(logDir);
      if (earlier) this.options.log?.(`${test.id}: an earlier job's logs were moved to ${earlier}`);
      mkdirSync(logDir, { recursive: true });
      // A copy for people (and CI uploads), readable as a config again (YAML 1.1, as PyYAML reads it); secret-looking variables are redacted (secrets.ts).
      writeFileSync(path.join(logDir, RESOLVED_CONFIG_FILE), dumpYamlForPyYaml(redactSecrets(config)));
      const built = await type.buildJob({
        testId: test.id, category: test.category, config, logDir, workDir: settings.workDir,
        packageRoot, gpuType: resourceTypeOf(gpuForType(this.options.gpu, type.assumedGpuType)),
        launcher: defaultLauncher(scheduler.name),
      });
      for (const note of built.notes ?? []) this.options.log?.(`${test.id}: ${note}`);
      // Each job its own secret, in its environment only: its processes prove it to each other (common/job-secret.ts).
      const env = { ...built.env, [JOB_SECRET_VARIABLE]: newJobSecret() };
      request = { name: test.id, scriptPath: built.scriptPath, logDir, workDir: settings.workDir, resources: built.resources, env };
    }
    this.refuseIfInterrupted(test.id);
    const jobId = await scheduler.submit(request);
    const timeoutSec = request.resources.timeLimitSec + settings.queueAllowanceSec;
    try {
      ledger.record({ test: test.id, job: jobId, state: 'SUBMITTED', terminal: false, batch, logDir, timeoutSec });
    } catch (error) {
      // A job the ledger does not know could outlive a crash unseen: it does not run at all.
      await scheduler.cancel([jobId]).catch(() => undefined);
      throw new RunInterruptedError(`job ${jobId} of ${test.id} was cancelled as it was submitted: ${(error as Error).message}`, test.id);
    }
    if (this.interruption) {
      // sbatch was already under way when the run was interrupted: this job must not outlive it.
      await scheduler.cancel([jobId]).catch(() => undefined);
      ledger.record({ test: test.id, job: jobId, state: 'CANCELLED', terminal: true, reason: this.interruption, interrupted: true });
      throw new RunInterruptedError(`${this.interruption}; job ${jobId} of ${test.id} cancelled as it was submitted`, test.id);
    }
    this.owned.set(jobId, test.id);
    // The job's script marks its end in its log folder: the watcher polls then (job-end-mark.ts).
    if (!settings.debugMode) this.options.watcher.listenForEnd(jobId, logDir);
    return { jobId, request, submittedAt: Date.now(), timeoutSec };
  }

  /**
   * RESUME: takes over a job an earlier run submitted instead of submitting one (resume.ts says
   * when). Nothing is built or written: the job's folder and script are the earlier run's.
   */
  adopt(test: PlannedTest, action: Extract<ResumeAction, { kind: 'adopt' }>, batch: number): SubmittedJob {
    this.refuseIfInterrupted(test.id);
    const { settings, ledger } = this.options;
    const logDir = action.submitted?.logDir ?? action.latest.logDir ?? testLogDir(settings.outputPath, test.id);
    const submittedAt = action.submitted ? Date.parse(action.submitted.time) : Date.now();
    // The same deadline as the run that submitted it; a little time to learn how it ended anyway.
    const timeoutSec = action.submitted?.timeoutSec ?? settings.queueAllowanceSec;
    const remainingSec = Math.max(timeoutSec - (Date.now() - submittedAt) / 1000, ADOPTED_MIN_WAIT_SEC);
    const request: JobRequest = {
      name: test.id, scriptPath: path.join(logDir, JOB_SCRIPT_FILE), logDir, workDir: settings.workDir,
      resources: { nodes: 1, ntasks: 1, timeLimitSec: timeoutSec },
    };
    ledger.record({ test: test.id, job: action.job, state: 'ADOPTED', terminal: false, batch, logDir, adoptedFrom: action.latest.run });
    if (!action.ended) {
      this.owned.set(action.job, test.id);
      this.options.watcher.listenForEnd(action.job, logDir);
    }
    return { jobId: action.job, request, submittedAt, timeoutSec: remainingSec, ended: action.ended };
  }

  /**
   * The run is being interrupted: nothing more is submitted (a submission under way is cancelled as
   * it returns). Returns the jobs in flight, for the caller to cancel at once.
   */
  interrupt(reason: string): Array<{ job: string; test: string }> {
    this.interruption ??= reason;
    return [...this.owned].map(([job, test]) => ({ job, test }));
  }

  /** Resolves once every submission under way has returned (and, after an interruption, been cancelled and recorded). */
  async submissionsSettled(): Promise<void> {
    while (this.submitting.size > 0) await Promise.allSettled([...this.submitting]);
  }

  private refuseIfInterrupted(testId: string): void {
    if (this.interruption) throw new RunInterruptedError(`${this.interruption}; ${testId} was not submitted`, testId);
  }

  /**
   * Waits for the job to end (cancelling it on timeout or abort) and judges it; `beforeJudging`
   * runs once its end is recorded (the session lets the next batch go out first).
   */
  async finish(test: PlannedTest, job: SubmittedJob, signal?: AbortSignal, beforeJudging?: () => Promise<void>): Promise<JobOutcome> {
    const status = job.ended ?? (await this.waitForEnd(job, signal));
    this.owned.delete(job.jobId);
    const { scheduler, settings, ledger, watcher } = this.options;
    // Stop watching a job that the timeout or an abort ended; the watcher may still hold it.
    watcher.forget(job.jobId, new InternalError('no longer watched'));
    // Interrupted: the ledger already says the job was cancelled by it (RESUME submits it again).
    if (this.interruption) return { passed: false, failures: [this.interruption], metrics: [], status };
    ledger.record({ test: test.id, job: job.jobId, state: status.state, terminal: true, reason: status.reason });
    if (!settings.debugMode) writeJobRecord(job.request.logDir, scheduler.name, job, status);
    await beforeJudging?.();
    return judgeJob({
      test,
      type: testType(test.testType)!,
      status,
      logs: scheduler.logs(job.jobId, job.request),
      logDir: job.request.logDir,
    });
  }

  /** Cancels every job this manager submitted and has not seen end, and records each (RESUME submits them again). */
  async cancelAll(reason: string): Promise<string[]> {
    const jobs = [...this.owned].map(([job, test]) => ({ job, test }));
    if (jobs.length === 0) return [];
    const { scheduler, watcher, ledger } = this.options;
    await scheduler.cancel(jobs.map((j) => j.job));
    for (const { job, test } of jobs) watcher.forget(job, new RunInterruptedError('the run was aborted; job cancelled', test));
    this.owned.clear();
    recordCancelled(ledger.outputPath, jobs.map((j) => ({ ...j, run: ledger.run })), ledger.scheduler, reason);
    return jobs.map((j) => j.job);
  }

  private async waitForEnd(job: SubmittedJob, signal?: AbortSignal): Promise<JobStatus> {
    const { watcher, scheduler } = this.options;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<JobStatus>((resolve) => {
      const cancelWith = (reason: string) => {
        void scheduler.cancel([job.jobId]).catch(() => undefined);
        resolve({ id: job.jobId, state: 'CANCELLED', terminal: true, reason });
      };
      timer = setTimeout(
        () => cancelWith(`the job did not end within the test's timeout of ${job.timeoutSec} s (job time limit + DISAGG_QUEUE_ALLOWANCE_SEC); cancelled`),
        job.timeoutSec * 1000,
      );
      onAbort = () => cancelWith('the run was aborted; job cancelled');
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      let status = await Promise.race([watcher.wait(job.jobId), stop]);
      // A reason that hangs on the nodes' state must hold for a while before it counts: right
      // after a controller restart or a node reboot every node is briefly "not available".
      const firstSeen = Date.now();
      while (status.cannotStart && Date.now() - firstSeen < (SETTLING_NEVER_START_MS[status.cannotStart] ?? 0)) {
        await new Promise((resolve) => setTimeout(resolve, NEVER_START_RECHECK_MS));
        status = await Promise.race([watcher.wait(job.jobId), stop]);
      }
      if (status.cannotStart) {
        await scheduler.cancel([job.jobId]).catch(() => undefined);
        watcher.forget(job.jobId, new FailureError('the job can never start; cancelled'));
        return { ...status, state: 'CANCELLED', terminal: true, reason: `the job can never start: ${status.cannotStart}; cancelled` };
      }
      return status;
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }
}
