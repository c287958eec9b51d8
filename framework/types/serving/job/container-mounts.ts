// The container's mounts when a config leaves environment.container_mount to the framework (empty
// or `<container_mount>`, as upstream's configs do): derived as upstream's utils/common.py
// (EnvManager.get_container_mount) derives them: every folder the job reads or writes, mounted at
// the same path (WORK_DIR, the scripts, the model's and the dataset's folders, OUTPUT_PATH), and a
// 640G /dev/shm for Kimi-K2 models ("otherwise host memory OOM", upstream says).
import path from 'node:path';
import type { ServingConfig } from '../serving-config.ts';
import { isPlaceholder } from '../../../../runners/common/placeholder.ts';

export interface MountInput {
  config: ServingConfig;
  /** WORK_DIR: test_configs/ and test lists. */
  workDir: string;
  /** This package (serve-bench and the job's helpers run from it): upstream's SCRIPT_DIR. */
  packageRoot: string;
  /** OUTPUT_PATH/slurm_logs/<test id>. */
  logDir: string;
}

/** True when the config asks the framework to choose the mounts. */
export function mountsLeftToFramework(value: string | undefined): boolean {
  return value === undefined || value.trim() === '' || isPlaceholder(value);
}

const folderOf = (file: string | undefined) =>
  file && !isPlaceholder(file) && path.posix.isAbsolute(file) ? path.posix.dirname(file) : undefined;

/** `a:a,b:b,...` in upstream's order, without repeats. */
export function derivedContainerMounts(input: MountInput): string {
  const outputPath = path.dirname(path.dirname(input.logDir));
  const folders = [
    input.workDir,
    input.packageRoot,
    folderOf(input.config.environment.model_path),
    outputPath,
    folderOf(input.config.benchmark.dataset_file),
  ].filter((f): f is string => f !== undefined);
  const mounts = [...new Set(folders)].map((f) => `${f}:${f}`);
  if (input.config.metadata.model_name.includes('kimi-k2')) mounts.push('tmpfs:/dev/shm:size=640G');
  return mounts.join(',');
}
