// The nixl job builder: the kind's rank command, its artefacts (configs, matrices) and job.sh
// written into the test's log folder, and what to ask the scheduler for.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BuiltJob, JobBuildContext } from '../../../contract/test-type.ts';
import { kindOf } from '../kinds.ts';
import { nixlConfig } from '../common.ts';
import { JOB_SCRIPT_FILE } from '../../../scheduler/log-folder.ts';
import { formatKeyPath } from '../../../config/issue.ts';
import { InputError } from '../../../../runners/common/errors.ts';
import { nixlResources, renderNixlJobScript } from './job-script.ts';
import { recheckAgainstValidation } from '../kinds/traffic-patterns.ts';

export const NIXL_TYPE = 'nixl';

/** The folder of a config of category `category`: kinds resolve relative paths (matrix files) against it. */
export function nixlConfigDir(workDir: string, category: string): string {
  return path.join(workDir, 'test_configs', NIXL_TYPE, category);
}

export async function buildNixlJob(ctx: JobBuildContext): Promise<BuiltJob> {
  const config = nixlConfig(ctx.config);
  const kind = kindOf(ctx.config);
  const configDir = nixlConfigDir(ctx.workDir, ctx.category);
  // The config was validated when the run was planned; the files it names (matrices) are read
  // again now, and what the job runs is checked again as it is copied (kinds/traffic-patterns.ts).
  const problems = recheckAgainstValidation(() => kind.rules(ctx.config, configDir));
  if (problems.length > 0) {
    const found = problems.map((p) => `${formatKeyPath(p.path)}: ${p.message}`).join('; ');
    throw new InputError(`the job cannot be built (config folder ${configDir}): ${found} (a file the config names changed since the config was validated); not run`, { file: configDir });
  }
  const rank = kind.rankCommand({ config: ctx.config, configDir, logDir: ctx.logDir, packageRoot: ctx.packageRoot });
  await mkdir(ctx.logDir, { recursive: true });
  for (const [name, text] of Object.entries(rank.artefacts ?? {})) {
    const file = path.join(ctx.logDir, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  const scriptPath = path.join(ctx.logDir, JOB_SCRIPT_FILE);
  await writeFile(scriptPath, renderNixlJobScript({ testId: ctx.testId, config, logDir: ctx.logDir, packageRoot: ctx.packageRoot, rank, launcher: ctx.launcher }));
  await chmod(scriptPath, 0o755);
  return { scriptPath, resources: nixlResources(config) };
}
