// A Vitest reporter that ends a run with a compact table of each test's key metrics, names the
// tests that did not run to their end (interrupted, or their worker died: SIGKILL, out of memory),
// and rebuilds OUTPUT_PATH/report.html from the run's results.json. As tests are collected and
// end it keeps the main process's view of them (run-tests.ts), for an interruption to report.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestCase, TestModule } from 'vitest/node';
import { formatMetricsTable, type MetricsRow } from './metrics-table.ts';
import { readSettings } from '../settings.ts';
import { RESULTS_JSON_FILE } from '../results/json.ts';
import { buildReport } from '../results/report/build.ts';
import { REPORT_FILE } from '../results/report/render.ts';
import { describeNotRun, isRunProject, testCollected, testFinished } from './run-tests.ts';

export default class DisaggReporter implements Reporter {
  onTestModuleCollected(module: TestModule): void {
    if (!isRunProject(module.project.name)) return;
    for (const test of module.children.allTests()) testCollected(test.name);
  }

  onTestCaseResult(test: TestCase): void {
    if (isRunProject(test.project.name)) testFinished(test.name);
  }

  async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    const rows: MetricsRow[] = [];
    const unfinished: string[] = [];
    for (const module of testModules) {
      if (!isRunProject(module.project.name)) continue;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'pending') unfinished.push(test.name);
        const meta = test.meta().disagg;
        if (!meta) continue;
        rows.push({ id: test.name, state: meta.notRun ? 'not run' : state, jobState: meta.state, metrics: meta.metrics });
      }
    }
    if (rows.length > 0) process.stdout.write('\n' + formatMetricsTable(rows) + '\n');
    // A worker that died (SIGKILL, out of memory) takes its tests' ends with it: Vitest names the
    // file, this names the tests. Their jobs were cancelled and recorded by the global teardown.
    if (unfinished.length > 0) {
      process.stderr.write(`disagg-bench: ${describeNotRun(unfinished, 'their worker ended before they did; no result recorded')}\n`);
    }
    if (rows.length === 0) return;
    const { outputPath } = readSettings();
    if (!existsSync(path.join(outputPath, RESULTS_JSON_FILE))) return;
    try {
      const report = await buildReport({ inputs: [outputPath], output: path.join(outputPath, REPORT_FILE) });
      process.stdout.write(`report: ${report.file}\n`);
    } catch (err) {
      process.stderr.write(`report.html could not be written: ${(err as Error).message}\n`);
    }
  }
}
