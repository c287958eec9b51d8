// The built-in schedulers, registered in the order a run with SCHEDULER unset tries them: SLURM
// when sbatch is on PATH, else this host. A new built-in scheduler is one file exporting its
// SchedulerDefinition and one line here (docs/extending.md).
import { registerScheduler } from './registry.ts';
import { slurmDefinition } from './slurm.ts';
import { localDefinition } from './local.ts';

registerScheduler(slurmDefinition);
registerScheduler(localDefinition);
