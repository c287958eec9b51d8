// A run's part of the test-type projects' global setup (global-setup.ts), in Vitest's main process:
// it announces the run, ends it at once on SIGINT/SIGTERM/SIGHUP or when the npx that started it
// is gone (cancellation.ts routes them here; main-interrupt.ts: jobs cancelled and recorded,
// workers ended, tests not run named), and at teardown cancels what the run's ledger still lists,
// the backstop for workers that died before they could cancel their jobs, and makes the
// end-of-run writes if no reporter did (run-end.ts). A listing never loads it.
import type { TestProject } from 'vitest/node';
import { readSettings } from '../settings.ts';
import { cancelLeftovers, describeLeftovers } from '../jobs/leftover-jobs.ts';
import { schedulerKind } from '../scheduler/create.ts';
import { cancelRunJobsNow, endInterruptedRun, stderrLines } from './main-interrupt.ts';
import { interruptedBecause, takeSignalsForVitest } from './cancellation.ts';
import { anyTestRecorded, runTests, type RunTests } from './run-tests.ts';

let announced = false;
let ending = false;
/** Gives the run's signals back at teardown. */
let releaseSignals = () => {};
/** What Vitest knows of the run's tests, whichever reporters are in use (its state API). */
let tests: () => RunTests = () => ({ collected: 0, ids: [], unfinished: [], interrupted: [], cutShort: [] });

/** Ends the run at once (main-interrupt.ts), then the process, with Vitest's exit code when its own signal handler set one, else `exitCode`. */
function endRun(runId: string, why: string, exitCode: number): void {
  if (ending) return;
  ending = true;
  endInterruptedRun(readSettings().outputPath, runId, interruptedBecause(why), tests, stderrLines(why));
  // Now: Vitest's handler may have scheduled an exit too, but the workers' ends are already queued
  // and Vitest would report each as an unhandled error first.
  process.exit(process.exitCode ?? exitCode);
}

/** Called by each test-type project's global setup of a run (the environment checked); returns its teardown. */
export function setupRun(project: TestProject, runId: string): () => Promise<void> {
  const settings = readSettings();
  if (!announced) {
    announced = true;
    console.log(`disagg-bench: scheduler ${schedulerKind(settings)}, output ${settings.outputPath}, run ${runId}`);
    const { vitest } = project;
    tests = () => runTests(vitest.state.getTestModules());
    releaseSignals = takeSignalsForVitest({
      end: (why, exitCode) => endRun(runId, why, exitCode),
      cancelJobs: (why) => cancelRunJobsNow(settings.outputPath, runId, interruptedBecause(why), stderrLines(why)),
    });
  }
  return async function teardown() {
    releaseSignals();
    // The backstop for a worker that died (or was killed) with jobs in flight.
    const outcome = await cancelLeftovers(settings.outputPath, { run: runId, reason: `the run ${runId} ended with the job in flight (its worker died)` });
    const said = describeLeftovers(outcome);
    if (said) console.warn(`cleanup: ${said}`);
    // Reporters named on the command line replace the project's: its end-of-run writes happen here then.
    const modules = project.vitest.state.getTestModules();
    const cut = runTests(modules);
    if (anyTestRecorded(modules) || cut.unfinished.length > 0 || cut.cutShort.length > 0) {
      const { runEndTests, writeRunEnd } = await import('./run-end.ts'); // at the end only: a listing never needs it
      await writeRunEnd(runId, () => runEndTests(modules, settings, runId));
    }
  };
}
