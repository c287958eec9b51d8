// One call from results files to report.html, shared by `disagg-bench report` and the end of a run.
import { readAndMergeResults } from './load.ts';
import { renderReport, type RenderedReport } from './render.ts';
import { writeWhole } from '../../../runners/common/write-whole.ts';
import type { TrendInput } from './trends.ts';
import type { RunFacts } from '../run-facts.ts';

export interface BuildReportOptions {
  /** results.json files, or folders holding one; merged in order (later wins on the same test and job). */
  inputs: string[];
  /** The report file to write. */
  output: string;
  /** A previous results.json (or folders) to compare with. */
  baseline?: string[];
  /** Regression threshold as a fraction; default 0.05. */
  threshold?: number;
  /** The trend section's data (framework/history/trends.ts), when there is a history. */
  trends?: TrendInput;
  /** The run's own facts for the header (commits, scheduler...). */
  facts?: RunFacts;
  /** index.html of the runs, relative to the report, when there is one. */
  indexLink?: string;
}

/** Writes the report through a temporary file, so a reader never sees half a page. */
export async function writeReportFile(file: string, html: string): Promise<void> {
  await writeWhole(file, html);
}

export async function buildReport(options: BuildReportOptions): Promise<RenderedReport & { file: string }> {
  const records = await readAndMergeResults(options.inputs);
  const baseline = options.baseline?.length ? await readAndMergeResults(options.baseline) : undefined;
  const report = renderReport({
    records,
    baseline,
    threshold: options.threshold,
    sources: options.inputs,
    baselineSources: options.baseline,
    trends: options.trends,
    facts: options.facts,
    indexLink: options.indexLink,
  });
  await writeReportFile(options.output, report.html);
  return { ...report, file: options.output };
}
