// One watcher polls every job in flight with one scheduler call per cycle (submitit's design).
// The interval starts short, grows while nothing changes, and resets when any job changes state
// or a new job arrives, so a finished job is noticed quickly without hammering the controller.
// A job that says it is ending (its job.ended mark: job-end-mark.ts) wakes the watcher: it polls
// at once, then at a short interval for a moment, until the scheduler reports that job's end
// (SLURM says COMPLETING first); the grown interval is untouched by it.
import type { JobStatus, Scheduler } from './scheduler.ts';
import { listenForEndMark } from './job-end-mark.ts';
import { DisaggBenchError } from '../../runners/common/errors.ts';

export interface WatcherOptions {
  /** First interval after a submission or a change (ms). Default 200; never above maxIntervalMs. */
  minIntervalMs?: number;
  /** Cap of the interval (ms). Default 10000. */
  maxIntervalMs?: number;
  /**
   * Growth factor per quiet cycle. Default 1.1: jobs of a batch tend to end together, and a late
   * poll delays the next batch by up to (growth - 1) of the time already waited.
   */
  growth?: number;
  /** Consecutive failed polls tolerated before every waiter is rejected. Default 5. */
  maxConsecutiveFailures?: number;
  /**
   * ...and for at least this long (ms) since the first of them: a controller restart or fail-over
   * takes tens of seconds however fast its clients fail. Default 0 (the count alone decides).
   */
  minFailureSpanMs?: number;
  /** Consecutive polls a job may be missing from the answer before it counts as vanished. Default 3. */
  maxMisses?: number;
  /**
   * ...and for at least this long (ms) since the first of them: polls a fraction of a second apart
   * (after an end mark, or under a low DISAGG_POLL_MAX_SEC) must not call a job vanished that the
   * scheduler lists a moment later. Default 1000.
   */
  minMissSpanMs?: number;
  /**
   * After a job's end mark: the interval between polls (ms), never below this apart. Default 50
   * (the job's script exits a fraction of a second before the scheduler says the job ended).
   */
  wakeIntervalMs?: number;
  /** ...for at most this long (ms) after the mark, while that job has not ended. Default 2000. */
  wakeWindowMs?: number;
  /** Called on every state change, and when a queued job's reason changes (ledger, progress). */
  onChange?: (status: JobStatus, previous: JobStatus | undefined) => void;
  /** Called when a poll fails but is tolerated. */
  onPollError?: (error: Error, consecutive: number) => void;
  /** Called once when a job's log folder cannot be watched for its end mark (polling alone then). */
  onMarkUnavailable?: (why: string) => void;
}

interface Watched {
  last?: JobStatus;
  misses: number;
  /** When the first of the current run of misses was seen (epoch ms). */
  firstMissAt: number;
  resolve(status: JobStatus): void;
  reject(error: Error): void;
  promise: Promise<JobStatus>;
  /** When the job's end mark was last heard (epoch ms). */
  markedAt?: number;
  stopListening?: () => void;
}

export class JobWatcher {
  private readonly jobs = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private interval: number;
  private failures = 0;
  private firstFailureAt = 0;
  private polling = false;
  private closed = false;
  /** When the pending timer fires, and when the last poll ended (epoch ms). */
  private dueAt = 0;
  private lastPollEnd = 0;
  private markUnavailableSaid = false;
  readonly options: Required<Omit<WatcherOptions, 'onChange' | 'onPollError' | 'onMarkUnavailable'>> & WatcherOptions;
  /** Poll cycles run (one scheduler status call each). */
  cycles = 0;

  constructor(
    private readonly scheduler: Scheduler,
    options: WatcherOptions = {},
  ) {
    this.options = {
      minIntervalMs: 200,
      maxIntervalMs: 10_000,
      growth: 1.1,
      maxConsecutiveFailures: 5,
      minFailureSpanMs: 0,
      maxMisses: 3,
      minMissSpanMs: 1000,
      wakeIntervalMs: 50,
      wakeWindowMs: 2000,
      ...options,
    };
    // The cap is the promise (DISAGG_POLL_MAX_SEC): a first interval above it would break it after
    // every submission and change.
    this.options.minIntervalMs = Math.min(this.options.minIntervalMs, this.options.maxIntervalMs);
    this.interval = this.options.minIntervalMs;
  }

  /**
   * Resolves with the job's terminal status, or its pending status when it can never start.
   * Several callers may wait on one id.
   */
  wait(id: string): Promise<JobStatus> {
    if (this.closed) return Promise.reject(new DisaggBenchError('job watcher is closed'));
    let watched = this.jobs.get(id);
    if (!watched) {
      watched = { misses: 0, firstMissAt: 0, ...deferred() };
      this.jobs.set(id, watched);
      this.reset();
    }
    return watched.promise;
  }

  /**
   * Watch the job as wait() does, and listen for its end mark in its log folder: when the job's
   * script writes it, poll now. The listening ends with the watching.
   */
  listenForEnd(id: string, logDir: string): void {
    if (this.closed) return;
    void this.wait(id);
    const watched = this.jobs.get(id);
    if (!watched || watched.stopListening) return;
    const listener = listenForEndMark(logDir, () => this.wake(id));
    watched.stopListening = () => listener.close();
    if (listener.unavailable && !this.markUnavailableSaid) {
      this.markUnavailableSaid = true;
      this.options.onMarkUnavailable?.(listener.unavailable);
    }
  }

  /** Latest known status of a job still being watched. */
  status(id: string): JobStatus | undefined {
    return this.jobs.get(id)?.last;
  }

  /** Ids still in flight. */
  inFlight(): string[] {
    return [...this.jobs.keys()];
  }

  /** Stop watching a job (after cancelling it, say); its waiters get `error`. */
  forget(id: string, error: Error): void {
    const watched = this.jobs.get(id);
    if (!watched) return;
    this.drop(id, watched);
    watched.reject(error);
  }

  private drop(id: string, watched: Watched): void {
    this.jobs.delete(id);
    watched.stopListening?.();
  }

  /** The job's end mark was heard: poll now (no sooner than wakeIntervalMs after the last poll). */
  private wake(id: string): void {
    const watched = this.jobs.get(id);
    if (!watched || this.closed) return;
    const now = Date.now();
    watched.markedAt = now;
    // A poll under way schedules the next one short when it ends (cycle).
    if (this.polling) return;
    const at = Math.max(now, this.lastPollEnd + this.options.wakeIntervalMs);
    if (!this.timer || this.dueAt > at) this.schedule(at - now);
  }

  /** True while a job in flight wrote its end mark less than wakeWindowMs ago. */
  private woken(): boolean {
    const since = Date.now() - this.options.wakeWindowMs;
    for (const watched of this.jobs.values()) if (watched.markedAt !== undefined && watched.markedAt > since) return true;
    return false;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const id of [...this.jobs.keys()]) this.forget(id, new DisaggBenchError('job watcher closed before the job ended'));
  }

  /** Poll soon: a new job or a change makes the next answer interesting. */
  private reset(): void {
    this.interval = this.options.minIntervalMs;
    this.schedule(this.options.minIntervalMs);
  }

  private schedule(delay: number): void {
    if (this.closed || this.jobs.size === 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.dueAt = Date.now() + delay;
    this.timer = setTimeout(() => void this.cycle(), delay);
  }

  private async cycle(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    this.timer = undefined;
    let changed = false;
    try {
      const ids = [...this.jobs.keys()];
      this.cycles += 1;
      const statuses = await this.scheduler.poll(ids);
      this.failures = 0;
      for (const id of ids) changed = this.update(id, statuses.get(id)) || changed;
    } catch (err) {
      this.failures += 1;
      if (this.failures === 1) this.firstFailureAt = Date.now();
      const error = err as Error;
      const span = Date.now() - this.firstFailureAt;
      if (this.failures > this.options.maxConsecutiveFailures && span >= this.options.minFailureSpanMs) {
        const message = `polling the ${this.scheduler.name} scheduler failed ${this.failures} times in a row: ${error.message} (failing for ${Math.round(span / 1000)} s)`;
        for (const id of [...this.jobs.keys()]) this.forget(id, new DisaggBenchError(message));
      } else {
        this.options.onPollError?.(error, this.failures);
      }
    } finally {
      this.polling = false;
      this.lastPollEnd = Date.now();
    }
    if (changed) this.interval = this.options.minIntervalMs;
    else if (!this.woken()) this.interval = Math.min(this.interval * this.options.growth, this.options.maxIntervalMs);
    // A woken watcher's short polls leave the interval where it was: they are the end mark's, not quiet cycles.
    this.schedule(this.woken() ? Math.min(this.options.wakeIntervalMs, this.interval) : this.interval);
  }

  /** Applies one job's answer; true when its state changed. */
  private update(id: string, status: JobStatus | undefined): boolean {
    const watched = this.jobs.get(id);
    if (!watched) return false;
    if (!status) {
      const now = Date.now();
      if (watched.misses === 0) watched.firstMissAt = now;
      watched.misses += 1;
      if (watched.misses < this.options.maxMisses || now - watched.firstMissAt < this.options.minMissSpanMs) return false;
      // The scheduler forgot the job and nothing says how it ended: a verdict must not guess.
      status = { id, state: 'UNKNOWN', terminal: true, reason: 'the scheduler no longer reports this job' };
    } else {
      watched.misses = 0;
    }
    const previous = watched.last;
    const changed = !previous || previous.state !== status.state || previous.cannotStart !== status.cannotStart;
    // A queued job's reason (Priority, then Resources, then QOSMaxJobsPerUserLimit) comes in the
    // same answer: its listeners hear it, but the poll interval does not start over for it.
    const newReason = !changed && !status.terminal && previous?.reason !== status.reason;
    watched.last = status;
    if (changed || newReason) this.options.onChange?.(status, previous);
    if (status.terminal) {
      this.drop(id, watched);
      watched.resolve(status);
    } else if (status.cannotStart) {
      // A job that can never start is as final as one that ended for its waiters, who decide
      // (cancel, or wait again while a node's state settles). It stays watched, its end mark
      // still heard, until it ends or is forgotten: a later wait() gets the next answer.
      const { resolve } = watched;
      Object.assign(watched, deferred());
      resolve(status);
    }
    return changed;
  }
}

/** A promise and its settlers; forgetting a job rejects it, and a handler here keeps that from being "unhandled". */
function deferred(): Pick<Watched, 'promise' | 'resolve' | 'reject'> {
  let resolve!: (s: JobStatus) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<JobStatus>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
