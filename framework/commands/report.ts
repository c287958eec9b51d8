// `disagg-bench report [results.json|folder ...] [--output FILE] [--baseline FILE ...]
//  [--threshold PERCENT] [--fail-on-regression]`: rebuilds report.html from results alone, so
// replayed or copied results can be looked at later. Several inputs merge (later wins on the same
// test and job). Default input OUTPUT_PATH/results.json, default output report.html next to the
// first input. `disagg-bench report --index [folder] [--json]` writes the index of runs
// (index.html, one row per run of the history) into OUTPUT_PATH or the folder given.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { readSettings, SETTING_VARIABLES, type Settings } from '../settings.ts';
import { readAndMergeResults } from '../results/report/load.ts';
import { isRecordOfRun } from '../results/json.ts';
import type { TrendInput } from '../results/report/trends.ts';
import { isHistoryStoreError } from '../history/errors.ts';
import { latestRunOf } from '../history/run-ref.ts';
import { withHistory } from '../history/store.ts';
import { trendsForRun } from '../history/trends.ts';
import { buildReport } from '../results/report/build.ts';
import { REPORT_FILE } from '../results/report/render.ts';
import { readArgs } from '../../runners/common/args/read-args.ts';
import { UsageError } from '../../runners/common/errors.ts';
import { writeIndexFromHistory } from '../history/run-index.ts';
import { INDEX_FILE, indexRootOf } from '../results/index/run-index.ts';
import { readRunFacts } from '../results/run-facts.ts';
import { printJson } from './support/json-output.ts';
import { existsSync } from 'node:fs';
import { RESULTS_JSON_FILE } from '../results/json.ts';
import { runFolderOf } from '../run/run-folder.ts';

const { outputPath: OUTPUT_PATH, history: DISAGG_HISTORY } = SETTING_VARIABLES;

export const usage = `usage: disagg-bench report [results.json|folder ...] [--output report.html] [--baseline old.json]
       [--threshold 5] [--fail-on-regression]
       disagg-bench report --index [folder] [--json]
  inputs        results.json files or folders holding one (default: ${OUTPUT_PATH}, or, when it holds
                no results.json, the folder of the run ${OUTPUT_PATH}/latest names)
  --output      report file (default: report.html next to the first input)
  --baseline    previous results to compare with (repeatable); regressions are marked
  --threshold   percent a metric may worsen before it counts as a regression (default 5)
  --fail-on-regression  exit 1 when the comparison finds a regression
  With a performance history (${DISAGG_HISTORY}, default ${OUTPUT_PATH}/history.duckdb) holding the
  inputs' latest run, the report has a trend section: each test's headline metric over time with
  its baseline and threshold.
  --index       write index.html into the folder (default: ${OUTPUT_PATH}): one row per run of its
                history (${DISAGG_HISTORY}, default <folder>/history.duckdb), newest first, with its
                counts, regressions and a link to its report (runs/<run id>/report.html); a run's
                end writes it too
  --json        with --index: the rows as one JSON array on standard output`;

async function folderOf(input: string): Promise<string> {
  const info = await stat(input).catch(() => undefined);
  return info?.isDirectory() ? input : path.dirname(input);
}

/**
 * With no input: OUTPUT_PATH's results.json (a run of plain Vitest), else the folder of the run
 * `latest` names (disagg-bench run keeps each run in OUTPUT_PATH/runs/<run id>/).
 */
function defaultInput(outputPath: string): string {
  if (existsSync(path.join(outputPath, RESULTS_JSON_FILE))) return outputPath;
  return runFolderOf(outputPath) ?? outputPath;
}

/** '5' -> 0.05; an error naming the option otherwise. */
export function parseThreshold(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const percent = Number(raw.replace(/%$/, ''));
  if (raw.trim() === '' || !Number.isFinite(percent) || percent < 0) {
    throw new UsageError(`--threshold ${JSON.stringify(raw)}: expected a percentage >= 0, e.g. --threshold 5`, 'threshold');
  }
  return percent / 100;
}

/** The trend section for the latest run of the inputs, when DISAGG_HISTORY holds history of it; a broken store is one line. */
async function historyTrends(settings: Settings, inputs: string[]): Promise<TrendInput | undefined> {
  if (settings.history.target.kind === 'off') return undefined;
  const run = latestRunOf(await readAndMergeResults(inputs)).filter((r) => r.run);
  if (run.length === 0) return undefined;
  try {
    return await withHistory(settings.history.target, (store) => trendsForRun(store, run));
  } catch (error) {
    if (!isHistoryStoreError(error)) throw error;
    if (!error.empty) console.error(`report: no trend section: ${error.message}`);
    return undefined;
  }
}

/** `report --index [folder] [--json]`. */
async function runIndex(settings: Settings, folders: string[], json: boolean): Promise<number> {
  if (folders.length > 1) throw new UsageError(`--index takes one folder (the one holding runs/), got ${folders.length}`, 'index');
  // The folder stands for OUTPUT_PATH: its history (DISAGG_HISTORY's default) lists its runs.
  const own = folders[0] ? readSettings({ ...process.env, [OUTPUT_PATH]: folders[0] }) : settings;
  const outcome = await writeIndexFromHistory(own, own.outputPath);
  if (!outcome.file) {
    console.error(outcome.message);
    // No history yet is nothing wrong; a store that cannot be read is.
    return outcome.noHistory ? 0 : 1;
  }
  if (json) printJson(outcome.rows);
  else console.log(outcome.message);
  return 0;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = readArgs(argv, {
    positionals: true,
    options: {
      output: { type: 'string', short: 'o' },
      baseline: { type: 'string', short: 'b', multiple: true },
      threshold: { type: 'string' },
      'fail-on-regression': { type: 'boolean' },
      index: { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  const settings = readSettings();
  if (values.index) {
    const other = (['output', 'baseline', 'threshold', 'fail-on-regression'] as const).find((o) => values[o] !== undefined);
    if (other) throw new UsageError(`--${other} does not go with --index (the index lists runs; rebuild a run's report without --index)`, other);
    return runIndex(settings, positionals, values.json === true);
  }
  if (values.json) throw new UsageError('--json goes with --index (a report is a page, not a listing)', 'json');
  const inputs = positionals.length ? positionals : [defaultInput(settings.outputPath)];
  const folder = await folderOf(inputs[0]);
  const output = values.output ?? path.join(folder, REPORT_FILE);
  const trends = await historyTrends(settings, inputs);
  // One run's folder: its summary.json keeps the run's facts for the header (when its records are
  // that run's alone: a folder Vitest wrote into run after run holds others too), and its index is linked.
  const saved = inputs.length === 1 ? readRunFacts(folder) : undefined;
  const savedRunId = saved?.runId;
  const ownRecords = savedRunId !== undefined && (await readAndMergeResults(inputs)).every((r) => !r.run || isRecordOfRun(r, savedRunId));
  const facts = ownRecords ? saved : undefined;
  const index = path.join(indexRootOf(folder, facts?.runId), INDEX_FILE);
  const indexLink = existsSync(index) ? path.relative(path.dirname(output), index).split(path.sep).join('/') : undefined;
  const report = await buildReport({ inputs, output, baseline: values.baseline, threshold: parseThreshold(values.threshold), trends, facts, indexLink });
  const tests = new Set(report.plots.map((p) => p.testId)).size;
  console.log(`${report.file}: ${report.plots.length} plot(s) over ${tests} test(s)`);
  if (report.comparison) {
    const c = report.comparison;
    console.log(`baseline: ${c.metrics.length} metric(s) compared, ${c.regressions} regression(s), ${c.improvements} improvement(s)`);
    if (values['fail-on-regression'] && c.regressions > 0) return 1;
  }
  return 0;
}
