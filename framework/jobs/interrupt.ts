// What happens when a run is interrupted (Ctrl-C, SIGTERM from CI, the Vitest main process gone):
// every job it owns is cancelled AT ONCE, synchronously, inside the signal handler. Vitest's main
// process exits a millisecond after SIGINT/SIGTERM and a worker whose main process is gone dies at
// its next message to it, so a promise started there may never settle.
//
// Two places act, so that neither is a single point of failure:
// - the worker that runs the tests (session.ts): it knows its jobs, stops submitting, cancels them;
// - Vitest's main process (suite/main-interrupt.ts): it cancels every job the run's ledger lists as
//   unfinished (leftover-jobs.ts), including those of a worker that was killed or is stuck.
// Each cancelled job gets a ledger line `CANCELLED ... interrupted: true` (leftover-jobs.ts's
// recordCancelled, the one place that writes it), so RESUME=1 submits it again instead of
// reporting the cancellation as the test's result. Results already written are never touched.
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { Ledger } from './ledger.ts';
import { recordCancelled } from './leftover-jobs.ts';

/**
 * What Vitest's main process sends its workers when it ends an interrupted run
 * (suite/main-interrupt.ts): a worker with a session cancels, records and exits (session.ts); one
 * still loading configs dies of it (the default action). Node leaves SIGUSR2 to applications.
 */
export const RUN_ENDING_SIGNAL: NodeJS.Signals = 'SIGUSR2';

export interface OwnedJob {
  job: string;
  test: string;
}

/**
 * Cancels the jobs synchronously and records them in the ledger as cancelled by the interruption.
 * Returns why cancelling failed (nothing is recorded then), or undefined.
 */
export function cancelInterrupted(scheduler: Scheduler, ledger: Ledger, jobs: OwnedJob[], reason: string): string | undefined {
  if (jobs.length === 0) return undefined;
  const failure = scheduler.cancelNow(jobs.map((j) => j.job));
  if (failure) return failure;
  recordCancelled(ledger.outputPath, jobs.map((j) => ({ ...j, run: ledger.run })), ledger.scheduler, reason);
  return undefined;
}
