// SLURM's srun: one step of the batch job on the step's nodes, with its task counts. The local
// scheduler runs the same words through its srun stand-in (../local-bin/srun), which starts the
// tasks on this host.
import type { Word } from '../../../runners/common/shell.ts';
import type { Launcher, LaunchStep } from './launcher.ts';

/** pyxis's options for the step's container. */
function containerOptions(step: LaunchStep): Word[] {
  const c = step.container;
  if (!c) return [];
  return [
    `--container-image=${c.image}`,
    `--container-name=${c.name}`,
    ...(c.mounts ? [`--container-mounts=${c.mounts}`] : []),
  ];
}

export const srunLauncher: Launcher = {
  name: 'srun',
  description: 'srun: a step of the SLURM job (pyxis for containers)',
  startsTasks: true,
  containers: true,
  rankVariables: 'slurm',
  prefix: (step) => [
    'srun',
    // Servers keep their resources while clients run beside them.
    ...(step.sharesResources ? ['--overlap'] : []),
    ...(step.nodeList !== undefined ? ['--nodelist', step.nodeList] : []),
    '--nodes', step.nodes, '--ntasks', step.tasks, '--ntasks-per-node', step.tasksPerNode,
    ...(step.pmi ? [`--mpi=${step.pmi}`] : []),
    ...(step.endsOnTaskFailure ? ['--kill-on-bad-exit=1'] : []),
    ...containerOptions(step),
  ],
};
