// One folder per run: `disagg-bench run` writes a run's results.json, CSV, report.html, ledger and
// logs into OUTPUT_PATH/runs/<run id>/ (the framework sees that folder as its OUTPUT_PATH), and
// OUTPUT_PATH/latest names the last run's folder from the moment it starts. What accumulates
// across runs stays at OUTPUT_PATH: the history store (DISAGG_HISTORY's default) and upstream's
// cumulative perf_script_test_results.csv, to which each run's rows are appended as upstream does.
// --resume and --replay continue or replay the run `latest` names, in its folder, under its id.
import { appendFileSync, existsSync, readdirSync, readFileSync, readlinkSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PERF_CSV_FILE } from '../results/csv.ts';
import { RUNS_FOLDER } from '../results/index/runs-folder.ts';
import { HISTORY_FILE } from '../settings.ts';
import { makeFolders } from '../suite/output-path.ts';
import { newRunId } from '../suite/run-id.ts';
import { InputError } from '../../runners/common/errors.ts';

/** One name for runs/, shared with the index of runs that links into it (results/index/). */
export { RUNS_FOLDER } from '../results/index/runs-folder.ts';
export const LATEST_LINK = 'latest';
/** In a run's folder: how many of its CSV rows are already in the cumulative CSV (a resumed run appends the rest). */
const APPENDED_MARK = '.csv-rows-appended';

export interface RunFolder {
  root: string;
  runId: string;
  folder: string;
}

/** The run `latest` names under `root`, or undefined. */
export function latestRun(root: string): string | undefined {
  try {
    return path.basename(readlinkSync(path.join(root, LATEST_LINK)));
  } catch {
    return undefined;
  }
}

/**
 * The folder of run `id` under `root` (runs/<id>/), or of the run `latest` names when no id is
 * given: where `cleanup` and `report` find a run of `disagg-bench run`. Undefined when there is none.
 */
export function runFolderOf(root: string, id?: string): string | undefined {
  const runId = id ?? latestRun(root);
  if (!runId || runId.includes('/') || runId.startsWith('.')) return undefined;
  const folder = path.join(root, RUNS_FOLDER, runId);
  try {
    return statSync(folder).isDirectory() ? folder : undefined;
  } catch {
    return undefined;
  }
}

/** Every run folder under root/runs/, oldest name first (run ids sort by their start). */
export function allRunFolders(root: string): string[] {
  try {
    return readdirSync(path.join(root, RUNS_FOLDER)).sort().map((id) => runFolderOf(root, id)).filter((f): f is string => f !== undefined);
  } catch {
    return [];
  }
}

/** The folder of a new run, or (continuing: --resume, --replay) of the run `latest` names; `latest` points to it. */
export function openRunFolder(root: string, continuing: string | undefined): RunFolder {
  let runId = newRunId();
  if (continuing) {
    const latest = latestRun(root);
    if (!latest) throw new InputError(`${continuing}: ${path.join(root, LATEST_LINK)} names no run to continue; \`disagg-bench run\` keeps each run in ${path.join(root, RUNS_FOLDER)}/<run id>/ and \`latest\` names the last`, { file: root });
    runId = latest;
  }
  const folder = path.join(root, RUNS_FOLDER, runId);
  makeFolders(folder);
  // Replaced by rename, so a reader never finds no `latest` between two runs.
  const link = path.join(root, `.${LATEST_LINK}-${process.pid}`);
  symlinkSync(path.join(RUNS_FOLDER, runId), link);
  renameSync(link, path.join(root, LATEST_LINK));
  return { root, runId, folder };
}

/** The variables that point the framework at the run's folder, keeping the history at OUTPUT_PATH. */
export function runFolderEnv(run: RunFolder, env: NodeJS.ProcessEnv): Record<string, string> {
  return {
    OUTPUT_PATH: run.folder,
    DISAGG_RUN_ID: run.runId,
    ...(env.DISAGG_HISTORY ? {} : { DISAGG_HISTORY: path.join(run.root, HISTORY_FILE) }),
  };
}

/** Appends the run's CSV rows not appended yet to OUTPUT_PATH's cumulative CSV (its header once). Synchronous: it runs on exit. */
export function appendToCumulativeCsv(run: RunFolder): number {
  const own = path.join(run.folder, PERF_CSV_FILE);
  if (!existsSync(own)) return 0;
  const [header, ...rows] = readFileSync(own, 'utf8').split('\n').filter((l) => l !== '');
  const mark = path.join(run.folder, APPENDED_MARK);
  const done = existsSync(mark) ? Number(readFileSync(mark, 'utf8')) || 0 : 0;
  const fresh = rows.slice(done);
  if (fresh.length === 0) return 0;
  const cumulative = path.join(run.root, PERF_CSV_FILE);
  appendFileSync(cumulative, (existsSync(cumulative) ? '' : `${header}\n`) + fresh.map((r) => `${r}\n`).join(''));
  writeFileSync(mark, String(rows.length));
  return fresh.length;
}
