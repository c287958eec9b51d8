// One `nixl` config run the way the framework runs a test: the YAML written into the job's own
// folder, read back and validated by the nixl type (its schema and rules), the job built by the
// type's job builder, run on the local scheduler (ranks under its srun shim), its metrics read by
// the type's extractors and judged by its verdict. Everything the job wrote stays in the folder:
// the config, job.sh, the scheduler's output, the ranks' logs.
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { nixlType } from '../../framework/types/nixl.ts';
import { readYamlFileSync } from '../../framework/config/load.ts';
import { validateConfig } from '../../framework/config/validate.ts';
import { extractMetrics } from '../../framework/metrics/log-parser.ts';
import type { Metric } from '../../framework/metrics/metric.ts';
import type { JobStatus, Scheduler } from '../../framework/scheduler/scheduler.ts';

export const CONFIG_FILE = 'config.yaml';

export interface ConfigJob {
  status: JobStatus;
  logDir: string;
  metrics: Metric[];
  /** The extractors' problems and the verdict's failures. */
  problems: string[];
  /** The job's stdout and stderr, as the scheduler kept them. */
  out: string;
}

/** Runs `config` as the test `name` in `logDir` (emptied first); `repoRoot` is the package the job runs. */
export async function runConfigJob(scheduler: Scheduler, name: string, config: Record<string, unknown>, logDir: string, repoRoot: string): Promise<ConfigJob> {
  fs.rmSync(logDir, { recursive: true, force: true });
  fs.mkdirSync(logDir, { recursive: true });
  const file = path.join(logDir, CONFIG_FILE);
  fs.writeFileSync(file, stringify(config));
  const parsed = readYamlFileSync(file, file);
  const issues = [...parsed.issues, ...validateConfig(nixlType, parsed, file, file, 'perf')];
  if (issues.length > 0) throw new Error(`${file}: ${issues.map((i) => `${i.path ?? ''} ${i.message}`.trim()).join('; ')}`);
  const data = parsed.data as Record<string, unknown>;
  const built = await nixlType.buildJob({ testId: name, category: 'perf', config: data, logDir, workDir: repoRoot, packageRoot: repoRoot, gpuType: undefined });
  const request = { name, scriptPath: built.scriptPath, logDir, workDir: repoRoot, resources: built.resources, env: built.env };
  const id = await scheduler.submit(request);
  let status: JobStatus | undefined;
  while (!status?.terminal) {
    await sleep(500);
    status = (await scheduler.poll([id])).get(id) ?? status;
  }
  const logs = scheduler.logs(id, request);
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');
  const extracted = await extractMetrics(logDir, nixlType.metrics(data, 'perf'));
  const verdict = nixlType.verdict({ testId: name, category: 'perf', config: data, logDir, ...extracted });
  return { status: status!, logDir, metrics: extracted.metrics, problems: [...extracted.problems, ...verdict.failures], out: read(logs.stdout) + read(logs.stderr) };
}
