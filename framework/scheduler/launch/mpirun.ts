// Open MPI's mpirun: the step's tasks started over the step's nodes, so many per node. The node
// list names hosts (each with the slots the allocation gives it); the process-management interface
// and containers are the MPI installation's own (none asked here).
import type { Launcher } from './launcher.ts';

export const mpirunLauncher: Launcher = {
  name: 'mpirun',
  description: 'mpirun (Open MPI): -np tasks, so many per node, on the step\'s hosts',
  startsTasks: true,
  containers: false,
  rankVariables: 'openmpi',
  prefix: (step) => [
    'mpirun', '-np', step.tasks, '--map-by', `ppr:${step.tasksPerNode}:node`,
    ...(step.nodeList !== undefined ? ['--host', step.nodeList] : []),
  ],
};
