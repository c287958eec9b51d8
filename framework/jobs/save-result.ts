// Everything one finished test leaves behind: its CSV rows (dashboards) and its results.json
// record (reports, comparisons, RESUME). Returns the files written.
//
// One commit point per test, the record written without `saving`:
//   1. the record, marked `saving`, naming the rows it is about to write (json.ts: no result yet);
//   2. the CSV: the rows an earlier save of the same job wrote (a replay, a resumed save) replaced
//      by the new ones, in one append or one rewrite (csv.ts);
//   3. the record again, without `saving`: from here on it is the test's result.
// A kill between 1 and 3 leaves a `saving` record that every reader ignores: RESUME judges the job
// again and step 2 replaces whatever rows the cut-short save had written (none lost, none twice).
// A CSV that refuses the rows (full disk, a foreign header) leaves the record saying `failed`, why,
// and the rows still in the CSV; never `passed` without its rows.
// A test with no rows now and none before is one write: the record. The tests that get no job
// (invalid configs, configs for another GPU) have their records written together, once per run
// (saveNoJobRecords).
import { hostname } from 'node:os';
import type { PlannedTest } from '../select/plan.ts';
import { gpuForType, resourceTypeOf, type GpuDetection } from '../select/gpu.ts';
import { gpuResources } from '../config/gpu-resources.ts';
import type { Settings } from '../settings.ts';
import type { TestRun } from './session.ts';
import { testType } from '../types/registry.ts';
import { csvMetrics, perfRowsFor, replacePerfRows, rowsIdentity, type CsvRowsIdentity, type PerfRow } from '../results/csv.ts';
import { findRecord, saveTestRecord, saveTestRecords, type JobTimes, type MetricRef, type RecordRegression, type RecordRunContext, type TestRecord } from '../results/json.ts';
import { headlineMetrics } from '../metrics/headline.ts';
import type { Metric } from '../metrics/metric.ts';
import { formatIssue } from '../config/issue.ts';
import { testLogDir } from '../scheduler/log-folder.ts';
import type { TestTiming } from '../results/test-timing.ts';

export interface SaveInput {
  settings: Settings;
  gpu: GpuDetection;
  test: PlannedTest;
  run: TestRun;
  /** The performance history's part (framework/history/test-check.ts): run context, regression check. */
  history?: { run: RecordRunContext; regression?: RecordRegression; failures: string[] };
}

/** The rows of a passed test with metrics, as upstream's result saver names and fills them. */
function rowsOf(test: PlannedTest, gpuOfTest: GpuDetection, metrics: TestRecord['metrics'], timing: TestTiming, extraRows: boolean): PerfRow[] {
  const info = testType(test.testType)?.csvInfo?.(test.resolved?.config ?? {}, test.category, test.id) ?? {};
  const clocks = gpuOfTest.gpuType ? gpuResources(resourceTypeOf(gpuOfTest)) : undefined;
  // Upstream's result saver writes `lock_freq_*_mhz or 0`: 0 for a GPU without locked clocks.
  return perfRowsFor({ name: info.rowName ?? test.id, ...info }, csvMetrics(metrics, info.metricNames, extraRows), timing, {
    smClk: clocks ? (clocks.smClockMHz ?? 0) : undefined,
    memClk: clocks ? (clocks.memClockMHz ?? 0) : undefined,
  });
}

/** The rows an earlier record of the same job has in the CSV (records older than `csvRows` are recomputed). */
function earlierRows(earlier: TestRecord | undefined, test: PlannedTest, gpuOfTest: GpuDetection, extraRows: boolean): CsvRowsIdentity | undefined {
  if (!earlier) return undefined;
  if (earlier.csvRows || earlier.verdict !== 'passed') return earlier.csvRows;
  const timing = { start: new Date(earlier.timing.start), end: new Date(earlier.timing.end), durationSec: earlier.timing.durationSec };
  return rowsIdentity(rowsOf(test, gpuOfTest, earlier.metrics, timing, extraRows));
}

/** The GPU a test runs as: the run's, else its type's assumed one (upstream's GB200 for serving). */
function gpuOf(test: PlannedTest, gpu: GpuDetection): GpuDetection {
  return gpuForType(gpu, testType(test.testType)?.assumedGpuType);
}

const timingOf = (run: TestRun): TestTiming => ({ start: new Date(run.startedAt), end: new Date(run.endedAt), durationSec: (run.endedAt - run.startedAt) / 1000 });

/** What every record of a test says about the test itself. */
function aboutTest(test: PlannedTest, gpuOfTest: GpuDetection): Pick<TestRecord, 'testId' | 'type' | 'category' | 'configPath' | 'host' | 'gpuType'> {
  return { testId: test.id, type: test.testType, category: test.category, configPath: test.displayFile, host: hostname(), gpuType: gpuOfTest.gpuType };
}

/**
 * The record of a test that gets no job: `skipped` with its reason (a config for another GPU,
 * valid or not, as upstream skips it), else `failed` with its config's issues, located.
 */
export function noJobRecord(test: PlannedTest, gpu: GpuDetection, at: Date): TestRecord {
  const skipped = test.skipReason !== undefined;
  return {
    ...aboutTest(test, gpuOf(test, gpu)),
    jobId: null,
    verdict: skipped ? 'skipped' : 'failed',
    failures: skipped ? [] : test.issues.map(formatIssue),
    ...(skipped && { skipReason: test.skipReason }),
    metrics: [],
    timing: { start: at.toISOString(), end: at.toISOString(), durationSec: 0 },
  };
}

/** The records of the run's tests that get no job, in one write. Returns the file's path. */
export async function saveNoJobRecords(settings: Settings, gpu: GpuDetection, tests: PlannedTest[]): Promise<string> {
  const at = new Date();
  return saveTestRecords(settings.outputPath, tests.map((t) => noJobRecord(t, gpu, at)));
}

/** The results.json record of a finished test, before anything is written. */
export function testRecordOf({ settings, gpu, test, run }: SaveInput): TestRecord {
  const timing = timingOf(run);
  return {
    ...aboutTest(test, gpuOf(test, gpu)),
    jobId: run.jobId ?? null,
    schedulerState: run.status.state,
    verdict: run.passed ? 'passed' : 'failed',
    failures: run.failures,
    metrics: run.metrics,
    timing: { start: timing.start.toISOString(), end: timing.end.toISOString(), durationSec: timing.durationSec },
    logDir: testLogDir(settings.outputPath, test.id),
    headline: headlineOf(test, run.metrics),
    ...(jobTimes(run) && { job: jobTimes(run) }),
  };
}

/** The test's headline figures by name and labels (its type's TestType.headline). */
function headlineOf(test: PlannedTest, metrics: Metric[]): MetricRef[] {
  const type = testType(test.testType);
  if (!type) return [];
  return headlineMetrics(type, test.resolved?.config ?? test.config ?? {}, test.category, metrics).map((m) => ({ name: m.name, labels: m.labels }));
}

/** Queue and run time from the scheduler's start and end of the job (SLURM's StartTime/EndTime; the local backend's launch and exit). */
function jobTimes(run: TestRun): JobTimes | undefined {
  const { startTime, endTime } = run.status;
  const times: JobTimes = {};
  if (startTime !== undefined && run.submittedAt !== undefined) times.queueSec = Math.max(0, (startTime - run.submittedAt) / 1000);
  if (startTime !== undefined && endTime !== undefined) times.runSec = Math.max(0, (endTime - startTime) / 1000);
  return Object.keys(times).length > 0 ? times : undefined;
}

export async function saveTestResult(input: SaveInput): Promise<string[]> {
  const { settings, gpu, test, run, history } = input;
  const out = settings.outputPath;
  const rows = run.passed && run.metrics.length > 0 ? rowsOf(test, gpuOf(test, gpu), run.metrics, timingOf(run), settings.csvExtraRows) : [];
  const record: TestRecord = { ...testRecordOf(input), csvRows: rowsIdentity(rows) };
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
  const earlier = earlierRows(await findRecord(out, record), test, gpuOf(test, gpu), settings.csvExtraRows);
  if (rows.length === 0 && !earlier) return [await saveTestRecord(out, record)];

  const file = await saveTestRecord(out, { ...record, saving: true });
  let csv: string;
  try {
    csv = (await replacePerfRows(out, earlier, rows)).file;
  } catch (error) {
    // Not `passed` without its rows: the record says why, and names the rows the CSV still holds.
    const failed = { ...record, verdict: 'failed' as const, failures: [...record.failures, `its CSV rows were not written: ${(error as Error).message}`], csvRows: earlier };
    await saveTestRecord(out, failed).catch(() => undefined); // else the `saving` record stays: RESUME saves again
    throw error;
  }
  await saveTestRecord(out, record);
  return [file, csv];
}
