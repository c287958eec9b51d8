// Runs `vitest run --project nixl` as a child process on a WORK_DIR holding copies of this
// project's example nixl configs (and their matrices), with its own OUTPUT_PATH, and reads what
// the run left there: results.json records and CSV rows.
import { cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestRecord } from '../../framework/results/json.ts';
import { repoRoot, runSuite } from '../fixtures/reliability/suite-run.ts';

const examples = path.join(repoRoot, 'test_configs/nixl/perf');

export interface NixlSuiteRun {
  exitCode?: number;
  output: string;
  outputPath: string;
  records: TestRecord[];
  /** CSV lines after the header. */
  csvRows: string[];
}

/** `scratch`/work holding copies of the named example configs (file stems) and their matrices; returns that WORK_DIR. */
export function workDirWithExamples(scratch: string, configs: readonly string[]): string {
  const workDir = path.join(scratch, 'work');
  const configDir = path.join(workDir, 'test_configs/nixl/perf');
  mkdirSync(configDir, { recursive: true });
  cpSync(path.join(examples, 'matrices'), path.join(configDir, 'matrices'), { recursive: true });
  for (const name of configs) cpSync(path.join(examples, `${name}.yaml`), path.join(configDir, `${name}.yaml`));
  return workDir;
}

/** Copies the named example configs and the matrices into a fresh WORK_DIR and runs the nixl project there. */
export async function runNixlSuite(configs: string[], scheduler: 'local' | 'slurm', env: Record<string, string | undefined> = {}): Promise<NixlSuiteRun> {
  const scratch = mkdtempSync(path.join(tmpdir(), `nixl-suite-${scheduler}-`));
  const workDir = workDirWithExamples(scratch, configs);
  const outputPath = path.join(scratch, 'out');
  // The examples name no GPU: the shared runner's GPU_TYPE (for disagg configs) is left unset.
  const run = await runSuite({ workDir, outputPath, scheduler, project: 'nixl', env: { GPU_TYPE: undefined, ...env }, timeoutMs: 300_000 });
  return { exitCode: run.exitCode, output: run.output, outputPath, records: run.records, csvRows: run.csvRows };
}

/** The record of a test, with the run's output as the message when it is missing. */
export function recordOf(run: NixlSuiteRun, testId: string): TestRecord {
  const record = run.records.find((r) => r.testId === testId);
  if (!record) throw new Error(`no results.json record for ${testId}; the run printed:\n${run.output}`);
  return record;
}

/** Metric values of a record by name, with their labels. */
export function valuesOf(record: TestRecord, name: string): { labels: Record<string, string | number>; value: number }[] {
  return record.metrics.filter((m) => m.name === name).map((m) => ({ labels: m.labels, value: m.value }));
}
