// Which scheduler a run uses: replay in DEBUG_MODE, else SCHEDULER=slurm|local, else slurm when
// sbatch is on PATH and local otherwise.
import path from 'node:path';
import type { Settings } from '../settings.ts';
import type { Scheduler } from './scheduler.ts';
import { ReplayScheduler } from './replay.ts';
import { slurmAvailable } from './slurm.ts';
import { partitionGpus, type PartitionGpus } from './slurm-gpus.ts';
import { filledValue } from '../../runners/common/placeholder.ts';

export function schedulerKind(settings: Settings): 'replay' | 'slurm' | 'local' {
  if (settings.debugMode) return 'replay';
  return settings.scheduler ?? (slurmAvailable() ? 'slurm' : 'local');
}

export async function createScheduler(settings: Settings): Promise<Scheduler> {
  const kind = schedulerKind(settings);
  if (kind === 'replay') return new ReplayScheduler(settings.debugJobId);
  if (kind === 'slurm') {
    const { SlurmScheduler } = await import('./slurm.ts');
    return new SlurmScheduler();
  }
  const { LocalScheduler } = await import('./local.ts');
  return new LocalScheduler({ stateDir: path.join(settings.outputPath, 'local-scheduler') });
}

/**
 * When the run submits to SLURM: a probe asking it which GPU type the partition's nodes have
 * (SLURM_PARTITION's, else the default partition), for GPU detection on a node without GPUs.
 */
export function slurmGpuProbe(settings: Settings, env: NodeJS.ProcessEnv = process.env): (() => Promise<PartitionGpus>) | undefined {
  if (schedulerKind(settings) !== 'slurm') return undefined;
  const partition = filledValue(env.SLURM_PARTITION);
  return () => partitionGpus(partition);
}
