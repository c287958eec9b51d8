// Jobs a run left in flight on SLURM, cancelled and RECORDED in one place. Three callers: Vitest's
// main process on SIGINT/SIGTERM (cancelLeftoversNow: synchronous, the process is about to exit),
// the run's end (global teardown: jobs of a worker that died) and `disagg-bench cleanup` (a run
// killed with SIGKILL). Each cancelled job gets the ledger line `CANCELLED ... interrupted: true`,
// so a later RESUME=1 submits its test again instead of adopting the cancelled job and failing it.
// A job SLURM says has already ended gets its real final state instead: RESUME judges it.
// (Upstream's cleanup_jobs.sh cancels every id of jobs.txt and records nothing.)
// Local jobs are not here: they die with the process that ran them (scheduler/local-job.ts).
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { JobStatus, Scheduler } from '../scheduler/scheduler.ts';
import { SlurmScheduler } from '../scheduler/slurm.ts';
import { latestJobStates, Ledger, LEDGER_FILE, readLedger, unfinishedJobs, type LedgerEntry } from './ledger.ts';

export interface LeftoverOutcome {
  /** The ledger of OUTPUT_PATH exists (false: no run ever wrote there). */
  ledgerFound: boolean;
  /** Cancelled now and recorded as cancelled by an interruption. */
  cancelled: LedgerEntry[];
  /** Found ended already: recorded with the state SLURM gave. */
  ended: Array<{ entry: LedgerEntry; status: JobStatus }>;
  /** Why cancelling failed (nothing was recorded for the jobs it concerned). */
  failure?: string;
}

/** The SLURM jobs of a run (or of every run) whose last ledger line is not terminal. */
export function leftoverJobs(outputPath: string, run?: string): LedgerEntry[] {
  return unfinishedJobs(readLedger(outputPath), run).filter((e) => e.scheduler === 'slurm');
}

export function ledgerExists(outputPath: string): boolean {
  return existsSync(path.join(outputPath, LEDGER_FILE));
}

/**
 * The ledger lines of jobs cancelled because their run was interrupted (or abandoned). A job whose
 * end is recorded already (the worker and the main process both cancel on a signal) gets no second line.
 */
export function recordCancelled(outputPath: string, jobs: Array<Pick<LedgerEntry, 'run' | 'test' | 'job'>>, scheduler: string, reason: string): void {
  const ended = new Set(latestJobStates(readLedger(outputPath)).filter((e) => e.terminal).map((e) => `${e.test}\u0000${e.job}`));
  const ledgers = new Map<string, Ledger>();
  for (const { run, test, job } of jobs) {
    if (ended.has(`${test}\u0000${job}`)) continue;
    let ledger = ledgers.get(run);
    if (!ledger) ledgers.set(run, (ledger = new Ledger(outputPath, run, scheduler)));
    ledger.record({ test, job, state: 'CANCELLED', terminal: true, reason, interrupted: true });
  }
}

/** Synchronous scancel, for signal handlers (SlurmScheduler.cancelNow). */
interface CancelsNow {
  cancelNow(ids: string[]): string | undefined;
}

/**
 * Vitest's main process on a signal: one scancel of the run's unfinished SLURM jobs, recorded,
 * synchronously (the process exits within milliseconds).
 */
export function cancelLeftoversNow(outputPath: string, run: string, reason: string, scheduler: CancelsNow = new SlurmScheduler()): LeftoverOutcome {
  const left = leftoverJobs(outputPath, run);
  const outcome: LeftoverOutcome = { ledgerFound: ledgerExists(outputPath), cancelled: [], ended: [] };
  if (left.length === 0) return outcome;
  outcome.failure = scheduler.cancelNow(left.map((e) => e.job));
  if (outcome.failure) return outcome;
  recordCancelled(outputPath, left, 'slurm', reason);
  outcome.cancelled = left;
  return outcome;
}

export interface CancelLeftoversOptions {
  /** Only this run's jobs (default: every run of the ledger). */
  run?: string;
  /** Why, written on each ledger line. */
  reason: string;
  /** Default: a SlurmScheduler with this process's environment. */
  scheduler?: Scheduler;
}

/**
 * The run's end and `disagg-bench cleanup`: asks SLURM how each unfinished job stands (one poll),
 * records those that ended with their final state, cancels the rest with one scancel and records
 * them cancelled.
 */
export async function cancelLeftovers(outputPath: string, options: CancelLeftoversOptions): Promise<LeftoverOutcome> {
  const left = leftoverJobs(outputPath, options.run);
  const outcome: LeftoverOutcome = { ledgerFound: ledgerExists(outputPath), cancelled: [], ended: [] };
  if (left.length === 0) return outcome;
  const scheduler = options.scheduler ?? new SlurmScheduler();
  try {
    // A poll that fails leaves every job to be cancelled: cancelling an ended job changes nothing.
    const statuses = await scheduler.poll(left.map((e) => e.job)).catch(() => new Map<string, JobStatus>());
    const toCancel: LedgerEntry[] = [];
    for (const entry of left) {
      const status = statuses.get(entry.job);
      if (status?.terminal) outcome.ended.push({ entry, status });
      else toCancel.push(entry);
    }
    for (const { entry, status } of outcome.ended) {
      new Ledger(outputPath, entry.run, entry.scheduler).record({
        test: entry.test, job: entry.job, state: status.state, terminal: true,
        reason: status.reason ? `${status.reason} (seen by ${options.reason})` : `seen ended by ${options.reason}`,
      });
    }
    if (toCancel.length > 0) {
      try {
        await scheduler.cancel(toCancel.map((e) => e.job));
      } catch (error) {
        outcome.failure = (error as Error).message;
        return outcome;
      }
      recordCancelled(outputPath, toCancel, 'slurm', options.reason);
      outcome.cancelled = toCancel;
    }
    return outcome;
  } finally {
    await scheduler.close();
  }
}

/** One line saying what was done, for the caller to print. */
export function describeLeftovers(outcome: LeftoverOutcome): string | undefined {
  const parts: string[] = [];
  if (outcome.cancelled.length) parts.push(`cancelled ${outcome.cancelled.length} job(s) left in flight: ${outcome.cancelled.map((e) => `${e.job} (${e.test})`).join(', ')}`);
  if (outcome.ended.length) parts.push(`${outcome.ended.length} job(s) had ended unwatched, recorded as ${outcome.ended.map((e) => `${e.entry.job} ${e.status.state}`).join(', ')}`);
  if (outcome.failure) parts.push(`cancelling failed: ${outcome.failure}`);
  return parts.length ? `${parts.join('; ')} (recorded in the ledger)` : undefined;
}
