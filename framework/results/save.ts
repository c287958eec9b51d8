// Everything one finished test leaves behind: its CSV rows (dashboards) and its results.json
// record (reports, comparisons). Returns the files written.
import { hostname } from 'node:os';
import type { PlannedTest } from '../select/plan.ts';
import { gpuForType, gpuResources, resourceTypeOf, type GpuDetection } from '../select/gpu.ts';
import type { Settings } from '../settings.ts';
import type { TestRun } from '../jobs/session.ts';
import { testType } from '../types/registry.ts';
import { appendPerfRows, csvMetrics, perfRowsFor } from './csv.ts';
import { saveTestRecord } from './json.ts';
import { testLogDir } from '../jobs/job-manager.ts';

export interface SaveInput {
  settings: Settings;
  gpu: GpuDetection;
  test: PlannedTest;
  run: TestRun;
}

export async function saveTestResult({ settings, gpu, test, run }: SaveInput): Promise<string[]> {
  // The GPU this test ran as: the run's, else its type's assumed one (upstream's GB200 for serving).
  const gpuOfTest = gpuForType(gpu, testType(test.testType)?.assumedGpuType);
  const start = new Date(run.startedAt);
  const end = new Date(run.endedAt);
  const timing = { start, end, durationSec: (run.endedAt - run.startedAt) / 1000 };
  const files: string[] = [];
  const config = test.resolved?.config ?? {};
  // results.json first: a run killed between the two writes is re-saved on RESUME, and only
  // results.json knows how to replace a record (the CSV would get its rows twice).
  files.push(
    await saveTestRecord(settings.outputPath, {
      testId: test.id,
      type: test.testType,
      category: test.category,
      configPath: test.displayFile,
      jobId: run.jobId ?? null,
      schedulerState: run.status.state,
      verdict: run.passed ? 'passed' : 'failed',
      failures: run.failures,
      metrics: run.metrics,
      timing: { start: start.toISOString(), end: end.toISOString(), durationSec: timing.durationSec },
      host: hostname(),
      gpuType: gpuOfTest.gpuType,
      logDir: testLogDir(settings.outputPath, test.id),
    }),
  );
  if (run.passed && run.metrics.length > 0) {
    const info = testType(test.testType)?.csvInfo?.(config, test.category, test.id) ?? {};
    const metrics = csvMetrics(run.metrics, info.metricNames, settings.csvExtraRows);
    const clocks = gpuOfTest.gpuType ? gpuResources(resourceTypeOf(gpuOfTest)) : undefined;
    // Upstream's result saver writes `lock_freq_*_mhz or 0`: 0 for a GPU without locked clocks.
    const rows = perfRowsFor({ name: info.rowName ?? test.id, ...info }, metrics, timing, {
      smClk: clocks ? (clocks.smClockMHz ?? 0) : undefined,
      memClk: clocks ? (clocks.memClockMHz ?? 0) : undefined,
    });
    if (rows.length > 0) files.push(await appendPerfRows(settings.outputPath, rows));
  }
  return files;
}
