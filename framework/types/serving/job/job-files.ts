// Names of the files a disaggregated-serving job writes into its log folder whatever its engine
// (the reference's names, which the extractors and existing users' scripts look for); the
// engine's own (worker configs, router config, server logs) are in its table (../engines/).
import { JOB_SCRIPT_FILE } from '../../../scheduler/log-folder.ts';

export const jobFiles = {
  script: JOB_SCRIPT_FILE,
  allocations: 'allocations.json',
  envVars: 'env_vars.json',
  containerLaunch: '1_container_launch.log',
  wait: '5_wait_server.log',
  bench: '6_bench.log',
  accuracy: (task: string) => `7_accuracy_eval_${task}.log`,
  /** Written last, only when every step succeeded. */
  done: 'job_done.txt',
} as const;
