// The index of runs (OUTPUT_PATH/index.html): one row per run the performance history holds,
// newest first, with its counts, its regressions and a link to its report, so "what changed since
// last night" is one click. The rows come from the history (the caller reads it: the results layer
// does not reach the store); what the history cannot know is read from the run's folder:
// skipped and unfinished tests from its summary.json (a skip is no result and is never appended),
// and whether its report.html is there to link to.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPORT_FILE } from '../report/render.ts';
import { SUMMARY_JSON_FILE } from '../digest/summary-files.ts';
import { INDEX_FILE, indexRootOf, RUNS_FOLDER } from './runs-folder.ts';

export { INDEX_FILE, indexRootOf, RUNS_FOLDER };

/** One run as the history lists it (framework/history/store.ts RunSummary has this shape). */
export interface HistoryRun {
  runId: string;
  kind: string;
  label?: string;
  commit?: string;
  branch?: string;
  startMs: number;
  endMs: number;
  /** Tests the history holds of it (passed and failed: skips are not appended). */
  tests: number;
  passed: number;
  failed: number;
  regressed: number;
  gpuTypes?: string;
  /** 'run', or 'import <file>'. */
  source: string;
}

export interface RunIndexRow {
  runId: string;
  start: string;
  end: string;
  kind: string;
  label?: string;
  branch?: string;
  commit?: string;
  gpuTypes?: string;
  passed: number;
  failed: number;
  /** From the run's summary.json; undefined when its folder is not here (an imported run, a copy). */
  skipped?: number;
  notRun?: number;
  /** Tests with a figure flagged against the history's baseline. */
  regressed: number;
  /** Its report, relative to the index's folder; undefined when none is kept. */
  report?: string;
  source: string;
}

interface SummaryTotals {
  runId?: string;
  /** notRun: summary.json 2; interrupted: the same count in summary.json 1. */
  totals?: { skipped?: number; notRun?: number; interrupted?: number };
}

function readSummary(folder: string): SummaryTotals | undefined {
  try {
    return JSON.parse(readFileSync(path.join(folder, SUMMARY_JSON_FILE), 'utf8')) as SummaryTotals;
  } catch {
    return undefined;
  }
}

/** The rows of the index in `root`, newest first. */
export function runIndexRows(root: string, runs: readonly HistoryRun[]): RunIndexRow[] {
  // A run started by Vitest directly keeps its files in OUTPUT_PATH itself: the latest such run's.
  const rootSummary = readSummary(root);
  return [...runs]
    .sort((a, b) => b.endMs - a.endMs || b.runId.localeCompare(a.runId))
    .map((run) => {
      const folder = path.join(root, RUNS_FOLDER, run.runId);
      const own = existsSync(folder);
      const inRoot = !own && rootSummary?.runId === run.runId;
      const summary = own ? readSummary(folder) : inRoot ? rootSummary : undefined;
      const reportFile = own ? path.join(folder, REPORT_FILE) : inRoot ? path.join(root, REPORT_FILE) : undefined;
      const report = reportFile && existsSync(reportFile) ? path.relative(root, reportFile).split(path.sep).join('/') : undefined;
      return {
        runId: run.runId,
        start: new Date(run.startMs).toISOString(),
        end: new Date(run.endMs).toISOString(),
        kind: run.kind,
        ...(run.label && { label: run.label }),
        ...(run.branch && { branch: run.branch }),
        ...(run.commit && { commit: run.commit }),
        ...(run.gpuTypes && { gpuTypes: run.gpuTypes }),
        passed: run.passed,
        failed: run.failed,
        ...(summary?.totals && { skipped: summary.totals.skipped ?? 0, notRun: summary.totals.notRun ?? summary.totals.interrupted ?? 0 }),
        regressed: run.regressed,
        ...(report && { report }),
        source: run.source,
      };
    });
}
