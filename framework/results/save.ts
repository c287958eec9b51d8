// Everything one finished test leaves behind: its CSV rows (dashboards) and its results.json
// record (reports, comparisons). Returns the files written.
import { hostname } from 'node:os';
import type { PlannedTest } from '../select/plan.ts';
import { knownGpuTypes, type GpuDetection } from '../select/gpu.ts';
import type { Settings } from '../settings.ts';
import type { TestRun } from '../jobs/session.ts';
import { testType } from '../types/registry.ts';
import { appendPerfRows, perfRowsFor } from './csv.ts';
import { saveTestRecord, type RecordRegression, type RecordRunContext, type TestRecord } from './json.ts';
import { testLogDir } from '../jobs/job-manager.ts';

export interface SaveInput {
  settings: Settings;
  gpu: GpuDetection;
  test: PlannedTest;
  run: TestRun;
  /** The performance history's part (framework/history/test-check.ts): run context, regression check. */
  history?: { run: RecordRunContext; regression?: RecordRegression; failures: string[] };
}

/** The results.json record of a finished test, before anything is written. */
export function testRecordOf({ settings, gpu, test, run }: SaveInput): TestRecord {
  const start = new Date(run.startedAt);
  const end = new Date(run.endedAt);
  return {
    testId: test.id,
    type: test.testType,
    category: test.category,
    configPath: test.displayFile,
    jobId: run.jobId ?? null,
    schedulerState: run.status.state,
    verdict: run.passed ? 'passed' : 'failed',
    failures: run.failures,
    metrics: run.metrics,
    timing: { start: start.toISOString(), end: end.toISOString(), durationSec: (run.endedAt - run.startedAt) / 1000 },
    host: hostname(),
    gpuType: gpu.gpuType,
    logDir: testLogDir(settings.outputPath, test.id),
  };
}

export async function saveTestResult(input: SaveInput): Promise<string[]> {
  const { settings, gpu, test, run, history } = input;
  const timing = { start: new Date(run.startedAt), end: new Date(run.endedAt), durationSec: (run.endedAt - run.startedAt) / 1000 };
  const files: string[] = [];
  const config = test.resolved?.config ?? {};
  const record = testRecordOf(input);
  if (history) {
    record.run = history.run;
    if (history.regression) record.regression = history.regression;
    // A regression fails the test (DISAGG_REGRESSION=fail) without making its numbers untrue: its
    // CSV rows are still written below, as upstream still uploads a regressive run's data.
    if (history.failures.length > 0) {
      record.verdict = 'failed';
      record.failures = [...record.failures, ...history.failures];
    }
  }
  // results.json first: a run killed between the two writes is re-saved on RESUME, and only
  // results.json knows how to replace a record (the CSV would get its rows twice).
  files.push(await saveTestRecord(settings.outputPath, record));
  if (run.passed && run.metrics.length > 0) {
    const info = testType(test.testType)?.csvInfo?.(config) ?? {};
    const clocks = gpu.gpuType ? knownGpuTypes[gpu.gpuType] : undefined;
    const rows = perfRowsFor({ name: test.id, ...info }, run.metrics, timing, {
      smClk: clocks?.smClockMHz,
      memClk: clocks?.memClockMHz,
    });
    files.push(await appendPerfRows(settings.outputPath, rows));
  }
  return files;
}
