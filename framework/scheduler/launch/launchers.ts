// The built-in launchers, one registration line each (docs/extending.md: a launcher is one file
// and one line here, or a registerLauncher call in your own code). Code that looks a launcher up
// imports it from here, so that the built-in ones are registered first.
import { registerLauncher } from './registry.ts';
import { srunLauncher } from './srun.ts';
import { localLauncher } from './local.ts';
import { mpirunLauncher } from './mpirun.ts';
import { gridEngineLauncher } from './gridengine.ts';

registerLauncher(srunLauncher);
registerLauncher(localLauncher);
registerLauncher(mpirunLauncher);
registerLauncher(gridEngineLauncher);

export { findLauncher, launcherNamed, launcherNames } from './registry.ts';
