// Values the environment fills before submission (framework/config/resolve.ts applies them with
// its one precedence: a missing, empty or `<placeholder>` value is filled; an explicit value wins
// unless the variable is forced with DISAGG_FORCE_ENV).
import path from 'node:path';
import type { EnvOverride } from '../../contract/test-type.ts';
import { filledValue } from '../../../runners/common/placeholder.ts';
import { commandEnvVars, commandKinds } from './job/commands.ts';

function section(config: Record<string, unknown>, name: string): Record<string, unknown> {
  const value = config[name];
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}

/** A file name relative to a folder variable; an absolute name stands as it is. */
const under = (dir: string, file: string) => (path.posix.isAbsolute(file) ? file : path.posix.join(dir, file));

export const servingEnvOverrides: EnvOverride[] = [
  { path: ['slurm', 'partition'], env: 'SLURM_PARTITION' },
  { path: ['slurm', 'account'], env: 'SLURM_ACCOUNT' },
  { path: ['environment', 'container_image'], env: 'CONTAINER_IMAGE' },
  // Unset: the job derives the mounts as upstream does (job/container-mounts.ts).
  { path: ['environment', 'container_mount'], env: 'CONTAINER_MOUNT' },
  {
    // MODEL_DIR/<metadata.model_dir_name>, or MODEL_DIR itself when the config names no folder.
    path: ['environment', 'model_path'],
    env: 'MODEL_DIR',
    compose: (dir, config) => {
      const name = filledValue(section(config, 'metadata').model_dir_name);
      return name ? under(dir, name) : dir;
    },
  },
  {
    // DATASET_DIR/<metadata.dataset_file> (the real configs' place), else the benchmark's own
    // relative file name; nothing to join means nothing is filled.
    path: ['benchmark', 'dataset_file'],
    env: 'DATASET_DIR',
    compose: (dir, config) => {
      const file = filledValue(section(config, 'metadata').dataset_file) ?? filledValue(section(config, 'benchmark').dataset_file);
      return file ? under(dir, file) : undefined;
    },
  },
  { path: ['environment', 'work_dir'], env: 'SCRIPT_DIR' },
  // Upstream's accuracy configs leave `HF_HOME: <hf_home_path>` for HF_HOME_DIR (utils/common.py).
  { path: ['accuracy', 'env_var', 'HF_HOME'], env: 'HF_HOME_DIR' },
  // Replace the serving stack's commands for a whole run (job/commands.ts).
  ...commandKinds.map((kind): EnvOverride => ({ path: ['commands', kind], env: commandEnvVars[kind] })),
];
