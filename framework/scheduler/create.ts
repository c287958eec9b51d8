// Which scheduler a run uses: replay in DEBUG_MODE, else the one SCHEDULER names, else the first
// scheduler available on this host, in the order the registrations' autoSelect ranks say.
import type { Settings } from '../settings.ts';
import type { Scheduler } from './scheduler.ts';
import { ReplayScheduler } from './replay.ts';
import { autoSelectOrder, autoSelectWords, findScheduler, schedulerDefinition, schedulerNames, type SchedulerDefinition } from './registry.ts';
import type { PartitionGpus } from './slurm-gpus.ts';
import './schedulers.ts';

type RunSettings = Pick<Settings, 'debugMode' | 'scheduler' | 'outputPath' | 'debugJobId'>;

/** The name of the scheduler a run uses ('replay' in DEBUG_MODE). */
export function schedulerKind(settings: Pick<Settings, 'debugMode' | 'scheduler'>, env: NodeJS.ProcessEnv = process.env): string {
  if (settings.debugMode) return 'replay';
  return chosen(settings, env).name;
}

function chosen(settings: Pick<Settings, 'scheduler'>, env: NodeJS.ProcessEnv): SchedulerDefinition {
  if (settings.scheduler) return schedulerDefinition(settings.scheduler);
  const found = autoSelectOrder().find((d) => d.autoSelect.available(env));
  // No scheduler available: schedulerDefinition('') throws the registry's error naming every one.
  return found ?? schedulerDefinition('', 'SCHEDULER (unset, and no registered scheduler is available here)');
}

/**
 * SCHEDULER's value checked against the registry, for the run's environment check: one line, in
 * the settings' words, or undefined when it names a registered scheduler (or is unset).
 */
export function schedulerProblem(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const raw = env.SCHEDULER?.trim();
  if (!raw) return undefined;
  const problem = schedulerNameProblem(raw);
  return problem && `SCHEDULER=${JSON.stringify(raw)}: ${problem} (the scheduler${unsetWords()})`;
}

/** A scheduler's name checked against the registry (`--scheduler NAME`): `expected slurm or local`, or undefined. */
export function schedulerNameProblem(name: string): string | undefined {
  return findScheduler(name) ? undefined : `expected ${schedulerNames().join(' or ')}`;
}

/** What --scheduler's help says: every registered name and the choice made without one. */
export function schedulerHelp(): string {
  const auto = autoSelectWords();
  return `${schedulerNames().join(' or ')}${auto ? ` (default: ${auto})` : ''}`;
}

function unsetWords(): string {
  const auto = autoSelectWords();
  return auto ? `; unset: ${auto}` : '';
}

export async function createScheduler(settings: RunSettings, env: NodeJS.ProcessEnv = process.env): Promise<Scheduler> {
  if (settings.debugMode) return new ReplayScheduler(settings.debugJobId);
  return chosen(settings, env).create({ settings, env });
}

/** Whether the run's jobs run on this host (its scheduler's jobsRunHere), so that this host's GPU is theirs. */
export function jobsRunHere(settings: Pick<Settings, 'debugMode' | 'scheduler'>, env: NodeJS.ProcessEnv = process.env): boolean {
  return !settings.debugMode && chosen(settings, env).jobsRunHere === true;
}

/**
 * When the run's scheduler can tell which GPU type its nodes have (SLURM: the partition's gres,
 * SLURM_PARTITION's partition or the default one), a probe asking it, for GPU detection on a node
 * without GPUs; else undefined.
 */
export function slurmGpuProbe(settings: Pick<Settings, 'debugMode' | 'scheduler'>, env: NodeJS.ProcessEnv = process.env): (() => Promise<PartitionGpus>) | undefined {
  if (settings.debugMode) return undefined;
  return chosen(settings, env).gpuProbe?.(env);
}
