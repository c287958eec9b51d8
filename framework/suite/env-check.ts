// Everything a run takes from the environment, checked in Vitest's main process before any test
// file loads and before anything is submitted: the variables (settings.ts), DISAGG_FORCE_ENV's
// names, the test list, OUTPUT_PATH. A user's mistake is one line per problem, never a stack.
import { readSettings, SettingsError, type Settings } from '../settings.ts';
import { forcedVariables } from '../config/resolve.ts';
import { allTestTypes } from '../types/registry.ts';
import { readTestList, TestListError } from '../select/testlist.ts';
import { gpuTypeProblem } from '../select/plan.ts';
import { checkOutputPath, OutputPathError } from './output-path.ts';
import { schedulerProblem } from '../scheduler/create.ts';

/** The errors that are a user's input, shown as their message alone. */
export function isUserInputError(err: unknown): err is Error {
  return err instanceof SettingsError || err instanceof OutputPathError || err instanceof TestListError;
}

/** The variables DISAGG_FORCE_ENV may name: every test type's environment overrides. */
function overridableVariables(): string[] {
  return [...new Set(allTestTypes().flatMap((t) => t.envOverrides.map((o) => o.env)))].sort();
}

/** Checks the run's environment; returns the settings and warnings, or throws a user-input error. */
export function checkRunEnvironment(env: NodeJS.ProcessEnv = process.env): { settings: Settings; warnings: string[] } {
  const problems: string[] = [];
  let settings: Settings | undefined;
  try {
    settings = readSettings(env);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    problems.push(...err.problems);
  }
  const scheduler = schedulerProblem(env);
  if (scheduler) problems.unshift(scheduler);
  const forced = forcedVariables(env);
  if (forced !== 'all') {
    const known = overridableVariables();
    const unknown = [...forced].filter((name) => !known.includes(name));
    if (unknown.length > 0) {
      problems.push(`DISAGG_FORCE_ENV=${JSON.stringify(env.DISAGG_FORCE_ENV)}: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not a variable that fills config values; expected all, or names among ${known.join(', ')}`);
    }
  }
  if (problems.length > 0 || !settings) throw new SettingsError(problems);
  const gpuProblem = gpuTypeProblem(settings, env);
  if (gpuProblem) throw new SettingsError([gpuProblem]);
  if (settings.testList) readTestList(settings.testList, settings.workDir);
  checkOutputPath(settings.outputPath);
  return { settings, warnings: settings.batchSizeWarning ? [settings.batchSizeWarning] : [] };
}
