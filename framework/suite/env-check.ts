// Everything a run takes from the environment, checked in Vitest's main process before any test
// file loads and before anything is submitted: the variables (settings.ts), DISAGG_FORCE_ENV's
// names, the test list, OUTPUT_PATH. A user's mistake is one line per problem, never a stack.
// The test types and the plan (most of the framework's modules) load only for the checks that need
// them, DISAGG_FORCE_ENV naming variables and GPU_TYPE naming no known GPU: a run or a listing
// without either pays nothing for them in the main process.
import { readSettings, SettingsError, type Settings } from '../settings.ts';
import { forcedVariables } from '../config/resolve.ts';
import { readTestList, TestListError } from '../select/testlist.ts';
import { knownGpuTypes, gpuTypeFromEnv } from '../select/gpu.ts';
import { checkOutputPath, OutputPathError } from './output-path.ts';
import { schedulerProblem } from '../scheduler/create.ts';

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

/** Checks the run's environment; returns the settings and warnings, or throws a user-input error. */
export async function checkRunEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<{ settings: Settings; warnings: string[] }> {
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
  checkOutputPath(settings.outputPath);
  return { settings, warnings: settings.batchSizeWarning ? [settings.batchSizeWarning] : [] };
}
