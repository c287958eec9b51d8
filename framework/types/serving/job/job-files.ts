// Names of the files a disaggregated-serving job writes into its log folder (the reference's
// names, which the extractors and existing users' scripts look for).
import type { Role } from './allocation.ts';
import { JOB_SCRIPT_FILE } from '../../../scheduler/log-folder.ts';

export const jobFiles = {
  script: JOB_SCRIPT_FILE,
  ctxConfig: 'ctx_config.yaml',
  genConfig: 'gen_config.yaml',
  serverConfig: 'server_config.yaml',
  allocations: 'allocations.json',
  envVars: 'env_vars.json',
  containerLaunch: '1_container_launch.log',
  server: (role: Role, index: number) => `3_output_${role}_${index}.log`,
  router: '4_output_server.log',
  wait: '5_wait_server.log',
  bench: '6_bench.log',
  accuracy: (task: string) => `7_accuracy_eval_${task}.log`,
  /** Written last, only when every step succeeded. */
  done: 'job_done.txt',
} as const;
