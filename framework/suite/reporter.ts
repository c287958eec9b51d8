// A Vitest reporter that ends a run with what a perf engineer reads (run-end.ts: the history,
// report.html and the run digest, printed last). Every metric of every test is listed only with
// DISAGG_PRINT_METRICS=1 (the report has them all). Tests that did not run to their end (their
// worker died: SIGKILL, out of memory) are named.
import type { Reporter, TestModule } from 'vitest/node';
import { formatMetricsTable, type MetricsRow } from './metrics-table.ts';
import { readSettings } from '../settings.ts';
import { isRunProject } from './run-project.ts';

/** How long after the first test starts the end-of-run modules load: after the first batch is submitted. */
const PRELOAD_DELAY_MS = 2_000;

export default class DisaggReporter implements Reporter {
  private preloading = false;

  /**
   * The end-of-run writes' modules (report, digest, the history store's driver: ~0.8 s of CPU on
   * 2 busy cores) load while the run waits on its jobs, not after its last job has ended. Started
   * by the first test that runs (a listing runs none), a little later, so that the first batch's
   * submissions do not wait for it. Nothing is opened: only modules load.
   */
  onTestCaseReady(): void {
    if (this.preloading) return;
    this.preloading = true;
    setTimeout(() => void preloadRunEnd(), PRELOAD_DELAY_MS).unref();
  }

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

async function preloadRunEnd(): Promise<void> {
  try {
    await import('./run-end.ts');
    const { preloadHistoryDriver } = await import('../history/store.ts');
    await preloadHistoryDriver(readSettings().history.target);
  } catch {
    // only a head start: the run's end loads (and reports) for itself
  }
}
