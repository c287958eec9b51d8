// Runs once per test-type project in Vitest's main process. It names the run (one id shared by
// every project of one invocation), checks the environment (variables, test list, OUTPUT_PATH)
// before any job goes out (a mistake: one line per problem, exit 2), and cancels whatever the
// run's ledger says is still in flight: at once on SIGINT/SIGTERM (Vitest's main process exits a
// millisecond later, see jobs/interrupt.ts) and at teardown, the backstop for workers that were
// killed before they could cancel their jobs.
import { constants } from 'node:os';
import type { TestProject } from 'vitest/node';
import { readSettings } from '../settings.ts';
import { cancelLeftovers, cancelLeftoversNow, describeLeftovers } from '../jobs/leftover-jobs.ts';
import { schedulerKind } from '../scheduler/create.ts';
import { checkRunEnvironment, isUserInputError } from './env-check.ts';
import { testTypeNames } from '../types/names.ts';

const runId = process.env.DISAGG_RUN_ID ?? `run-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`;
process.env.DISAGG_RUN_ID = runId;
let announced = false;

function onSignal(signal: NodeJS.Signals): void {
  const { outputPath } = readSettings();
  const said = describeLeftovers(cancelLeftoversNow(outputPath, runId, `the run was interrupted (${signal} received by Vitest's main process)`));
  if (said) process.stderr.write(`disagg-bench: ${signal}: ${said}\n`);
  // Vitest's own handler has already scheduled the exit; should it be gone, leave as Node would.
  process.exitCode ??= 128 + constants.signals[signal];
  setTimeout(() => process.exit(), 50).unref();
}

/** The environment checked; a user's mistake ends the run here, one line per problem (Vitest would add a stack and a code frame). */
function checkEnvironmentOrExit(): void {
  try {
    for (const warning of checkRunEnvironment().warnings) console.warn(`disagg-bench: warning: ${warning}`);
  } catch (err) {
    if (!isUserInputError(err)) throw err;
    for (const line of err.message.split('\n')) process.stderr.write(`disagg-bench: error: ${line}\n`);
    process.exit(2);
  }
}

export default function setup(project: TestProject) {
  project.provide('runId', runId);
  // The test-type projects this invocation runs (after --project), in order: the first reports
  // what concerns the whole run (unknown test-list ids, configs of no test type).
  const running = new Set(project.vitest.projects.map((p) => p.name));
  project.provide('runProjects', testTypeNames.filter((name) => running.has(name)));
  if (!announced) checkEnvironmentOrExit();
  const settings = readSettings();
  if (!announced) {
    announced = true;
    console.log(`disagg-bench: scheduler ${schedulerKind(settings)}, output ${settings.outputPath}, run ${runId}`);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  return async function teardown() {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // The backstop for a worker that died (or was killed) with jobs in flight.
    const outcome = await cancelLeftovers(settings.outputPath, { run: runId, reason: `the run ${runId} ended with the job in flight (its worker died)` });
    const said = describeLeftovers(outcome);
    if (said) console.warn(`cleanup: ${said}`);
  };
}
