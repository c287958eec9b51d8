// Jobs a run left in flight, cancelled and RECORDED in one place. Three callers: Vitest's main
// process on SIGINT/SIGTERM (cancelLeftoversNow: synchronous, the process is about to exit), the
// run's end (global teardown: jobs of a worker that died) and `disagg-bench cleanup` (a run killed
// with SIGKILL). Each cancelled job gets the ledger line `CANCELLED ... interrupted: true`, so a
// later RESUME=1 submits its test again instead of adopting the cancelled job and failing it. A
// job its scheduler says has already ended gets its real final state instead: RESUME judges it.
// (Upstream's cleanup_jobs.sh cancels every id of jobs.txt and records nothing.)
// Only jobs of schedulers whose jobs outlive their run are here (SchedulerCapabilities); each is
// cancelled through the scheduler its ledger line names, made from the registry. The local
// scheduler's jobs die with the process that ran them (scheduler/local-job.ts).
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { JobStatus, Scheduler } from '../scheduler/scheduler.ts';
import { findScheduler, jobsOutliveRun } from '../scheduler/registry.ts';
import '../scheduler/schedulers.ts';
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

/** The jobs of a run (or of every run) whose last ledger line is not terminal and that outlive it. */
export function leftoverJobs(outputPath: string, run?: string): LedgerEntry[] {
  return unfinishedJobs(readLedger(outputPath), run).filter((e) => jobsOutliveRun(e.scheduler));
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

/** The leftover jobs by the scheduler that ran them, each with one to cancel them through. */
function bySchedulerOf(left: LedgerEntry[], outputPath: string, given?: Scheduler): Array<{ scheduler: Scheduler | undefined; name: string; entries: LedgerEntry[] }> {
  const groups = new Map<string, LedgerEntry[]>();
  for (const entry of left) groups.set(entry.scheduler, [...(groups.get(entry.scheduler) ?? []), entry]);
  return [...groups].map(([name, entries]) => ({
    name,
    entries,
    scheduler: given ?? findScheduler(name)?.create({ settings: { outputPath }, env: process.env }),
  }));
}

const notRegistered = (name: string) => `the ledger names the scheduler ${name}, which this process has not registered`;

/**
 * Vitest's main process on a signal: one synchronous cancel per scheduler of the run's unfinished
 * jobs, recorded (the process exits within milliseconds). `scheduler` replaces the registry's (tests).
 */
export function cancelLeftoversNow(outputPath: string, run: string, reason: string, scheduler?: Scheduler): LeftoverOutcome {
  const left = leftoverJobs(outputPath, run);
  const outcome: LeftoverOutcome = { ledgerFound: ledgerExists(outputPath), cancelled: [], ended: [] };
  const failures: string[] = [];
  for (const group of bySchedulerOf(left, outputPath, scheduler)) {
    const failure = group.scheduler ? group.scheduler.cancelNow(group.entries.map((e) => e.job)) : notRegistered(group.name);
    if (failure) {
      failures.push(failure);
      continue;
    }
    recordCancelled(outputPath, group.entries, group.name, reason);
    outcome.cancelled.push(...group.entries);
  }
  if (failures.length) outcome.failure = failures.join('; ');
  return outcome;
}

export interface CancelLeftoversOptions {
  /** Only this run's jobs (default: every run of the ledger). */
  run?: string;
  /** Why, written on each ledger line. */
  reason: string;
  /** Cancels every job (tests); default: for each job, the scheduler its ledger line names, from the registry. */
  scheduler?: Scheduler;
}

/**
 * The run's end and `disagg-bench cleanup`: asks each scheduler how its unfinished jobs stand (one
 * poll), records those that ended with their final state, cancels the rest with one cancel and
 * records them cancelled.
 */
export async function cancelLeftovers(outputPath: string, options: CancelLeftoversOptions): Promise<LeftoverOutcome> {
  const left = leftoverJobs(outputPath, options.run);
  const outcome: LeftoverOutcome = { ledgerFound: ledgerExists(outputPath), cancelled: [], ended: [] };
  const failures: string[] = [];
  for (const group of bySchedulerOf(left, outputPath, options.scheduler)) {
    if (!group.scheduler) failures.push(notRegistered(group.name));
    else {
      const failure = await settleGroup(outputPath, group.scheduler, group.name, group.entries, options.reason, outcome);
      if (failure) failures.push(failure);
    }
  }
  if (failures.length) outcome.failure = failures.join('; ');
  return outcome;
}

/** One scheduler's share of cancelLeftovers; returns why cancelling failed, or undefined. */
async function settleGroup(outputPath: string, scheduler: Scheduler, name: string, left: LedgerEntry[], reason: string, outcome: LeftoverOutcome): Promise<string | undefined> {
  try {
    // A poll that fails leaves every job to be cancelled: cancelling an ended job changes nothing.
    const statuses = await scheduler.poll(left.map((e) => e.job)).catch(() => new Map<string, JobStatus>());
    const toCancel: LedgerEntry[] = [];
    for (const entry of left) {
      const status = statuses.get(entry.job);
      if (status?.terminal) {
        outcome.ended.push({ entry, status });
        new Ledger(outputPath, entry.run, entry.scheduler).record({
          test: entry.test, job: entry.job, state: status.state, terminal: true,
          reason: status.reason ? `${status.reason} (seen by ${reason})` : `seen ended by ${reason}`,
        });
      } else toCancel.push(entry);
    }
    if (toCancel.length === 0) return undefined;
    try {
      await scheduler.cancel(toCancel.map((e) => e.job));
    } catch (error) {
      return (error as Error).message;
    }
    recordCancelled(outputPath, toCancel, name, reason);
    outcome.cancelled.push(...toCancel);
    return undefined;
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
