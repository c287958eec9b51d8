// The run digest's one entry point at the end of a run: the run's records from its results.json,
// the digest written as summary.json and summary.md in the folder of that results.json (the run's
// folder), and the terminal text returned for the caller to print last. A run cancelled by a signal
// writes it synchronously (writeRunDigestSync), without the history's figures.
import path from 'node:path';
import { isRecordOfRun, readRecordsSync, readResults, RESULTS_JSON_FILE, type TestRecord } from '../json.ts';
import { writeWhole, writeWholeSync } from '../../../runners/common/write-whole.ts';
import { buildDigest, type Digest, type PreviousValues } from './digest.ts';
import { digestMarkdown, digestTerminal } from './digest-text.ts';
import type { RunFacts } from '../run-facts.ts';
import { SUMMARY_JSON_FILE, SUMMARY_MD_FILE } from './summary-files.ts';


export interface RunDigestInput {
  /** The folder holding the run's results.json; summary.* are written beside it. */
  resultsFolder: string;
  runId?: string;
  /** The run's test ids, in the order run. */
  testIds: string[];
  /** Tests that did not reach their end, with why (interrupted, their worker died). */
  interrupted?: ReadonlyMap<string, string>;
  /** The report written for the run, if any. */
  report?: string;
  /** The index of runs (index.html) the run's end writes, if any. */
  index?: string;
  /** What the run is beside its tests (commits, scheduler...), kept in summary.json. */
  facts?: RunFacts;
  previous?: PreviousValues;
  /** A command line that continues the interrupted tests. */
  resume?: string;
  notes?: string[];
  /** Alerts still open in the history, one line each. */
  openAlerts?: string[];
}

/**
 * The record of each test from this run: its latest record (by end time) that is this run's, or
 * that carries no run (a skip, a run keeping no history); a record of another run is not this
 * run's result.
 */
function recordOfRun(records: TestRecord[], testId: string, runId: string | undefined): TestRecord | undefined {
  const mine = records.filter((r) => r.testId === testId && (!runId || !r.run || isRecordOfRun(r, runId)));
  return mine.sort((a, b) => a.timing.end.localeCompare(b.timing.end)).at(-1);
}

function digestOf(records: TestRecord[], input: RunDigestInput): Digest {
  const files = {
    results: path.join(input.resultsFolder, RESULTS_JSON_FILE),
    ...(input.report && { report: input.report }),
    ...(input.index && { index: input.index }),
    summaryMd: path.join(input.resultsFolder, SUMMARY_MD_FILE),
    summaryJson: path.join(input.resultsFolder, SUMMARY_JSON_FILE),
  };
  return buildDigest({
    runId: input.runId,
    facts: input.facts,
    tests: input.testIds.map((testId) => ({ testId, record: recordOfRun(records, testId, input.runId), interrupted: input.interrupted?.get(testId) })),
    previous: input.previous,
    files,
    resume: input.resume,
    notes: input.notes,
    openAlerts: input.openAlerts,
  });
}

/** Writes summary.json and summary.md; returns the digest and the terminal text. */
export async function writeRunDigest(input: RunDigestInput): Promise<{ digest: Digest; text: string }> {
  const digest = digestOf((await readResults(input.resultsFolder)).records, input);
  await writeWhole(digest.files.summaryJson, `${JSON.stringify(digest, null, 2)}\n`);
  await writeWhole(digest.files.summaryMd, digestMarkdown(digest));
  return { digest, text: digestTerminal(digest) };
}

/** The same, synchronously: for a run cancelled by a signal, in the moments before it exits. */
export function writeRunDigestSync(input: RunDigestInput): { digest: Digest; text: string } {
  const digest = digestOf(readRecordsSync(input.resultsFolder), input);
  writeWholeSync(digest.files.summaryJson, `${JSON.stringify(digest, null, 2)}\n`);
  writeWholeSync(digest.files.summaryMd, digestMarkdown(digest));
  return { digest, text: digestTerminal(digest) };
}
