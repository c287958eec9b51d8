// The end-of-run writes: the run's records into the performance history, report.html (its header
// with the run's facts: run-facts.ts), the run digest (results/digest/: one line per test with its
// headline figure, regressions, skipped tests and tests not run, totals, where the report is)
// printed last and written as summary.md and summary.json beside results.json, and the index of
// runs (index.html, from the history) in the folder that keeps the runs. The project's reporter
// makes them when the run ends; when a command line replaced the reporters (`--reporter=junit`)
// the global setup's teardown makes them instead, so a CI run records its history, its report and
// its digest whichever reporters it names. Once per run: a process-wide mark, because the reporter
// and the global setup are loaded as separate module instances.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { TestModule } from 'vitest/node';
import { readSettings, type Settings } from '../settings.ts';
import { RESULTS_JSON_FILE } from '../results/json.ts';
import { buildReport } from '../results/report/build.ts';
import { REPORT_FILE } from '../results/report/render.ts';
import { writeRunDigest } from '../results/digest/write-digest.ts';
import { appendRunsToHistory } from '../history/run-end.ts';
import { writeIndexFromHistory } from '../history/run-index.ts';
import { INDEX_FILE, indexRootOf } from '../results/index/run-index.ts';
import { gatherRunFacts } from './run-facts.ts';
import { describeNotRun, runTests, withoutResultOfRun } from './run-tests.ts';
import { isRunProject } from './run-project.ts';
import { RESUME_HINT, whyNotRun } from './not-run.ts';
import { interruptedBecause, runCancel } from './cancellation.ts';
import { saveNotRunSync } from '../results/not-run.ts';

const WRITTEN = Symbol.for('disagg-bench.run-end-written');

/** What the digest needs of the run's tests, as Vitest's main process knows them. */
export interface RunEndTests {
  /** The run's config tests, in the order collected. */
  testIds: string[];
  /** Tests that did not reach their end, with why. */
  interrupted: Map<string, string>;
}

/**
 * The run's config tests and which did not reach their end: interrupted ones (their meta says
 * why) and those whose worker died (SIGKILL, out of memory) before their result reached the main
 * process; those are named on stderr, unless their result was saved after all.
 */
export function runEndTests(modules: ReadonlyArray<TestModule>, settings: Settings | undefined, runId: string | undefined): RunEndTests {
  const { ids: testIds, unfinished: pending, cutShort } = runTests(modules);
  const interrupted = new Map<string, string>();
  for (const module of modules) {
    if (!isRunProject(module.project)) continue;
    for (const test of module.children.allTests()) {
      const notRun = test.meta().disagg?.notRun;
      if (notRun) interrupted.set(test.name, notRun);
    }
  }
  let unfinished = pending;
  if (unfinished.length > 0 && settings) unfinished = withoutResultOfRun(unfinished, settings.outputPath, runId);
  if (unfinished.length > 0) {
    process.stderr.write(`disagg-bench: ${describeNotRun(unfinished, 'their worker ended before they did; no result recorded')}\n`);
    for (const id of unfinished) interrupted.set(id, 'its worker ended before it did; no result recorded');
  }
  // Vitest cancelled the run (--bail after a failure): the tests it skipped for that never ran.
  const skipped = settings ? withoutResultOfRun(cutShort.map((t) => t.id), settings.outputPath, runId) : [];
  for (const t of cutShort) if (skipped.includes(t.id) && !interrupted.has(t.id)) interrupted.set(t.id, `not run: Vitest cancelled the run (${t.why})`);
  // Cancelled on a signal through Vitest: each in the words a run ended at once gives it (its job cancelled, or not reached).
  const cancel = runCancel();
  if (cancel && settings && runId !== undefined) return { testIds, interrupted: whyNotRun([...interrupted.keys()], settings.outputPath, runId, interruptedBecause(cancel.why), cancel.at) };
  return { testIds, interrupted };
}

/** Makes the end-of-run writes for the run `runId` unless they were made already in this process. */
export async function writeRunEnd(runId: string | undefined, collect: () => RunEndTests): Promise<void> {
  const g = globalThis as { [WRITTEN]?: Set<string> };
  const written = (g[WRITTEN] ??= new Set());
  const key = runId ?? '';
  if (written.has(key)) return;
  written.add(key);
  const tests = collect();
  if (tests.testIds.length === 0) return;
  const settings = readSettings();
  const { outputPath } = settings;
  if (tests.interrupted.size > 0) {
    // results.json names the tests without a verdict (the digest below names them too).
    try {
      saveNotRunSync(outputPath, runId, [...tests.interrupted].map(([testId, why]) => ({ testId, why })));
    } catch (err) {
      process.stderr.write(`disagg-bench: results.json does not list the tests not run: ${(err as Error).message}\n`);
    }
  }
  if (!existsSync(path.join(outputPath, RESULTS_JSON_FILE))) return;
  const notes: string[] = [];
  // The run's records into the performance history (one transaction; a failing store is one line).
  const history = await appendRunsToHistory(settings, runId).catch((err: Error) => ({ ok: false, message: `history: nothing appended: ${err.message}`, trends: undefined, previous: undefined }));
  if (history) notes.push(history.message);
  const facts = gatherRunFacts(settings, runId);
  // The index of runs lives where the runs are kept, written from the history: named when this run
  // reached the store (or an index is there already), so the digest never points to none.
  const indexRoot = indexRootOf(outputPath, runId);
  const indexFile = path.join(indexRoot, INDEX_FILE);
  const index = settings.history.target.kind !== 'off' && (history?.ok || existsSync(indexFile)) ? indexFile : undefined;
  let report: string | undefined;
  try {
    const output = path.join(outputPath, REPORT_FILE);
    const indexLink = index && path.relative(outputPath, index).split(path.sep).join('/');
    report = (await buildReport({ inputs: [outputPath], output, trends: history?.trends, facts, indexLink })).file;
  } catch (err) {
    notes.push(`report.html could not be written: ${(err as Error).message}`);
    // A run whose report is missing did not do all it was asked: it does not end 0.
    process.exitCode = process.exitCode || 1;
  }
  let text: string | undefined;
  try {
    text = (
      await writeRunDigest({
        resultsFolder: outputPath,
        runId,
        testIds: tests.testIds,
        interrupted: tests.interrupted,
        report,
        index,
        facts,
        previous: history?.previous,
        openAlerts: history?.trends?.openAlerts,
        resume: RESUME_HINT,
        notes,
      })
    ).text;
  } catch (err) {
    for (const note of notes) process.stdout.write(`${note}\n`);
    if (report) process.stdout.write(`report: ${report}\n`);
    process.stderr.write(`the run digest could not be written: ${(err as Error).message}\n`);
    process.exitCode = process.exitCode || 1;
  }
  // After the digest: the index reads this run's summary.json for its skipped tests.
  const indexed = index ? await writeIndexFromHistory(settings, indexRoot).catch((err: Error) => ({ file: undefined, message: `index: not written: ${err.message}` })) : undefined;
  if (indexed && !indexed.file) process.stderr.write(`${indexed.message}\n`);
  if (text) process.stdout.write(text);
}
