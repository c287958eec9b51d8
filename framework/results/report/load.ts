// Reading results files for a report: any number of results.json files (or folders holding one),
// possibly copied from other machines or older runs, merged into one list of records. Each record
// is checked for the fields the report reads, so a damaged file is named with the record at fault
// instead of breaking the page.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { holdsResult, RESULTS_JSON_FILE, RESULTS_JSON_VERSION, type TestRecord } from '../json.ts';
import { FileReadError, READ_LIMITS, readTextFile } from '../../../runners/common/read-file.ts';
import { DisaggBenchError } from '../../../runners/common/errors.ts';
import { recordProblem } from '../record-check.ts';
import type { ErrorCategory } from '../../../runners/common/errors.ts';

/** A results file the report cannot read, with the file and what is wrong in it. */
export class ResultsInputError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  constructor(
    override readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`, { file });
    this.name = 'ResultsInputError';
  }
}

/** `dir` -> `dir/results.json`; a file stays as it is. */
async function resultsFilePath(input: string): Promise<string> {
  const info = await stat(input).catch((error: NodeJS.ErrnoException) => {
    throw new ResultsInputError(input, error.code === 'ENOENT' ? 'no such file or folder' : error.message);
  });
  return info.isDirectory() ? path.join(input, RESULTS_JSON_FILE) : input;
}

/** The records of one results file (or of `<folder>/results.json`). */
export async function readResultsRecords(input: string): Promise<TestRecord[]> {
  const file = await resultsFilePath(input);
  let data: unknown;
  try {
    data = JSON.parse(await readTextFile(file, READ_LIMITS.record));
  } catch (error) {
    if (error instanceof FileReadError) throw new ResultsInputError(file, /\(ENOENT\)$/.test(error.reason) ? 'no such file' : error.reason);
    throw new ResultsInputError(file, `not readable as JSON (${(error as Error).message})`);
  }
  const parsed = data as { version?: unknown; records?: unknown } | null;
  if (!parsed || !Array.isArray(parsed.records)) throw new ResultsInputError(file, 'no records array');
  if (parsed.version !== RESULTS_JSON_VERSION) {
    throw new ResultsInputError(file, `version ${String(parsed.version)} is not the supported version ${RESULTS_JSON_VERSION}`);
  }
  parsed.records.forEach((record, k) => {
    const problem = recordProblem(record);
    if (problem) throw new ResultsInputError(file, `records[${k}] ${problem}`);
  });
  // A record still `saving` is no result yet (json.ts): a run was killed while saving it.
  return (parsed.records as TestRecord[]).filter((r) => !r.saving);
}

/**
 * Records of several files in order; a record with the same test id and job id as an earlier one
 * replaces it (the later file wins), as results.json itself does for a replayed job.
 */
export function mergeRecords(lists: TestRecord[][]): TestRecord[] {
  const merged = new Map<string, TestRecord>();
  for (const records of lists) for (const r of records) merged.set(JSON.stringify([r.testId, r.jobId]), r);
  return [...merged.values()];
}

export async function readAndMergeResults(inputs: string[]): Promise<TestRecord[]> {
  return mergeRecords(await Promise.all(inputs.map(readResultsRecords)));
}

/**
 * The latest result of each test id (by end time), for comparisons that need one value per test.
 * A skip is no result (json.ts): a test skipped since keeps its last result here.
 */
export function latestPerTest(records: TestRecord[]): Map<string, TestRecord> {
  const latest = new Map<string, TestRecord>();
  for (const r of records.filter(holdsResult)) {
    const seen = latest.get(r.testId);
    if (!seen || (r.timing.end ?? '') >= (seen.timing.end ?? '')) latest.set(r.testId, r);
  }
  return latest;
}
