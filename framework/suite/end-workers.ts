// Ending Vitest's workers from a signal handler, synchronously: the way a run ends when nothing
// asynchronous gets to run (`npx vitest run`, whose own handler exits the process a millisecond
// after SIGINT or SIGTERM), and the fallback of `disagg-bench run` when Vitest's cancellation does
// not end the run in time or a second signal comes (cancellation.ts).
import { readdirSync } from 'node:fs';
import { processStat } from '../../runners/common/proc.ts';
import { RUN_ENDING_SIGNAL } from '../jobs/run-ending-signal.ts';

/** How long workers get to cancel their jobs and exit before SIGKILL. */
export const WORKER_GRACE_MS = 2_500;

/**
 * This process's live children (zombies are gone: nobody reaps them while we block). Read from
 * /proc because Vitest's Node API names no worker process (its pool is private) and this runs in a
 * signal handler that must finish synchronously, where cancelCurrentRun's promise would never settle.
 */
function children(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries.filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => {
    const s = processStat(pid);
    return s !== undefined && s.ppid === process.pid && s.state !== 'Z';
  });
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(pause, 0, 0, ms);
}

/**
 * Ends Vitest's workers: each gets RUN_ENDING_SIGNAL, "the run is ending" (one with a session
 * cancels its own jobs, those not in the ledger yet included, records them and exits; one still
 * loading configs dies of it, the default action, even in a long synchronous read); whatever is
 * left after WORKER_GRACE_MS gets SIGKILL (local jobs then die by their watchdog,
 * scheduler/local-job.ts). Without this, workers were orphaned and ran on. Returns how many were killed.
 */
export function endWorkers(): number {
  const workers = children();
  for (const pid of workers) signal(pid, RUN_ENDING_SIGNAL);
  const deadline = Date.now() + WORKER_GRACE_MS;
  let left = workers;
  while (left.length > 0 && Date.now() < deadline) {
    sleepSync(50);
    const alive = new Set(children());
    left = left.filter((pid) => alive.has(pid));
  }
  for (const pid of left) signal(pid, 'SIGKILL');
  return left.length;
}
