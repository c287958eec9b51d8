// A Vitest reporter that ends a run with a compact table of each test's key metrics, names the
// tests that did not run to their end (their worker died: SIGKILL, out of memory), and makes the
// end-of-run writes (run-end.ts: the history, report.html).
import type { Reporter, TestModule } from 'vitest/node';
import { formatMetricsTable, type MetricsRow } from './metrics-table.ts';
import { readSettings } from '../settings.ts';
import { describeNotRun, isRunProject, runTests, withoutResultOfRun } from './run-tests.ts';
import { writeRunEnd } from './run-end.ts';

export default class DisaggReporter implements Reporter {
  async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    const rows: MetricsRow[] = [];
    for (const module of testModules) {
      if (!isRunProject(module.project.name)) continue;
      for (const test of module.children.allTests()) {
        const meta = test.meta().disagg;
        if (meta) rows.push({ id: test.name, state: meta.notRun ? 'not run' : test.result().state, jobState: meta.state, metrics: meta.metrics });
      }
    }
    if (rows.length > 0) process.stdout.write('\n' + formatMetricsTable(rows) + '\n');
    // A worker that died (SIGKILL, out of memory) takes its tests' ends with it: Vitest names the
    // file, this names the tests (not one whose result it had saved). Their jobs were cancelled
    // and recorded by the global teardown.
    let unfinished = runTests(testModules).unfinished;
    if (unfinished.length > 0) {
      try {
        unfinished = withoutResultOfRun(unfinished, readSettings().outputPath, process.env.DISAGG_RUN_ID);
      } catch {
        // Settings that cannot be read (the run has said why): the list stays as Vitest has it.
      }
    }
    if (unfinished.length > 0) {
      process.stderr.write(`disagg-bench: ${describeNotRun(unfinished, 'their worker ended before they did; no result recorded')}\n`);
    }
    if (rows.length === 0) return;
    await writeRunEnd(process.env.DISAGG_RUN_ID);
  }
}
