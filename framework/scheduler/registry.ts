// The schedulers a run can use, by name, as ReFrame registers its backends: each is one definition
// (its name, what it can do, how to make one) registered once. The built-in ones are registered in
// schedulers.ts; a scheduler written elsewhere (a site's own, a test's stand-in) calls
// registerScheduler before the run opens its session. Everything above this layer asks the
// registry or the Scheduler interface, never compares a scheduler's name.
import type { Settings } from '../settings.ts';
import { SchedulerError, type Scheduler, type SchedulerCapabilities } from './scheduler.ts';
import type { PartitionGpus } from './slurm-gpus.ts';

/** What a factory gets: the run's settings (OUTPUT_PATH for state, DEBUG_JOB_ID) and its environment. */
export interface SchedulerContext {
  settings: Pick<Settings, 'outputPath' | 'debugJobId'>;
  env: NodeJS.ProcessEnv;
}

export interface SchedulerDefinition {
  /** SCHEDULER=<name>; also what the ledger records for each job it ran. */
  name: string;
  /** One line for `--help` and error messages. */
  description: string;
  capabilities: SchedulerCapabilities;
  /**
   * The launcher its jobs start their steps with unless a config names another (launch/: srun,
   * local, mpirun, or one registered elsewhere).
   */
  launcher: string;
  /**
   * Whether a run with SCHEDULER unset may choose it by itself, and before which others. Absent:
   * it runs only when SCHEDULER names it.
   */
  autoSelect?: AutoSelect;
  /** A new scheduler. Synchronous, so that a signal handler can make one to cancel with. */
  create: (context: SchedulerContext) => Scheduler;
  /**
   * Which GPU type the nodes its jobs will get have, asked of the scheduler (a login node has no
   * GPU to ask): for GPU detection. Absent: the scheduler cannot tell.
   */
  gpuProbe?: (env: NodeJS.ProcessEnv) => () => Promise<PartitionGpus>;
  /**
   * Its jobs run on this host (the local scheduler): the GPU found here, or the absence of one, is
   * theirs, so no GPU type is assumed for a host without one.
   */
  jobsRunHere?: boolean;
}

/** A scheduler's place in the choice a run makes when SCHEDULER is unset. */
export interface AutoSelect {
  /**
   * Lower ranks are tried first (SLURM 10, Grid Engine 20, this host 100): the order is this
   * number, never the order modules happened to register in.
   */
  rank: number;
  /** True when this host can submit to it (its submit command is on PATH...). */
  available: (env: NodeJS.ProcessEnv) => boolean;
  /** When `available` says yes, in words for messages ("sbatch is on PATH"); absent: always. */
  when?: string;
}

const definitions = new Map<string, SchedulerDefinition>();

const NAME = /^[a-z][a-z0-9-]*$/;

/** Registers a scheduler; a second definition under a registered name is refused. */
export function registerScheduler(definition: SchedulerDefinition): void {
  if (!NAME.test(definition.name)) {
    throw new SchedulerError(`scheduler name ${JSON.stringify(definition.name)}: expected lower-case letters, digits and dashes`, 'registerScheduler');
  }
  const known = definitions.get(definition.name);
  if (known && known !== definition) {
    throw new SchedulerError(`a scheduler named ${definition.name} is registered already (${known.description})`, 'registerScheduler');
  }
  const rank = definition.autoSelect?.rank;
  if (rank !== undefined && !Number.isFinite(rank)) {
    throw new SchedulerError(`scheduler ${definition.name}: autoSelect.rank ${rank} is not a number`, 'registerScheduler');
  }
  definitions.set(definition.name, definition);
}

/** Removes a registration (a test's stand-in, once its tests end). */
export function unregisterScheduler(name: string): void {
  definitions.delete(name);
}

/** Every registered scheduler, in registration order. */
export function registeredSchedulers(): SchedulerDefinition[] {
  return [...definitions.values()];
}

/** The names SCHEDULER may take, in registration order: for --help, checks and messages. */
export function schedulerNames(): string[] {
  return [...definitions.keys()];
}

/**
 * The schedulers a run with SCHEDULER unset may choose, in the order it tries them (by
 * `autoSelect.rank`; a tie keeps registration order).
 */
export function autoSelectOrder(): Array<SchedulerDefinition & { autoSelect: AutoSelect }> {
  return registeredSchedulers()
    .filter((d): d is SchedulerDefinition & { autoSelect: AutoSelect } => d.autoSelect !== undefined)
    .sort((a, b) => a.autoSelect.rank - b.autoSelect.rank);
}

/** The choice SCHEDULER=unset makes, in words: `slurm when sbatch is on PATH, then local`. */
export function autoSelectWords(): string {
  return autoSelectOrder().map((d) => (d.autoSelect.when ? `${d.name} when ${d.autoSelect.when}` : d.name)).join(', then ');
}

export function findScheduler(name: string): SchedulerDefinition | undefined {
  return definitions.get(name);
}

/** The definition of a scheduler by name; an unknown name is one error listing the known ones. */
export function schedulerDefinition(name: string, where = 'SCHEDULER'): SchedulerDefinition {
  const found = definitions.get(name);
  if (found) return found;
  throw new SchedulerError(
    `${where}=${JSON.stringify(name)}: no scheduler is registered under that name; expected one of ${[...definitions.keys()].join(', ')}`,
    where,
  );
}

/**
 * The launcher a scheduler's jobs use by default (its registration's). A scheduler not registered
 * (replay, a test's recording stand-in) runs the job scripts SLURM's way: srun.
 */
export function defaultLauncher(schedulerName: string): string {
  return definitions.get(schedulerName)?.launcher ?? 'srun';
}

/**
 * Whether jobs of the named scheduler live on after their run (see SchedulerCapabilities). A name
 * no longer registered (a ledger written with a stand-in) counts as no: nothing here can reach it.
 */
export function jobsOutliveRun(name: string): boolean {
  return definitions.get(name)?.capabilities.jobsOutliveRun ?? false;
}
