// A Vitest reporter that ends a run with a compact table of each test's key metrics, and
// rebuilds OUTPUT_PATH/report.html from the run's results.json.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { formatMetricsTable } from './metrics-table.ts';
import { readSettings } from '../settings.ts';
import { RESULTS_JSON_FILE } from '../results/json.ts';
import { buildReport } from '../results/report/build.ts';
import { REPORT_FILE } from '../results/report/render.ts';
import { appendRunsToHistory } from '../history/run-end.ts';

export default class DisaggReporter implements Reporter {
  async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    const rows = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const meta = test.meta().disagg;
        if (!meta) continue;
        rows.push({ id: test.name, state: test.result().state, jobState: meta.state, metrics: meta.metrics });
      }
    }
    if (rows.length === 0) return;
    process.stdout.write('\n' + formatMetricsTable(rows) + '\n');
    const settings = readSettings();
    const { outputPath } = settings;
    if (!existsSync(path.join(outputPath, RESULTS_JSON_FILE))) return;
    // The run's records into the performance history (one transaction; a failing store is one line).
    const history = await appendRunsToHistory(settings, process.env.DISAGG_RUN_ID).catch((err: Error) => ({ ok: false, message: `history: nothing appended: ${err.message}`, trends: undefined }));
    if (history) (history.ok ? process.stdout : process.stderr).write(`${history.message}\n`);
    try {
      const report = await buildReport({ inputs: [outputPath], output: path.join(outputPath, REPORT_FILE), trends: history?.trends });
      process.stdout.write(`report: ${report.file}\n`);
    } catch (err) {
      process.stderr.write(`report.html could not be written: ${(err as Error).message}\n`);
    }
  }
}
