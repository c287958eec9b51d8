// Vitest's main process ends an interrupted run (SIGINT, SIGTERM, or the npx that started it gone):
// everything here is synchronous, because Vitest's own handler exits the process a millisecond
// after the signal and nothing asynchronous would get to run.
//   1. The run's SLURM jobs in the ledger are cancelled and recorded (leftover-jobs.ts).
//   2. Every Vitest worker gets SIGUSR2, "the run is ending": one with a session cancels its own
//      jobs (those not in the ledger yet included), records them and exits; one still loading
//      configs dies of it (the default action), even in the middle of a long synchronous read.
//      Whatever is left after WORKER_GRACE_MS gets SIGKILL (local jobs then die by their
//      watchdog, scheduler/local-job.ts). Without this, workers were orphaned and ran on.
//   3. The ledger again: jobs a worker recorded while it ended.
//   4. The tests that did not run to their end are named, and how to continue them, on stderr and
//      in results.json and the run digest (not-run.ts), with why: cancelled, or not reached.
import { readdirSync } from 'node:fs';
import { processStat } from '../../runners/common/proc.ts';
import { cancelLeftoversNow, describeLeftovers } from '../jobs/leftover-jobs.ts';
import { RUN_ENDING_SIGNAL } from '../jobs/interrupt.ts';
import { describeNotRun, withoutResultOfRun, type RunTests } from './run-tests.ts';
import { recordNotRunSync, whyNotRun } from './not-run.ts';

/** How long workers get to cancel their jobs and exit before SIGKILL. */
const WORKER_GRACE_MS = 2_500;

/** This process's live children (zombies are gone: nobody reaps them while we block). */
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

/** Sends the run-ending signal to every worker, waits up to the grace, SIGKILLs what is left; returns how many were killed. */
function endWorkers(): number {
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

/**
 * Ends the run now. `said` prints one line (to stderr: stdout may be a closed pipe by now).
 * Returns nothing; the caller leaves the exit to Vitest's handler (or schedules it).
 */
export function endRunNow(outputPath: string, runId: string, reason: string, tests: () => RunTests, said: (line: string) => void): void {
  const at = new Date();
  const first = describeLeftovers(cancelLeftoversNow(outputPath, runId, reason));
  if (first) said(first);
  const killed = endWorkers();
  if (killed > 0) said(`${killed} worker(s) did not end within ${WORKER_GRACE_MS} ms of the run's end: killed`);
  const second = describeLeftovers(cancelLeftoversNow(outputPath, runId, reason));
  if (second) said(second);
  const { collected, ids, unfinished } = tests();
  const notRun = withoutResultOfRun(unfinished, outputPath, runId);
  if (notRun.length > 0) {
    said(describeNotRun(notRun, `${reason}; no result recorded`));
    const problem = recordNotRunSync(outputPath, runId, ids, whyNotRun(notRun, outputPath, runId, reason, at));
    said(problem ?? `results.json and summary.json in ${outputPath} name them`);
    said(`to continue: the same command with --resume (disagg-bench run) or RESUME=1 (npx vitest run), OUTPUT_PATH=${outputPath}`);
  }
  else if (collected === 0) said(`no test had been collected yet: none ran (${reason})`);
}
