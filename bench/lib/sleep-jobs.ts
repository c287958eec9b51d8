// The jobs of bench/orchestration.ts: N copies of bench/fixtures/sleep-job.yaml in a WORK_DIR
// (for the framework), and the same jobs built by the same job builder with the same sbatch
// arguments, one arguments file per job (for the shell baseline).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { disaggType } from '../../framework/types/disagg.ts';
import { resolveConfig } from '../../framework/config/resolve.ts';
import { sbatchArgs } from '../../framework/scheduler/slurm.ts';
import { testLogDir } from '../../framework/scheduler/log-folder.ts';
import { benchDir } from './report.ts';

export const SLEEP_JOB_FIXTURE = path.join(benchDir, 'fixtures', 'sleep-job.yaml');

export interface SleepJob {
  /** The test id the framework gives the config (disagg_perf_sleep_07). */
  id: string;
  config: Record<string, unknown>;
}

/** The fixture with its run-specific values: the health stand-in's port and the sleep time. */
export function sleepJobConfig(routerPort: number, sleepSec: number): Record<string, unknown> {
  const config = parse(readFileSync(SLEEP_JOB_FIXTURE, 'utf8')) as {
    launch: { router_port: number };
    commands: { client: string[] };
  };
  config.launch.router_port = routerPort;
  config.commands.client[config.commands.client.length - 1] = String(sleepSec);
  return config as unknown as Record<string, unknown>;
}

/** Writes `count` configs to WORK_DIR/test_configs/disagg/perf/sleep_NN.yaml; returns them in test order. */
export function writeSleepConfigs(workDir: string, count: number, config: Record<string, unknown>): SleepJob[] {
  const dir = path.join(workDir, 'test_configs', 'disagg', 'perf');
  mkdirSync(dir, { recursive: true });
  const width = String(count - 1).length;
  const jobs: SleepJob[] = [];
  for (let i = 0; i < count; i++) {
    const stem = `sleep_${String(i).padStart(width, '0')}`;
    writeFileSync(path.join(dir, `${stem}.yaml`), stringify(config));
    jobs.push({ id: `disagg_perf_${stem}`, config });
  }
  return jobs;
}

/**
 * Builds each job as the framework would (same builder, same environment overrides, GPU type) into
 * `outputPath/slurm_logs/<id>/` and writes its sbatch arguments to `<that folder>/sbatch.args`.
 * Returns the arguments files in test order.
 */
export async function writeBaselineJobs(
  jobs: SleepJob[],
  options: { outputPath: string; workDir: string; packageRoot: string; gpuType: string; env: NodeJS.ProcessEnv },
): Promise<string[]> {
  const files: string[] = [];
  for (const job of jobs) {
    const logDir = testLogDir(options.outputPath, job.id);
    const config = resolveConfig(job.config, disaggType.envOverrides, options.env).config;
    const built = await disaggType.buildJob({
      testId: job.id, category: 'perf', config, logDir, workDir: options.workDir,
      packageRoot: options.packageRoot, gpuType: options.gpuType,
    });
    // sbatch takes a job's own variables from its environment: a plain loop of sbatch lines cannot.
    if (built.env && Object.keys(built.env).length > 0) throw new Error(`${job.id}: the job builder asks for job variables; the baseline cannot pass them`);
    const args = sbatchArgs({ name: job.id, scriptPath: built.scriptPath, logDir, workDir: options.workDir, resources: built.resources });
    const file = path.join(logDir, 'sbatch.args');
    writeFileSync(file, args.join('\n') + '\n');
    files.push(file);
  }
  return files;
}

/** The job's own end of work (epoch s): the last `work_end_s=` its client printed to 6_bench.log. */
export function workEnd(outputPath: string, id: string): number | undefined {
  try {
    const text = readFileSync(path.join(testLogDir(outputPath, id), '6_bench.log'), 'utf8');
    const all = [...text.matchAll(/work_end_s=([0-9.]+)/g)];
    return all.length ? Number(all[all.length - 1][1]) : undefined;
  } catch {
    return undefined;
  }
}
