// No launcher: the step's command runs once, as it is, on the node the job script runs on (a
// serving config's `launch.launcher: direct`). Its task counts and nodes are the command's own
// business (an engine that starts its ranks itself); it has no containers.
import type { Launcher } from './launcher.ts';

export const localLauncher: Launcher = {
  name: 'local',
  description: 'the command as it is, once, on the node the job script runs on',
  startsTasks: false,
  containers: false,
  prefix: () => [],
};
