// What ending an interrupted run does, in the process that owns the run (cancellation.ts decides
// when, and calls it through the global setup; it lives here because it needs the run: its ledger,
// Vitest's state, its results). Synchronous, as everything cancellation.ts calls:
//   1. The run's jobs in the ledger are cancelled and recorded (leftover-jobs.ts).
//   2. Vitest's workers are ended (end-workers.ts: each cancels and records its own jobs and
//      exits; what is left after the grace is killed).
//   3. The ledger again: jobs a worker recorded while it ended.
//   4. The tests that did not run to their end are named, and how to continue them, on stderr and
//      in results.json and the run digest (not-run.ts), with why: cancelled, or not reached.
// A run cancelled through Vitest (`disagg-bench run`) does 1 here, the rest through Vitest, and
// names its tests not run with sayNotRun once it has ended.
import { cancelLeftoversNow, describeLeftovers } from '../jobs/leftover-jobs.ts';
import { describeNotRun, withoutResultOfRun, type RunTests } from './run-tests.ts';
import { recordNotRunSync, whyNotRun } from './not-run.ts';
import { endWorkers, WORKER_GRACE_MS } from './end-workers.ts';
import { indexRootOf } from '../results/index/runs-folder.ts';

/** What an interruption says goes to stderr, one line each, tagged with the signal (stdout may be a closed pipe by now). */
export function stderrLines(why: string): (line: string) => void {
  const tag = why.startsWith('SIG') ? why.split(' ')[0] : 'interrupted';
  return (line: string) => {
    try {
      process.stderr.write(`disagg-bench: ${tag}: ${line}\n`);
    } catch {
      // nobody left to read it
    }
  };
}

/** The run's jobs in the ledger, cancelled and recorded now; `said` is told what was done. */
export function cancelRunJobsNow(outputPath: string, runId: string, reason: string, said: (line: string) => void): void {
  const done = describeLeftovers(cancelLeftoversNow(outputPath, runId, reason));
  if (done) said(done);
}

/**
 * Names the tests the interrupted run did not run (`reason`: why), where they are listed
 * (`recorded`: where, or why they are not) and how to continue them.
 */
export function sayNotRun(notRun: string[], outputPath: string, runId: string, reason: string, recorded: string, said: (line: string) => void): void {
  said(describeNotRun(notRun, `${reason}; no result recorded`));
  said(recorded);
  // A run of `disagg-bench run` writes into OUTPUT_PATH/runs/<id>/; --resume reads `latest` in OUTPUT_PATH.
  const root = indexRootOf(outputPath, runId);
  said(root === outputPath
    ? `to continue: the same command with RESUME=1 (npx vitest run) or --resume (disagg-bench run), OUTPUT_PATH=${outputPath}`
    : `to continue: the same command with --resume (disagg-bench run), OUTPUT_PATH=${root}`);
}

/** Where a run's not-run tests are listed. */
export function notRunListedIn(outputPath: string): string {
  return `results.json and summary.json in ${outputPath} name them`;
}

/**
 * Ends the run now. `said` prints one line (to stderr: stdout may be a closed pipe by now).
 * Returns nothing; the caller leaves the exit to Vitest's handler (or schedules it).
 */
export function endInterruptedRun(outputPath: string, runId: string, reason: string, tests: () => RunTests, said: (line: string) => void): void {
  const at = new Date();
  cancelRunJobsNow(outputPath, runId, reason, said);
  const killed = endWorkers();
  if (killed > 0) said(`${killed} worker(s) did not end within ${WORKER_GRACE_MS} ms of the run's end: killed`);
  cancelRunJobsNow(outputPath, runId, reason, said);
  const { collected, ids, unfinished, interrupted, cutShort } = tests();
  // Those still under way, and those a cancellation through Vitest had already ended or skipped.
  const notRun = withoutResultOfRun([...new Set([...unfinished, ...interrupted, ...cutShort.map((t) => t.id)])], outputPath, runId);
  if (notRun.length > 0) {
    const problem = recordNotRunSync(outputPath, runId, ids, whyNotRun(notRun, outputPath, runId, reason, at));
    sayNotRun(notRun, outputPath, runId, reason, problem ?? notRunListedIn(outputPath), said);
  }
  else if (collected === 0) said(`no test had been collected yet: none ran (${reason})`);
}
