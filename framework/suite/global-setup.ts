// Runs once per test-type project in Vitest's main process. It names the run (one id shared by
// every project of one invocation), tells the workers which test-type projects this invocation
// runs, and checks the environment (variables, test list, OUTPUT_PATH) before any job goes out (a
// mistake: one line per problem, exit 2). A run's part, its signals, its announcement and its
// teardown (run-setup.ts), loads only for a run: `vitest list` submits nothing and writes nothing,
// so it checks what decides what is listed (not OUTPUT_PATH) and loads ~15 modules, not ~60.
import type { TestProject } from 'vitest/node';
import { packageRoot } from '../settings.ts';
import { checkListingEnvironment, checkRunEnvironment, isUserInputError } from './env-check.ts';
import { EXIT_USAGE } from '../../runners/common/exit-codes.ts';
import { allTestTypeNames } from '../contract/extension-types.ts';
import { isListing } from './run-project.ts';
import { newRunId } from './run-id.ts';
import { loadExtensions } from '../config/extensions.ts';
import { InputError } from '../../runners/common/errors.ts';

const runId = process.env.DISAGG_RUN_ID ?? newRunId();
process.env.DISAGG_RUN_ID = runId;
let checked = false;

/** The environment checked, once per invocation; a user's mistake ends the run here, one line per problem (Vitest would add a stack and a code frame). */
async function checkEnvironmentOrExit(listing: boolean): Promise<void> {
  if (checked) return;
  checked = true;
  try {
    const { warnings } = await (listing ? checkListingEnvironment() : checkRunEnvironment());
    for (const warning of warnings) console.warn(`disagg-bench: warning: ${warning}`);
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
  // WORK_DIR's extensions first: their test types are projects of the run too, and SCHEDULER may
  // name a scheduler one of them registers.
  await loadExtensions(process.env.WORK_DIR || packageRoot);
  project.provide('runProjects', allTestTypeNames().filter((name) => running.has(name)));
  const listing = isListing();
  await checkEnvironmentOrExit(listing);
  if (listing) return;
  const { setupRun } = await import('./run-setup.ts');
  return setupRun(project, runId);
}
