// What an extension's register(api) is given (framework/config/extensions.ts): the registries it
// may add to and the few things a scheduler or launcher needs of the core. Loaded only when
// WORK_DIR/disagg-bench.yaml names extensions, so a run or listing without any never loads the
// registries' modules for it.
import { registerScheduler } from '../scheduler/registry.ts';
import { SchedulerError } from '../scheduler/scheduler.ts';
import { jobOutputFiles } from '../scheduler/log-folder.ts';
import { registerLauncher } from '../scheduler/launch/registry.ts';
import { registerExtractor } from '../metrics/extractors/index.ts';
import { registerTestType } from '../contract/extension-types.ts';
import { RANK_VARIABLES } from '../../runners/common/rank-variables.ts';

export const extensionApi = {
  registerScheduler,
  registerLauncher,
  registerExtractor,
  /** A TestType object (framework/contract/test-type.ts): its configs under test_configs/<name>/ are a Vitest project. */
  registerTestType,
  /** The error a scheduler raises for a command that failed for good. */
  SchedulerError,
  /** Where a job's stdout and stderr go in its log folder (what Scheduler.logs returns). */
  jobOutputFiles,
  /** The names a launcher's `rankVariables` may take. */
  rankVariableNames: RANK_VARIABLES.map((v) => v.name),
} as const;

export type ExtensionApi = typeof extensionApi;
