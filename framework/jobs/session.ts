// One run inside one process: the scheduler, the watcher, the ledger, the batch and job managers,
// wired together once. The suite asks it to run a test; it cancels everything it submitted (on
// close, on abort, and when the worker is interrupted: interrupt.ts listens for that) and, with
// RESUME=1, picks up an earlier run's jobs (see resume.ts).
import { hostname } from 'node:os';
import type { Scheduler } from '../scheduler/scheduler.ts';
import { createScheduler } from '../scheduler/create.ts';
import { JobWatcher } from '../scheduler/watcher.ts';
import type { PlannedTest } from '../select/plan.ts';
import type { GpuDetection } from '../select/gpu.ts';
import type { Settings } from '../settings.ts';
import { BatchManager } from './batch-manager.ts';
import { JobManager, type SubmittedJob } from './job-manager.ts';
import { Ledger } from './ledger.ts';
import type { JobOutcome } from './judge.ts';
import { cancelInterrupted, listenForInterruption } from './interrupt.ts';
import { describeResume, planResume, type ResumeAction } from './resume.ts';
import { openProgressBoard } from '../results/progress-stream.ts';
import { describeHolder, RunClaim } from './run-claims.ts';
import type { ProgressBoard } from '../results/progress.ts';
import { InternalError } from '../../runners/common/errors.ts';

export interface TestRun extends JobOutcome {
  jobId?: string;
  batch?: number;
  startedAt: number;
  endedAt: number;
  /** When the job was submitted (epoch ms; an adopted job's original submission is not known). */
  submittedAt?: number;
  /** RESUME: the result of this job is already in results.json (and the CSV): write nothing. */
  alreadyRecorded?: boolean;
  /** The run was interrupted before this test's job ended: there is no result to write. */
  interrupted?: string;
  /** The test was not run at all (another run holds it): there is no result to write. */
  notRun?: string;
}

export interface SessionOptions {
  settings: Settings;
  gpu: GpuDetection;
  /** Shared by every project of one invocation (see suite/global-setup.ts). */
  runId: string;
  log?: (line: string) => void;
  /** Overrides the scheduler chosen from the settings (tests use this). */
  scheduler?: Scheduler;
  /**
   * After an interruption, how long the worker may live on before it kills itself as stuck
   * (default interrupt.ts's STUCK_AFTER_INTERRUPT_MS; 0: never). Tests that interrupt a session
   * inside their own worker, which goes on running other tests, turn it off.
   */
  stuckAfterInterruptMs?: number;
}

export class RunSession {
  readonly watcher: JobWatcher;
  readonly ledger: Ledger;
  readonly jobs: JobManager;
  private batches: BatchManager | undefined;
  private readonly tests = new Map<string, PlannedTest>();
  private readonly submitted = new Map<string, Promise<SubmittedJob>>();
  private readonly jobTests = new Map<string, string>();
  private readonly abort = new AbortController();
  private readonly board: ProgressBoard | undefined;
  private resumeActions = new Map<string, ResumeAction>();
  /** This run's claim on its tests in OUTPUT_PATH, and the tests another live run holds. */
  private claim: RunClaim | undefined;
  private readonly heldElsewhere = new Map<string, string>();
  /** Jobs known to have ended before this run saw them (adopted): nothing to wait for. */
  private readonly endedJobs = new Set<string>();
  /** The worker's interruptions, heard until close (interrupt.ts). */
  private readonly interruptions: { stop(): void };
  private interruption: string | undefined;

  private constructor(
    readonly scheduler: Scheduler,
    private readonly options: SessionOptions,
  ) {
    const { settings } = options;
    this.ledger = new Ledger(settings.outputPath, options.runId, scheduler.name);
    this.watcher = new JobWatcher(scheduler, {
      // Only a controller that pays for each poll deserves a growing interval.
      maxIntervalMs: scheduler.capabilities.costlyPolls ? settings.pollMaxSec * 1000 : 250,
      minFailureSpanMs: scheduler.capabilities.pollFailureSpanMs,
      onChange: (status) => {
        const test = this.jobTests.get(status.id);
        // After an interruption the ledger's last word on each job is "cancelled by it".
        if (!test || this.interruption) return;
        this.board?.jobStatus(test, status);
        if (!status.terminal) {
          try {
            this.ledger.record({ test, job: status.id, state: status.state, terminal: false, reason: status.reason });
          } catch (error) {
            // A state on the way (PENDING, RUNNING) that cannot be written (a full disk) is worth a
            // line, not the watcher: the job's end is written, or its test fails saying why.
            this.log(`ledger: ${(error as Error).message}`);
          }
        }
      },
      onPollError: (error, n) => this.log(`poll of ${scheduler.name} failed (${n} in a row, tolerated): ${error.message}`),
      onMarkUnavailable: (why) => this.log(`jobs' end marks are not heard (${why}): their ends are found by polling alone`),
    });
    this.board = openProgressBoard(process.env);
    this.jobs = new JobManager({ scheduler, watcher: this.watcher, ledger: this.ledger, settings, gpu: options.gpu, log: (line) => this.log(line) });
    this.interruptions = listenForInterruption(this, options.stuckAfterInterruptMs);
  }

  static async open(options: SessionOptions): Promise<RunSession> {
    const scheduler = options.scheduler ?? (await createScheduler(options.settings));
    return new RunSession(scheduler, options);
  }

  /**
   * The tests that will run, in order: they form the batches. With RESUME=1, tests whose result is
   * already recorded stay out of them and the jobs of an earlier run are adopted (resume.ts).
   */
  async plan(tests: PlannedTest[]): Promise<void> {
    for (const t of tests) this.tests.set(t.id, t);
    const { settings } = this.options;
    // Before anything is submitted: tests another live run holds on this OUTPUT_PATH stay out (run-claims.ts).
    const types = [...new Set(tests.map((t) => t.testType))].join('+');
    const { claim, refused } = await RunClaim.take(settings.outputPath, this.options.runId, types, tests.map((t) => t.id));
    this.claim = claim;
    for (const [test, holder] of refused) this.heldElsewhere.set(test, describeHolder(holder, settings.outputPath));
    if (refused.size > 0) this.log(`${refused.size} test(s) not run: another run holds them on OUTPUT_PATH (${[...new Set([...refused.values()].map((h) => h.run))].join(', ')})`);
    const claimed = tests.filter((t) => !refused.has(t.id));
    if (settings.resume && !settings.debugMode) {
      this.resumeActions = await planResume(settings.outputPath, this.scheduler, claimed.map((t) => t.id));
      this.log(describeResume(this.resumeActions));
    }
    const toRun = claimed.filter((t) => this.resumeActions.get(t.id)?.kind !== 'recorded');
    this.batches = new BatchManager(
      toRun.map((t) => t.id),
      {
        submit: async (testId, batch) => {
          const job = this.submitOrAdopt(this.tests.get(testId)!, batch);
          this.submitted.set(testId, job);
          const { jobId, ended } = await job;
          if (ended) this.endedJobs.add(jobId);
          this.jobTests.set(jobId, testId);
          this.board?.submitted(testId, jobId);
          return jobId;
        },
        ended: (jobId) =>
          this.endedJobs.has(jobId) ? Promise.resolve() : this.watcher.wait(jobId).then(() => undefined, () => undefined),
      },
      { batchSize: settings.batchSize, log: (line) => this.log(line) },
    );
    for (const t of toRun) this.board?.waiting(t.id, this.batches.batchOf(t.id));
    this.board?.start();
  }

  private async submitOrAdopt(test: PlannedTest, batch: number): Promise<SubmittedJob> {
    const action = this.resumeActions.get(test.id);
    if (action?.kind === 'adopt') return this.jobs.adopt(test, action, batch);
    if (action?.kind === 'submit' && action.note) this.log(`RESUME: ${test.id}: submitting again (${action.note})`);
    return this.jobs.submit(test, batch);
  }

  /** Submits the test's batch if needed, waits for its job and judges it. */
  async run(test: PlannedTest): Promise<TestRun> {
    if (!this.batches) throw new InternalError('RunSession.plan() must come before run()');
    const startedAt = Date.now();
    const held = this.heldElsewhere.get(test.id);
    if (held) {
      this.board?.ended(test.id, 'failed', held);
      const status = { id: '', state: 'UNKNOWN' as const, terminal: true };
      return { passed: false, failures: [held], metrics: [], status, startedAt, endedAt: Date.now(), notRun: held };
    }
    const resumed = this.resumeActions.get(test.id);
    if (resumed?.kind === 'recorded') return this.recordedRun(test, resumed, startedAt);
    const batch = this.batches.batchOf(test.id);
    let jobId: string | undefined;
    try {
      jobId = await this.batches.jobFor(test.id);
      const job = await this.submitted.get(test.id)!;
      const batches = this.batches;
      const outcome = await this.jobs.finish(test, job, this.abort.signal, () => batches.nextBatchOut(batch));
      if (this.interruption) return this.interruptedRun(jobId, batch, startedAt);
      this.board?.ended(test.id, outcome.passed ? 'passed' : 'failed', outcome.failures[0]);
      return { ...outcome, jobId, batch, startedAt, endedAt: Date.now(), submittedAt: job.ended ? undefined : job.submittedAt };
    } catch (err) {
      if (this.interruption) return this.interruptedRun(jobId, batch, startedAt);
      const status = { id: jobId ?? '', state: 'UNKNOWN' as const, terminal: true };
      this.board?.ended(test.id, 'failed', (err as Error).message);
      return { passed: false, failures: [(err as Error).message], metrics: [], status, jobId, batch, startedAt, endedAt: Date.now() };
    }
  }

  private interruptedRun(jobId: string | undefined, batch: number, startedAt: number): TestRun {
    const reason = this.interruption!;
    const status = { id: jobId ?? '', state: 'CANCELLED' as const, terminal: true, reason };
    return { passed: false, failures: [reason], metrics: [], status, jobId, batch, startedAt, endedAt: Date.now(), interrupted: reason };
  }

  /** RESUME: the outcome an earlier run recorded for this test's job, reported as it was. */
  private recordedRun(test: PlannedTest, action: Extract<ResumeAction, { kind: 'recorded' }>, startedAt: number): TestRun {
    const { record } = action;
    const passed = record.verdict === 'passed';
    const state = (record.schedulerState ?? 'UNKNOWN') as TestRun['status']['state'];
    this.board?.ended(test.id, passed ? 'passed' : 'failed', 'recorded by an earlier run');
    return {
      passed, failures: record.failures, metrics: record.metrics, status: { id: action.job, state, terminal: true },
      jobId: action.job, startedAt, endedAt: Date.now(), alreadyRecorded: true,
    };
  }

  /** Cancels every job still in flight and releases the scheduler. */
  async close(): Promise<void> {
    this.interruptions.stop();
    this.abort.abort();
    const cancelled = await this.jobs.cancelAll(`the run ${this.options.runId} ended with the job in flight`).catch((err: Error) => {
      this.log(`cancelling this run's jobs failed: ${err.message}`);
      return [];
    });
    if (cancelled.length) this.log(`cancelled ${cancelled.length} job(s) still in flight: ${cancelled.join(' ')}`);
    this.watcher.close();
    this.board?.stop();
    await this.scheduler.close();
    this.claim?.release();
  }

  /** Settles once no submission is under way (an interrupted worker leaves after it). */
  submissionsSettled(): Promise<unknown> {
    return this.jobs.submissionsSettled();
  }

  /**
   * Synchronous on purpose (interrupt.ts says why): stop submitting, cancel every job in flight,
   * record them in the ledger and say so. The tests still waiting then end at once without a
   * result; the worker winds down with them (Vitest's main process, when it got the signal too,
   * is already gone; process.exit is not ours to call in a Vitest worker).
   */
  interrupt(why: string): void {
    if (this.interruption) return;
    const reason = `the run was interrupted (${why} on ${hostname()})`;
    this.interruption = reason;
    const jobs = this.jobs.interrupt(reason);
    const failure = cancelInterrupted(this.scheduler, this.ledger, jobs, reason);
    this.abort.abort();
    const said = failure
      ? `${reason}: cancelling its jobs failed: ${failure}`
      : `${reason}: cancelled ${jobs.length} job(s) in flight${jobs.length ? `: ${jobs.map((j) => j.job).join(' ')}` : ''}`;
    try {
      // Straight to the stream: a console message would travel to a main process that may be gone.
      process.stderr.write(`disagg-bench: ${said}\n`);
    } catch {
      // nobody left to read it
    }
  }

  private log(line: string): void {
    if (this.options.log) this.options.log(line);
    else if (this.board) this.board.log(line);
    else console.log(line);
  }
}
