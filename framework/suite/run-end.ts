// The end-of-run writes: the run's records into the performance history, then report.html. The
// project's reporter makes them when the run ends; when a command line replaced the reporters
// (`--reporter=junit`) the global setup's teardown makes them instead, so a CI run records its
// history and its report whichever reporters it names. Once per run: a process-wide mark, because
// the reporter and the global setup are loaded as separate module instances.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { readSettings } from '../settings.ts';
import { RESULTS_JSON_FILE } from '../results/json.ts';
import { buildReport } from '../results/report/build.ts';
import { REPORT_FILE } from '../results/report/render.ts';
import { appendRunsToHistory } from '../history/run-end.ts';

const WRITTEN = Symbol.for('disagg-bench.run-end-written');

/** Makes the end-of-run writes for the run `runId` unless they were made already in this process. */
export async function writeRunEnd(runId: string | undefined): Promise<void> {
  const g = globalThis as { [WRITTEN]?: Set<string> };
  const written = (g[WRITTEN] ??= new Set());
  const key = runId ?? '';
  if (written.has(key)) return;
  written.add(key);
  const settings = readSettings();
  const { outputPath } = settings;
  if (!existsSync(path.join(outputPath, RESULTS_JSON_FILE))) return;
  // The run's records into the performance history (one transaction; a failing store is one line).
  const history = await appendRunsToHistory(settings, runId).catch((err: Error) => ({ ok: false, message: `history: nothing appended: ${err.message}`, trends: undefined }));
  if (history) (history.ok ? process.stdout : process.stderr).write(`${history.message}\n`);
  try {
    const report = await buildReport({ inputs: [outputPath], output: path.join(outputPath, REPORT_FILE), trends: history?.trends });
    process.stdout.write(`report: ${report.file}\n`);
  } catch (err) {
    process.stderr.write(`report.html could not be written: ${(err as Error).message}\n`);
  }
}
