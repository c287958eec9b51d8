// The launchers a job can use, by name, registered as schedulers are (../registry.ts): the
// built-in ones in launchers.ts, one line each; one written elsewhere (a site's own, a test's
// stand-in) calls registerLauncher before the run builds its jobs.
import { SchedulerError } from '../scheduler.ts';
import type { Launcher } from './launcher.ts';
import { RANK_VARIABLES, rankVariablesNamed } from '../../../runners/common/rank-variables.ts';

const launchers = new Map<string, Launcher>();

const NAME = /^[a-z][a-z0-9-]*$/;

/** Registers a launcher; a second one under a registered name is refused. */
export function registerLauncher(launcher: Launcher): void {
  if (!NAME.test(launcher.name)) {
    throw new SchedulerError(`launcher name ${JSON.stringify(launcher.name)}: expected lower-case letters, digits and dashes`, 'registerLauncher');
  }
  if (launcher.rankVariables !== undefined && !rankVariablesNamed(launcher.rankVariables)) {
    throw new SchedulerError(
      `launcher ${launcher.name}: rankVariables ${JSON.stringify(launcher.rankVariables)} names no row of runners/common/rank-variables.ts; expected one of ${RANK_VARIABLES.map((v) => v.name).join(', ')}`,
      'registerLauncher',
    );
  }
  const known = launchers.get(launcher.name);
  if (known && known !== launcher) {
    throw new SchedulerError(`a launcher named ${launcher.name} is registered already (${known.description})`, 'registerLauncher');
  }
  launchers.set(launcher.name, launcher);
}

/** Removes a registration (a test's stand-in, once its tests end). */
export function unregisterLauncher(name: string): void {
  launchers.delete(name);
}

/** Every registered launcher's name, in registration order. */
export function launcherNames(): string[] {
  return [...launchers.keys()];
}

export function findLauncher(name: string): Launcher | undefined {
  return launchers.get(name);
}

/** The launcher of that name; an unknown name is one error listing the known ones. */
export function launcherNamed(name: string, where = 'launcher'): Launcher {
  const found = launchers.get(name);
  if (found) return found;
  throw new SchedulerError(`${where}: no launcher is registered as ${JSON.stringify(name)}; expected one of ${launcherNames().join(', ')}`, where);
}
