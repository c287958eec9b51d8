// OUTPUT_PATH/results.json: one record per (test id, job id), everything a report or a later
// comparison needs. Every test of a run has one: a test that got no job has its record with job
// id null, `failed` with its config's issues (an invalid config) or `skipped` with the reason (a
// config for another GPU); a skip is no result, and readers of results (RESUME, comparisons,
// histories) leave it out (holdsResult). Writers merge under the file's lock (read, modify, write a temporary file,
// rename over the original), so concurrent tests and processes never lose each other's records
// and a reader never sees a half-written file. A record with the same test id and job id as an
// existing one replaces it (a replay of the same job does not duplicate); a new job id adds one.
// A record marked `saving` was written before its test's CSV rows (jobs/save-result.ts: one commit point per
// test); readers take it for no record at all, so a run killed in between is saved again on RESUME.
import path from 'node:path';
import type { Metric } from '../metrics/metric.ts';
import type { CsvRowsIdentity } from './csv.ts';
import { withFileLock } from './file-lock.ts';
import { writeWhole } from '../../runners/common/write-whole.ts';
import { FileReadError, READ_LIMITS, readTextFile, readTextFileSync } from '../../runners/common/read-file.ts';
import { DisaggBenchError } from '../../runners/common/errors.ts';
import { recordProblem } from './record-check.ts';
import type { ErrorCategory } from '../../runners/common/errors.ts';

export const RESULTS_JSON_FILE = 'results.json';
export const RESULTS_JSON_VERSION = 1;

export type TestVerdict = 'passed' | 'failed' | 'skipped';

export interface TestRecord {
  testId: string;
  /** Test type (disagg, wideep, nixl...). */
  type: string;
  /** perf, accuracy, stress... */
  category: string;
  configPath: string;
  /** null when no job was submitted (an invalid config, a skip). */
  jobId: string | null;
  /** The scheduler's final state (COMPLETED, TIMEOUT...), when known. */
  schedulerState?: string;
  verdict: TestVerdict;
  /** Every reason the test failed (an invalid config's issues, located); empty otherwise. */
  failures: string[];
  /** Why a `skipped` test was not run. */
  skipReason?: string;
  metrics: Metric[];
  timing: { start: string; end: string; durationSec: number };
  host: string;
  gpuType?: string;
  logDir?: string;
  /** The rows its result has in the CSV (absent: none). */
  csvRows?: CsvRowsIdentity;
  /** Written, its CSV rows not yet: not a result until the record is written again without it. */
  saving?: boolean;
  /** The run this record belongs to, for the performance history (absent: never appended to one). */
  run?: RecordRunContext;
  /** This record checked against the history's baselines (absent: not checked). */
  regression?: RecordRegression;
  /**
   * Its headline figures (the type's TestType.headline), most important first, named by metric
   * and labels; their values are in `metrics`. Absent: a record of an older version.
   */
  headline?: MetricRef[];
  /** The job's queue and run time from the scheduler's start and end of it (absent: not known). */
  job?: JobTimes;
}

/** One metric of a record, by name and labels. */
export interface MetricRef {
  name: string;
  labels: Metric['labels'];
}

export interface JobTimes {
  /** From the submission (sbatch returned, or the local launch) to the scheduler's start of the job. */
  queueSec?: number;
  /** The scheduler's start to its end of the job. */
  runSec?: number;
}

/** Which run a record came from, kept with it in the history (framework/history/). */
export interface RecordRunContext {
  id: string;
  /** DISAGG_RUN_KIND: post-merge records feed later baselines, pre-merge and local ones do not. */
  kind: 'post-merge' | 'pre-merge' | 'local';
  /** DISAGG_RUN_LABEL. */
  label?: string;
  /** Git commit and branch of the configs (WORK_DIR), when it is a git work tree. */
  commit?: string;
  branch?: string;
  /** CI variables present in the run's environment (GITHUB_*, CI_*, BUILD_*...). */
  ci?: Record<string, string>;
  /** Identity beyond test id and GPU type (backend...): what makes two runs "the same test". */
  identity?: Record<string, string | number>;
  /** Per-metric thresholds (fractions) this config sets, embedded as upstream embeds d_threshold_*. */
  thresholds?: Record<string, { postMerge: number; preMerge: number }>;
  /** The metrics that can fail the regression gate (headline and opted in); absent: not known (an older record). */
  gate?: string[];
  /**
   * Why no run's end appends this record to the history (its run kept none, DISAGG_HISTORY=off; a
   * replay of logs whose run is not known); `history import` still does when asked. Absent: appended.
   */
  notAppended?: string;
  /** The run that replayed this record's logs (DEBUG_MODE) and kept the run it came from. */
  replayedBy?: string;
}

/** Whether `record` is a result of the run `runId`: its own, or one that run replayed (DEBUG_MODE). */
export function isRecordOfRun(record: TestRecord, runId: string): boolean {
  return record.run?.id === runId || record.run?.replayedBy === runId;
}

/** One metric compared with its baseline from the history. */
export interface RegressionFinding {
  metric: string;
  labels: Metric['labels'];
  unit: string;
  value: number;
  baseline: number;
  /** Fraction, e.g. 0.05. */
  threshold: number;
  /** Percent, positive = better (upstream's _calculate_diff). */
  diffPercent: number;
  /** The gate's verdict: a gated metric beyond the threshold and beyond the noise, not exempt. */
  regression: boolean;
  /** Days of history (before this run) the baseline came from. */
  days: number;
  /** The metric can fail the gate (headline, or opted in); false: shown against its baseline only. */
  gated?: boolean;
  /** Why a value beyond the threshold is not a regression (within noise, too little history, the baseline branch has it). */
  note?: string;
  /** The rule that judged it: robust (the alerting gate, the default) or upstream (threshold over P95 / P5); absent: upstream. */
  rule?: 'robust' | 'upstream';
  /** Robust rule: ok, improved, suspect, regression (an alert opened), still-regressed (an alert still open), recovered, unjudged. */
  status?: string;
  /** Robust rule: (value - level) / level in the metric's own terms, its noise (a fraction of the level) and the value's distance in it. */
  change?: number;
  scale?: number;
  z?: number;
  /** Robust rule: post-merge runs the level came from. */
  runs?: number;
  /** Robust rule, a regression: its alert, first bad run and last good run, and its run-level p-value. */
  alertId?: string;
  firstRunId?: string;
  lastGoodRunId?: string;
  pValue?: number;
  /**
   * Robust rule, a judged figure: the smallest worsening (a fraction of the level) the gate catches
   * with probability `power` (0.95) on its first run and by its second; null: no worsening short of
   * the whole level is (too noisy, or a test with wild single values on one run).
   */
  detectable?: { power: number; oneRun: number | null; byTwoRuns: number | null };
}

export interface RecordRegression {
  mode: 'fail' | 'warn' | 'off';
  findings: RegressionFinding[];
  /** Why nothing was checked (no history for this test, store unreachable...). */
  skipped?: string;
}

export interface ResultsFile {
  version: typeof RESULTS_JSON_VERSION;
  /** When the file was last written (ISO 8601). */
  updated: string;
  records: TestRecord[];
  /** Selected tests that have no verdict: each run's tests cut short (not-run.ts); a test leaves the list when a record of it is saved. */
  notRun?: NotRunTest[];
}

/** A test a run selected that got no verdict, and why (cancelled by a signal, not reached, its worker died). */
export interface NotRunTest {
  testId: string;
  /** The run that did not run it. */
  run?: string;
  why: string;
}

export class ResultsFileError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  constructor(
    override readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}; the file was not modified (move it aside to start a new one)`, { file });
    this.name = 'ResultsFileError';
  }
}

/** Why results.json's `notRun` is not a list of tests not run (undefined when it is, or is absent). */
function notRunListProblem(notRun: unknown): string | undefined {
  if (notRun === undefined) return undefined;
  if (!Array.isArray(notRun)) return `notRun is ${JSON.stringify(notRun)}: expected a list of {testId, run, why}`;
  for (const [k, entry] of notRun.entries()) {
    const e = entry as Partial<NotRunTest> | null;
    if (!e || typeof e !== 'object' || typeof e.testId !== 'string' || typeof e.why !== 'string' || (e.run !== undefined && typeof e.run !== 'string')) {
      return `notRun[${k}] is ${JSON.stringify(entry)}: expected {testId, run, why} with text values`;
    }
  }
  return undefined;
}

export function parseResults(file: string, text: string): ResultsFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ResultsFileError(file, `not valid JSON (${(error as Error).message})`);
  }
  const parsed = data as Partial<ResultsFile> | null;
  if (!parsed || typeof parsed !== 'object' || !Array.isArray(parsed.records)) {
    throw new ResultsFileError(file, 'no records array');
  }
  if (parsed.version !== RESULTS_JSON_VERSION) {
    throw new ResultsFileError(file, `version ${String(parsed.version)} is not the supported version ${RESULTS_JSON_VERSION}`);
  }
  // Every part a writer reads back, not only the records: a run that cannot add to the file finds out before it submits.
  if (parsed.updated !== undefined && typeof parsed.updated !== 'string') throw new ResultsFileError(file, `updated is ${JSON.stringify(parsed.updated)}: expected a date as text`);
  const notRunProblem = notRunListProblem(parsed.notRun);
  if (notRunProblem) throw new ResultsFileError(file, notRunProblem);
  return parsed as ResultsFile;
}

/**
 * The results file of an output folder; an empty one when it does not exist yet. Records still
 * `saving` are left out unless asked for.
 */
export async function readResults(outputPath: string, options: { withSaving?: boolean } = {}): Promise<ResultsFile> {
  const file = path.join(outputPath, RESULTS_JSON_FILE);
  let text: string;
  try {
    text = await readTextFile(file, READ_LIMITS.record);
  } catch (error) {
    if (!(error instanceof FileReadError)) throw error;
    if (/\(ENOENT\)$/.test(error.reason)) return { version: RESULTS_JSON_VERSION, updated: '', records: [] };
    throw new ResultsFileError(file, error.reason);
  }
  const results = parseResults(file, text);
  return options.withSaving ? results : { ...results, records: results.records.filter((r) => !r.saving) };
}

/** The records (not `saving`) of an output folder, read synchronously (for signal handlers); none when unreadable. */
export function readRecordsSync(outputPath: string): TestRecord[] {
  const file = path.join(outputPath, RESULTS_JSON_FILE);
  try {
    return parseResults(file, readTextFileSync(file, READ_LIMITS.record)).records.filter((r) => !r.saving);
  } catch {
    return [];
  }
}

/**
 * Checks that an existing results.json can be added to and read back (before a run submits
 * anything): the file, then each record as the report and the history read it.
 */
export function checkResultsText(file: string, text: string): void {
  const { records } = parseResults(file, text);
  for (const [k, record] of records.entries()) {
    const problem = recordProblem(record);
    if (problem) throw new ResultsFileError(file, `records[${k}] ${problem} (the report and the history could not read it)`);
  }
}

/** Whether a record holds a result: a skip does not (RESUME, comparisons and histories leave it out). */
export function holdsResult(record: Pick<TestRecord, 'verdict'>): boolean {
  return record.verdict !== 'skipped';
}

const sameRecord = (a: Pick<TestRecord, 'testId' | 'jobId'>, b: Pick<TestRecord, 'testId' | 'jobId'>) => a.testId === b.testId && a.jobId === b.jobId;

/** The record of a test's job, `saving` or not. */
export async function findRecord(outputPath: string, key: Pick<TestRecord, 'testId' | 'jobId'>): Promise<TestRecord | undefined> {
  return (await readResults(outputPath, { withSaving: true })).records.find((r) => sameRecord(r, key));
}

/** Adds or replaces one test's record. Returns the file's path. */
export async function saveTestRecord(outputPath: string, record: TestRecord): Promise<string> {
  return saveTestRecords(outputPath, [record]);
}

/** Adds or replaces several tests' records in one write (the run's skipped and invalid tests). */
export async function saveTestRecords(outputPath: string, records: TestRecord[]): Promise<string> {
  const file = path.join(outputPath, RESULTS_JSON_FILE);
  await withFileLock(file, async () => {
    const current = await readResults(outputPath, { withSaving: true });
    for (const record of records) {
      const index = current.records.findIndex((r) => sameRecord(r, record));
      const clean = { ...record };
      if (!clean.saving) delete clean.saving;
      if (index >= 0) current.records[index] = clean;
      else current.records.push(clean);
    }
    // A test with a record has a verdict: it leaves the not-run list.
    const notRun = current.notRun?.filter((n) => !records.some((r) => r.testId === n.testId));
    const next: ResultsFile = { version: RESULTS_JSON_VERSION, updated: new Date().toISOString(), records: current.records, ...(notRun?.length ? { notRun } : {}) };
    // The file itself is untouched on failure: it is replaced by a rename or not at all.
    await writeWhole(file, JSON.stringify(next, null, 2) + '\n');
  });
  return file;
}
