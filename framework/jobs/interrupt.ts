// A Vitest worker's part of cancelling a run (the rest, in the process that owns the run, is
// suite/cancellation.ts; this part lives here because a worker's session is in the jobs layer,
// which cannot import the suite). Vitest cancelling the run reaches the session through Vitest's
// runner (suite/cancel-runner.ts, heard in suite.test.ts); three things no Vitest message can
// carry are heard here: SIGINT or SIGTERM to the worker, its IPC channel closing (Vitest's main
// process is gone: killed, crashed), and RUN_ENDING_SIGNAL from the main process ending the run at
// once (suite/end-workers.ts). Each
// cancels every job the session owns AT ONCE, synchronously, inside the handler (a worker whose
// main process is gone dies at its next message to it, so a promise started there may never
// settle), and records it in the ledger as `CANCELLED ... interrupted: true` (leftover-jobs.ts's
// recordCancelled, the one place that writes it), so RESUME=1 submits it again instead of reporting
// the cancellation as the test's result. Results already written are never touched. On the
// run-ending signal the worker then leaves, once any sbatch under way has returned.
import type { Scheduler } from '../scheduler/scheduler.ts';
import type { Ledger } from './ledger.ts';
import { recordCancelled } from './leftover-jobs.ts';
import { RUN_ENDING_SIGNAL } from './run-ending-signal.ts';

/** After an interruption, how long a worker may live on before it kills itself as stuck. */
export const STUCK_AFTER_INTERRUPT_MS = 60_000;

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

/** What a session gives the worker's interruption. */
export interface Interruptible {
  /** Stops submitting, cancels and records every job in flight (synchronous). */
  interrupt(why: string): void;
  /** Settles once no submission is under way. */
  submissionsSettled(): Promise<unknown>;
}

/**
 * Listens for the worker's interruptions on behalf of `session` until stopped (at its close).
 * `stuckAfterMs` (0: never): after an interruption, the worker kills itself if still alive then,
 * stuck on something (tests that interrupt a session in their own worker, which runs on, pass 0).
 */
export function listenForInterruption(session: Interruptible, stuckAfterMs = STUCK_AFTER_INTERRUPT_MS): { stop(): void } {
  let interrupted = false;
  const interrupt = (why: string) => {
    // A second Ctrl-C then kills the worker (the default action); the run-ending signal is heard until stop.
    stopSignals();
    session.interrupt(why);
    if (interrupted) return;
    interrupted = true;
    if (stuckAfterMs > 0) setTimeout(() => process.kill(process.pid, 'SIGKILL'), stuckAfterMs).unref();
  };
  const onSignal = (signal: NodeJS.Signals) => interrupt(`${signal} received`);
  const onDisconnect = () => interrupt('the Vitest main process is gone');
  // The main process ends the run: cancel, record, and leave at once, once any sbatch under way has
  // returned (its job is then cancelled and recorded too).
  const onRunEnding = () => {
    interrupt('the Vitest main process is ending the run');
    void session.submissionsSettled().then(() => process.kill(process.pid, 'SIGKILL'));
  };
  function stopSignals(): void {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('disconnect', onDisconnect);
  }
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('disconnect', onDisconnect);
  process.on(RUN_ENDING_SIGNAL, onRunEnding);
  // A main process that went away while this worker was still loading configs sent no
  // 'disconnect' to hear: nothing may be submitted for a run that is over.
  if (typeof process.send === 'function' && !process.connected) interrupt('the Vitest main process is gone');
  return {
    stop() {
      stopSignals();
      process.off(RUN_ENDING_SIGNAL, onRunEnding);
    },
  };
}
