// The run's config tests as Vitest's main process knows them, whatever reporters are in use
// (`--reporter=junit` replaces ours): collected, and which have not reached their end. Read by
// the reporter at the run's end and by an interruption (main-interrupt.ts) in the middle of it.
import type { TestModule } from 'vitest/node';
import { readLedger } from '../jobs/ledger.ts';
import { readRecordsSync } from '../results/json.ts';
import { isListing, isRunProject } from './run-project.ts';

export interface RunTests {
  collected: number;
  /** Every collected test the run selected, in order (not those filtered out or declared skipped). */
  ids: string[];
  /** Tests whose result has not reached the main process. */
  unfinished: string[];
  /** Tests that ended without running to their end: the run was interrupted under them (their meta says why). */
  interrupted: string[];
  /** Tests Vitest skipped because it cancelled the run (--bail after a failure), with its note. */
  cutShort: { id: string; why: string }[];
}

/**
 * The note Vitest gives each test it skips when it cancels a run (@vitest/runner's
 * markPendingTasksAsSkipped); a test skipped for its own reason (another GPU) carries that reason.
 */
const CANCELLED_NOTE = /^The test run was aborted/;

export function runTests(modules: ReadonlyArray<TestModule>): RunTests {
  const tests = modules.filter((m) => isRunProject(m.project)).flatMap((m) => [...m.children.allTests()]);
  const cutShort = tests.flatMap((t) => {
    const result = t.result();
    return result.state === 'skipped' && CANCELLED_NOTE.test(result.note ?? '') ? [{ id: t.name, why: result.note! }] : [];
  });
  // A test skipped with no note was never selected: -t or --tags-filter left it out, or it is the
  // placeholder that says a type has no configs. One skipped for a reason (another GPU) says it.
  const selected = tests.filter((t) => { const r = t.result(); return r.state !== 'skipped' || r.note !== undefined; });
  const interrupted = tests.filter((t) => t.meta().disagg?.notRun !== undefined).map((t) => t.name);
  return { collected: tests.length, ids: selected.map((t) => t.name), unfinished: isListing() ? [] : tests.filter((t) => t.result().state === 'pending').map((t) => t.name), interrupted, cutShort };
}

/** Whether any config test of the run got as far as a result of its own (a job judged, a record written). */
export function anyTestRecorded(modules: ReadonlyArray<TestModule>): boolean {
  return modules.some((m) => isRunProject(m.project) && [...m.children.allTests()].some((t) => t.meta().disagg !== undefined));
}

/** One line naming tests that did not run to their end (the first 20, then a count). */
export function describeNotRun(ids: string[], why: string): string {
  const shown = ids.slice(0, 20).join(', ');
  return `${ids.length} test(s) not run (${why}): ${shown}${ids.length > 20 ? `, ... and ${ids.length - 20} more` : ''}`;
}

/**
 * Of `ids`, those with no result of this run in results.json. A worker can die after a test's
 * result was saved but before Vitest's main process heard of the test's end: that test ran.
 */
export function withoutResultOfRun(ids: string[], outputPath: string, runId: string | undefined): string[] {
  if (ids.length === 0 || runId === undefined) return ids;
  // readLedger / readRecordsSync give nothing for a missing or unreadable file: then every id stays.
  const ownJobs = new Set(readLedger(outputPath).filter((e) => e.run === runId).map((e) => `${e.test}\u0000${e.job}`));
  const recorded = new Set(readRecordsSync(outputPath).filter((r) => ownJobs.has(`${r.testId}\u0000${r.jobId}`)).map((r) => r.testId));
  return ids.filter((id) => !recorded.has(id));
}
