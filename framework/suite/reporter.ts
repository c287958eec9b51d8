// A Vitest reporter that ends a run with what a perf engineer reads: the run's records appended to
// the history, OUTPUT_PATH/report.html rebuilt from the run's results.json, and the run digest
// (results/digest/: one line per test with its headline figure, regressions, skipped and
// interrupted tests, totals, where the report is) printed last and written as summary.md and
// summary.json beside results.json. Every metric of every test is listed only with
// DISAGG_PRINT_METRICS=1 (the report has them all). Tests that did not run to their end (their
// worker died: SIGKILL, out of memory) are named.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { formatMetricsTable, type MetricsRow } from './metrics-table.ts';
import { readSettings } from '../settings.ts';
import { RESULTS_JSON_FILE } from '../results/json.ts';
import { buildReport } from '../results/report/build.ts';
import { REPORT_FILE } from '../results/report/render.ts';
import { writeRunDigest } from '../results/digest/write-digest.ts';
import { describeNotRun, isRunProject, runTests, withoutResultOfRun } from './run-tests.ts';
import { appendRunsToHistory } from '../history/run-end.ts';

/** How a reader continues the tests a run did not finish. */
const RESUME_HINT = 'the same command with RESUME=1 (disagg-bench run --resume)';

export default class DisaggReporter implements Reporter {
  async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    const rows: MetricsRow[] = [];
    const testIds: string[] = [];
    const interrupted = new Map<string, string>();
    for (const module of testModules) {
      if (!isRunProject(module.project.name)) continue;
      for (const test of module.children.allTests()) {
        testIds.push(test.name);
        const meta = test.meta().disagg;
        if (meta?.notRun) interrupted.set(test.name, meta.notRun);
        if (meta) rows.push({ id: test.name, state: meta.notRun ? 'not run' : test.result().state, jobState: meta.state, metrics: meta.metrics });
      }
    }
    const settings = (() => {
      try {
        return readSettings();
      } catch {
        return undefined; // settings that cannot be read: the run has said why
      }
    })();
    if (rows.length > 0 && settings?.printMetrics) process.stdout.write('\n' + formatMetricsTable(rows) + '\n');
    // A worker that died (SIGKILL, out of memory) takes its tests' ends with it: Vitest names the
    // file, this names the tests (not one whose result it had saved). Their jobs were cancelled
    // and recorded by the global teardown.
    let unfinished = runTests(testModules).unfinished;
    if (unfinished.length > 0 && settings) unfinished = withoutResultOfRun(unfinished, settings.outputPath, process.env.DISAGG_RUN_ID);
    if (unfinished.length > 0) {
      process.stderr.write(`disagg-bench: ${describeNotRun(unfinished, 'their worker ended before they did; no result recorded')}\n`);
      for (const id of unfinished) interrupted.set(id, 'its worker ended before it did; no result recorded');
    }
    if (testIds.length === 0 || !settings) return;
    const { outputPath } = settings;
    if (!existsSync(path.join(outputPath, RESULTS_JSON_FILE))) return;
    const notes: string[] = [];
    // The run's records into the performance history (one transaction; a failing store is one line).
    const history = await appendRunsToHistory(settings, process.env.DISAGG_RUN_ID).catch((err: Error) => ({ ok: false, message: `history: nothing appended: ${err.message}`, trends: undefined, previous: undefined }));
    if (history) notes.push(history.message);
    let report: string | undefined;
    try {
      report = (await buildReport({ inputs: [outputPath], output: path.join(outputPath, REPORT_FILE), trends: history?.trends })).file;
    } catch (err) {
      notes.push(`report.html could not be written: ${(err as Error).message}`);
    }
    try {
      const { text } = await writeRunDigest({
        resultsFolder: outputPath,
        runId: process.env.DISAGG_RUN_ID,
        testIds,
        interrupted,
        report,
        previous: history?.previous,
        resume: RESUME_HINT,
        notes,
      });
      process.stdout.write(text);
    } catch (err) {
      for (const note of notes) process.stdout.write(`${note}\n`);
      if (report) process.stdout.write(`report: ${report}\n`);
      process.stderr.write(`the run digest could not be written: ${(err as Error).message}\n`);
    }
  }
}
