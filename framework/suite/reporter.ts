// A Vitest reporter that ends a run with what a perf engineer reads (run-end.ts: the history,
// report.html and the run digest, printed last). Every metric of every test is listed only with
// DISAGG_PRINT_METRICS=1 (the report has them all). Tests that did not run to their end (their
// worker died: SIGKILL, out of memory) are named.
import type { Reporter, TestModule } from 'vitest/node';
import { formatMetricsTable, type MetricsRow } from './metrics-table.ts';
import { readSettings } from '../settings.ts';
import { isRunProject } from './run-tests.ts';

export default class DisaggReporter implements Reporter {
  async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    const rows: MetricsRow[] = [];
    for (const module of testModules) {
      if (!isRunProject(module.project)) continue;
      for (const test of module.children.allTests()) {
        const meta = test.meta().disagg;
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
    const runId = process.env.DISAGG_RUN_ID;
    // The end-of-run writes (the history, the report) load here, at the run's end: Vitest's main
    // process loads this reporter at every start, `vitest list` included.
    const { runEndTests, writeRunEnd } = await import('./run-end.ts');
    if (!settings) {
      runEndTests(testModules, settings, runId); // still names the tests whose worker died
      return;
    }
    await writeRunEnd(runId, () => runEndTests(testModules, settings, runId));
  }
}
