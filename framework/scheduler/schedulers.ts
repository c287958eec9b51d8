// The built-in schedulers, one registration line each. The order a run with SCHEDULER unset tries
// them in is each registration's autoSelect rank (SLURM when sbatch is on PATH, then Grid Engine
// when qsub is, then this host), not this file's order. A new built-in scheduler is one file
// exporting its SchedulerDefinition and one line here (docs/extending.md).
import { registerScheduler } from './registry.ts';
import { slurmDefinition } from './slurm.ts';
import { localDefinition } from './local.ts';
import { gridEngineDefinition } from './gridengine.ts';

registerScheduler(slurmDefinition);
registerScheduler(localDefinition);
registerScheduler(gridEngineDefinition);
