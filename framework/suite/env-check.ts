// Everything a run takes from the environment, checked in Vitest's main process before any test
// file loads and before anything is submitted: the variables (settings.ts), SCHEDULER's name,
// DISAGG_FORCE_ENV's names, GPU_TYPE, the test list, OUTPUT_PATH. A user's mistake is one line per
// problem, never a stack. `vitest list` checks all but OUTPUT_PATH, which only a run writes into.
// What only some checks need loads for them alone: the scheduler registry (~20 modules) when
// SCHEDULER is set, the test types when DISAGG_FORCE_ENV names variables, the plan when GPU_TYPE
// names no known GPU, the OUTPUT_PATH check and the results modules it reads for a run.
import { readSettings, SettingsError, type Settings } from '../settings.ts';
import { forcedVariables } from '../config/resolve.ts';
import { readTestList, TestListError } from '../select/testlist.ts';
import { knownGpuTypes, gpuTypeFromEnv } from '../select/gpu.ts';
import { OutputPathError } from './output-path-error.ts';

/** The errors that are a user's input, shown as their message alone. */
export function isUserInputError(err: unknown): err is Error {
  return err instanceof SettingsError || err instanceof OutputPathError || err instanceof TestListError;
}

/** The variables DISAGG_FORCE_ENV may name: every test type's environment overrides. */
async function overridableVariables(): Promise<string[]> {
  const { allTestTypes } = await import('../types/registry.ts');
  return [...new Set(allTestTypes().flatMap((t) => t.envOverrides.map((o) => o.env)))].sort();
}

/** GPU_TYPE's problem, if any; the plan (every config read) only for a type that is not a known one. */
async function gpuProblemOf(settings: Settings, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (!env.GPU_TYPE) return undefined;
  const { gpuType, resourceType } = gpuTypeFromEnv(env.GPU_TYPE);
  if (resourceType === undefined && knownGpuTypes.includes(gpuType)) return undefined;
  const { gpuTypeProblem } = await import('../select/plan.ts');
  return gpuTypeProblem(settings, env);
}

/** SCHEDULER's problem, if it names no registered scheduler (the registry loads only when it is set). */
async function schedulerProblemOf(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (!env.SCHEDULER?.trim()) return undefined;
  const { schedulerProblem } = await import('../scheduler/create.ts');
  return schedulerProblem(env);
}

/** Checks the run's environment; returns the settings and warnings, or throws a user-input error. */
export async function checkRunEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<{ settings: Settings; warnings: string[] }> {
  const checked = await checkListingEnvironment(env);
  const { checkOutputPath } = await import('./output-path.ts');
  checkOutputPath(checked.settings.outputPath);
  return checked;
}

/** What decides which tests a listing shows and how: all of checkRunEnvironment's checks but OUTPUT_PATH's. */
export async function checkListingEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<{ settings: Settings; warnings: string[] }> {
  const problems: string[] = [];
  let settings: Settings | undefined;
  try {
    settings = readSettings(env);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    problems.push(...err.problems);
  }
  const scheduler = await schedulerProblemOf(env);
  if (scheduler) problems.unshift(scheduler);
  const forced = forcedVariables(env);
  if (forced !== 'all' && forced.size > 0) {
    const known = await overridableVariables();
    const unknown = [...forced].filter((name) => !known.includes(name));
    if (unknown.length > 0) {
      problems.push(`DISAGG_FORCE_ENV=${JSON.stringify(env.DISAGG_FORCE_ENV)}: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not a variable that fills config values; expected all, or names among ${known.join(', ')}`);
    }
  }
  if (problems.length > 0 || !settings) throw new SettingsError(problems);
  const gpuProblem = await gpuProblemOf(settings, env);
  if (gpuProblem) throw new SettingsError([gpuProblem]);
  if (settings.testList) readTestList(settings.testList, settings.workDir);
  return { settings, warnings: settings.batchSizeWarning ? [settings.batchSizeWarning] : [] };
}
