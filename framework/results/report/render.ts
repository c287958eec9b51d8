// report.html from records: the header with counts, the tests table, the baseline comparison when
// a baseline is given, and the plots. Pure apart from reading the inlined scripts once.
import { gateSensitivity } from '../gate-sensitivity.ts';
import { sensitivityText } from '../digest/digest-text.ts';
import { hostname } from 'node:os';
import type { TestRecord } from '../json.ts';
import { compareResults, DEFAULT_REGRESSION_THRESHOLD, type Comparison } from './compare.ts';
import { comparisonSection } from './comparison-section.ts';
import { escapeHtml } from './escape.ts';
import { latestPerTest } from './load.ts';
import { planPlots, type PlotSpec } from './plots.ts';
import { plotsSection } from './plots-section.ts';
import { pageHtml } from './template.ts';
import type { RunFacts } from '../run-facts.ts';
import { testsTable } from './tests-table.ts';
import { drawableTrends, trendPlots, type TrendInput } from './trends.ts';
import { trendSection } from './trend-section.ts';

export { REPORT_FILE } from './report-file.ts';

export interface ReportInput {
  records: TestRecord[];
  /** Records of a previous run to compare with. */
  baseline?: TestRecord[];
  /** Fraction a metric may worsen before it is marked a regression; default 0.05. */
  threshold?: number;
  /** Where the records came from, shown in the header. */
  sources?: string[];
  baselineSources?: string[];
  /** Default now. */
  generatedAt?: Date;
  title?: string;
  /** Series from the performance history, when the run keeps one (framework/history/trends.ts). */
  trends?: TrendInput;
  /** What the run is beside its tests (commits, scheduler...), for the header. */
  facts?: RunFacts;
  /** The index of runs (index.html), linked from the header, relative to the report. */
  indexLink?: string;
}

export interface RenderedReport {
  html: string;
  plots: PlotSpec[];
  comparison?: Comparison;
}

/**
 * The run(s) the records came from: id, label, kind, scheduler, GPU type, the commit and branch of
 * the configs (WORK_DIR) and of disagg-bench itself, start and end. What the records say comes
 * first (a folder Vitest wrote into run after run holds several runs); the run's own facts (given
 * at the run's end, or read back from its summary.json) say the rest.
 */
function runMetadata(records: TestRecord[], facts: RunFacts = {}): string {
  const distinct = (values: (string | undefined)[]) => [...new Set(values.filter((v): v is string => !!v))].join(', ');
  const ran = records.filter((r) => r.verdict !== 'skipped');
  const starts = ran.map((r) => r.timing.start).sort();
  const ends = ran.map((r) => r.timing.end).sort();
  const items: [string, string | undefined][] = [
    ['run', distinct(records.map((r) => r.run?.id)) || facts.runId],
    ['label', distinct(records.map((r) => r.run?.label)) || facts.label],
    ['run kind', distinct(records.map((r) => r.run?.kind)) || facts.kind],
    ['scheduler', facts.scheduler],
    ['GPU type', distinct(records.map((r) => r.gpuType)) || facts.gpuType],
    ['configs commit', distinct(records.map((r) => r.run?.commit)) || facts.configs?.commit],
    ['configs branch', distinct(records.map((r) => r.run?.branch)) || facts.configs?.branch],
    ['disagg-bench commit', facts.project?.commit],
    ['disagg-bench branch', facts.project?.branch],
    ['disagg-bench version', facts.project?.version],
    ['start', starts[0] ?? facts.start],
    ['end', ends.at(-1) ?? facts.end],
  ];
  const shown = items.filter(([, v]) => v).map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd><code>${escapeHtml(v)}</code></dd>`);
  return `<dl class="run-meta" id="run-meta">${shown.join('')}</dl>`;
}

function header(input: ReportInput, comparison: Comparison | undefined): string {
  const count = (v: TestRecord['verdict']) => input.records.filter((r) => r.verdict === v).length;
  const hosts = [...new Set(input.records.map((r) => r.host).filter(Boolean))];
  const gpus = [...new Set(input.records.map((r) => r.gpuType).filter(Boolean))];
  const sources = (input.sources ?? []).map((s) => `<code>${escapeHtml(s)}</code>`).join(', ');
  const regressions = comparison
    ? `<span class="${comparison.regressions ? 'flag' : ''}">${comparison.regressions} regression${comparison.regressions === 1 ? '' : 's'} vs baseline</span>`
    : '';
  // The gate's verdict, as the digest and the index count it: tests with a regressed figure.
  const regressed = input.records.filter((r) => r.regression?.findings.some((f) => f.regression)).length;
  const open = input.trends?.openAlerts?.length ?? 0;
  const gate = `<span class="${regressed ? 'flag' : ''}" id="regressed-count">${regressed} regressed</span>${open ? `<span class="flag"><a href="#open-alerts">${open} open alert${open === 1 ? '' : 's'}</a></span>` : ''}`;
  const sensitivity = gateSensitivity(input.records.flatMap((r) => (r.regression?.findings ?? []).map((f) => ({ testId: r.testId, ...f }))));
  return [
    `<header><h1>${escapeHtml(input.title ?? 'disagg-bench report')}</h1>`,
    input.indexLink ? `<p class="meta"><a id="index-link" href="${escapeHtml(input.indexLink)}">All runs</a></p>` : '',
    runMetadata(input.records, input.facts),
    `<p class="meta">Generated ${escapeHtml((input.generatedAt ?? new Date()).toISOString())} on ${escapeHtml(hostname())}` +
      `${sources ? ` from ${sources}` : ''}${hosts.length ? ` · hosts ${escapeHtml(hosts.join(', '))}` : ''}` +
      `${gpus.length ? ` · GPU ${escapeHtml(gpus.join(', '))}` : ''}</p>`,
    `<p class="counts"><span>${input.records.length} tests</span><span class="verdict-passed">${count('passed')} passed</span>` +
      `<span class="verdict-failed">${count('failed')} failed</span><span class="verdict-skipped">${count('skipped')} skipped</span>${gate}${regressions}</p>` +
      `${sensitivity ? `<p class="meta" id="gate-sensitivity">${escapeHtml(sensitivityText(sensitivity))}</p>` : ''}</header>`,
  ].join('\n');
}

/** The alerts still open in the history: shown until their series comes back or someone acknowledges them. */
function openAlertsSection(lines: readonly string[]): string {
  return `<section id="open-alerts"><h2>Open alerts</h2><p class="meta">Changes the regression gate found, open until the series comes back or \`disagg-bench history ack ID --reason ...\` accepts the new level.</p><ul>${lines.map((l) => `<li class="flag"><code>${escapeHtml(l)}</code></li>`).join('')}</ul></section>`;
}

export function renderReport(input: ReportInput): RenderedReport {
  const comparison = input.baseline ? compareResults(input.records, input.baseline, input.threshold ?? DEFAULT_REGRESSION_THRESHOLD) : undefined;
  const plots = planPlots(input.records, input.baseline ? latestPerTest(input.baseline) : undefined);
  const plotHtml = plotsSection(plots);
  const sections = [header(input, comparison), testsTable(input.records, plotHtml.anchors)];
  if (comparison) sections.push(comparisonSection(comparison, input.baselineSources ?? []));
  // The trend section sits right after the tests: its regressions are the run's news.
  const drawable = input.trends && drawableTrends(input.trends);
  const trends = drawable ? trendPlots(drawable) : [];
  if (drawable) sections.splice(2, 0, trendSection(drawable, trends));
  if (input.trends?.openAlerts?.length) sections.splice(2, 0, openAlertsSection(input.trends.openAlerts));
  sections.push(plotHtml.html);
  const html = pageHtml({ title: input.title ?? 'disagg-bench report', sections, data: { plots: [...plots, ...trends] } });
  return { html, plots, comparison };
}
