// Runs once per test-type project in Vitest's main process. It names the run (one id shared by
// every project of one invocation), checks the environment (variables, test list, OUTPUT_PATH)
// before any job goes out (a mistake: one line per problem, exit 2), ends the run at once on
// SIGINT/SIGTERM/SIGHUP or when the npx that started it is gone (cancellation.ts routes them here;
// main-interrupt.ts: jobs cancelled and recorded, workers ended, tests not run named), and at
// teardown cancels what the run's ledger still lists, the backstop for workers that died before
// they could cancel their jobs, and makes the end-of-run writes if no reporter did (run-end.ts).
import type { TestProject } from 'vitest/node';
import { packageRoot, readSettings } from '../settings.ts';
import { cancelLeftovers, describeLeftovers } from '../jobs/leftover-jobs.ts';
import { schedulerKind } from '../scheduler/create.ts';
import { checkRunEnvironment, isUserInputError } from './env-check.ts';
import { EXIT_USAGE } from '../../runners/common/exit-codes.ts';
import { allTestTypeNames } from '../contract/extension-types.ts';
import { cancelRunJobsNow, endInterruptedRun, stderrLines } from './main-interrupt.ts';
import { interruptedBecause, takeSignalsForVitest } from './cancellation.ts';
import { anyTestRecorded, isListing, runTests, type RunTests } from './run-tests.ts';
import { newRunId } from './run-id.ts';
import { loadExtensions } from '../config/extensions.ts';
import { InputError } from '../../runners/common/errors.ts';

const runId = process.env.DISAGG_RUN_ID ?? newRunId();
process.env.DISAGG_RUN_ID = runId;
let announced = false;
let ending = false;
/** Gives the run's signals back at teardown. */
let releaseSignals = () => {};
/** What Vitest knows of the run's tests, whichever reporters are in use (its state API). */
let tests: () => RunTests = () => ({ collected: 0, ids: [], unfinished: [], interrupted: [], cutShort: [] });

/** Ends the run at once (main-interrupt.ts), then the process, with Vitest's exit code when its own signal handler set one, else `exitCode`. */
function endRun(why: string, exitCode: number): void {
  if (ending) return;
  ending = true;
  endInterruptedRun(readSettings().outputPath, runId, interruptedBecause(why), tests, stderrLines(why));
  // Now: Vitest's handler may have scheduled an exit too, but the workers' ends are already queued
  // and Vitest would report each as an unhandled error first.
  process.exit(process.exitCode ?? exitCode);
}

/** The environment checked; a user's mistake ends the run here, one line per problem (Vitest would add a stack and a code frame). */
async function checkEnvironmentOrExit(): Promise<void> {
  try {
    // WORK_DIR's extensions first: SCHEDULER may name a scheduler one of them registers.
    await loadExtensions(process.env.WORK_DIR || packageRoot);
    for (const warning of (await checkRunEnvironment()).warnings) console.warn(`disagg-bench: warning: ${warning}`);
  } catch (err) {
    if (!isUserInputError(err) && !(err instanceof InputError)) throw err;
    for (const line of err.message.split('\n')) process.stderr.write(`disagg-bench: error: ${line}\n`);
    // A setting the run cannot take, as the command line's: the usage exit code.
    process.exit(EXIT_USAGE);
  }
}

export default async function setup(project: TestProject) {
  project.provide('runId', runId);
  // The test-type projects this invocation runs (after --project), in order: the first reports
  // what concerns the whole run (unknown test-list ids, configs of no test type).
  const running = new Set(project.vitest.projects.map((p) => p.name));
  // WORK_DIR's extensions first: their test types are projects of the run too.
  await loadExtensions(process.env.WORK_DIR || packageRoot);
  project.provide('runProjects', allTestTypeNames().filter((name) => running.has(name)));
  if (!announced) await checkEnvironmentOrExit();
  const settings = readSettings();
  if (!announced) {
    announced = true;
    console.log(`disagg-bench: scheduler ${schedulerKind(settings)}, output ${settings.outputPath}, run ${runId}`);
    const { vitest } = project;
    tests = () => runTests(vitest.state.getTestModules());
    releaseSignals = takeSignalsForVitest({ end: endRun, cancelJobs: (why) => cancelRunJobsNow(settings.outputPath, runId, interruptedBecause(why), stderrLines(why)) });
  }
  return async function teardown() {
    releaseSignals();
    // `vitest list` submits no job and runs no test: nothing is left over, nothing to write (and
    // looking through a listing's thousands of collected tests costs it time for nothing).
    if (isListing()) return;
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
