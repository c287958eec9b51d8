// Grid Engine's way to start a step's tasks: qrsh -inherit on the hosts of the job's parallel
// environment, through the task starter beside the backend (../gridengine-bin/qrsh-tasks, named by
// its path: Grid Engine gives a job its own PATH, not the submitter's). Grid Engine gives a
// parallel job hosts, not ranks: the starter tells each task its rank (rank-variables.ts, row
// `gridengine`). No containers.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Launcher } from './launcher.ts';

/** The task starter; its folder must be reachable from every host of the cell (a shared install). */
export const qrshTasks = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'gridengine-bin', 'qrsh-tasks');

export const gridEngineLauncher: Launcher = {
  name: 'gridengine',
  description: "qrsh -inherit (Grid Engine): the step's tasks on the job's hosts, so many per node",
  startsTasks: true,
  containers: false,
  rankVariables: 'gridengine',
  prefix: (step) => [
    qrshTasks, '--nodes', step.nodes, '--tasks', step.tasks, '--tasks-per-node', step.tasksPerNode,
    ...(step.nodeList !== undefined ? ['--hosts', step.nodeList] : []),
    ...(step.endsOnTaskFailure ? ['--kill-on-bad-exit'] : []),
  ],
};
