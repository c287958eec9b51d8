// The digest as text: the terminal's last lines after a run, and summary.md (a Markdown table to
// paste into a pull request or a chat). Both say the same things in the same order, ending with
// what a reader of a log's tail needs: regressions, skipped tests, tests not run, the totals
// and where the report is.
import type { Digest, DigestFigure, DigestHeadline, DigestTest } from './digest.ts';
import { caughtSizeText, caughtText, type GateSensitivity } from '../gate-sensitivity.ts';
import { labelsText } from './digest.ts';
import { belowResolutionText } from '../../metrics/resolution.ts';
import { STATE_WORDS, TIME_WORDS } from '../test-states.ts';

/** Regression lines the terminal shows (the headline's first); summary.md and summary.json list every one. */
const MAX_TERMINAL_REGRESSIONS = 5;

/** The verdict words of the one vocabulary (test-states.ts), as the live progress prints them. */
const VERDICT_WORD = (verdict: DigestTest['verdict']) => STATE_WORDS[verdict].word;

/** A figure as read: 4 significant digits, no exponent for everyday sizes. */
export function figure(value: number): string {
  if (value === 0 || !Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1e-6 && abs < 1e7) return String(Number(value.toPrecision(4)));
  return value.toExponential(3);
}

const signed = (percent: number) => `${percent >= 0 ? '+' : ''}${percent.toFixed(1)}%`;
const seconds = (s: number | undefined) => (s === undefined ? '-' : s >= 100 ? `${Math.round(s)} s` : `${Number(s.toPrecision(2))} s`);

function headlineText(h: DigestHeadline | undefined): string {
  if (!h) return '-';
  const labels = labelsText(h.labels);
  // printed rounded to zero: said as below its step, never as a 0
  const value = h.belowResolution ? belowResolutionText(h) : figure(h.value);
  return `${h.metric}${labels ? `{${labels}}` : ''} ${value} ${h.unit}`;
}

/** Groups of the terminal's figures line per test (one group per set of labels, e.g. a concurrency); summary.md has them all. */
const MAX_TERMINAL_FIGURE_GROUPS = 4;

/** A test's headline figures grouped by their labels: `{concurrency=1} A 1 x, B 2 y; {concurrency=4} ...`. */
function figureGroups(figures: DigestFigure[]): string[] {
  const groups = new Map<string, string[]>();
  for (const f of figures) {
    const key = labelsText(f.labels);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(`${f.metric} ${figure(f.value)} ${f.unit}`);
  }
  return [...groups].map(([labels, parts]) => `${labels ? `{${labels}} ` : ''}${parts.join(', ')}`);
}

/** Change against the previous run, as a plain change of the value. */
const previousText = (h: DigestHeadline | undefined) => (h?.previous ? signed(h.previous.changePercent) : '-');

/**
 * Change against the level the gate judged, in the metric's own terms like "vs previous", with the
 * gate's word: REGRESSED (an alert opened), ALERT <id> (one still open), suspect (worse, not yet
 * significant), or why the figure is not judged.
 */
function baselineText(h: DigestHeadline | undefined): string {
  const b = h?.baseline;
  if (!b) return '-';
  if (b.status === 'unjudged') return `not judged (${b.note?.replace(/: not judged yet$/, '') ?? 'too little history'})`;
  const mark = b.status === 'still-regressed' ? ` ALERT ${b.alertId ?? ''}`.trimEnd() : h.regression ? ' REGRESSED' : b.status === 'suspect' ? ' suspect' : b.status === 'recovered' ? ' recovered' : '';
  return `${signed(b.changePercent)}${mark}`;
}

/** What a quiet verdict rules out, and where the gate sees least: one line under the verdict. */
export function sensitivityText(s: GateSensitivity): string {
  const l = s.least;
  const labels = labelsText(l.labels);
  const blind = s.blind ? `; ${s.blind} figure(s) too noisy for any worsening to alert` : '';
  return `gate sensitivity: the worsening caught ${Math.round(s.power * 100)} % of the time, median of ${s.figures} judged gating figure(s): ${caughtSizeText(s.medianOneRun)} on its first run, ${caughtSizeText(s.medianByTwoRuns)} by its second; least sensitive: ${l.testId} ${l.metric}${labels ? `{${labels}}` : ''} (${caughtText(l.oneRun, l.byTwoRuns)})${blind}`;
}

function totalsLine(d: Digest): string {
  const t = d.totals;
  const parts = [`${t.passed} passed`, `${t.failed} failed`, `${t.skipped} skipped`];
  if (t.notRun) parts.push(`${t.notRun} not run`);
  parts.push(`${t.regressed} regressed`);
  return `${t.tests} test(s): ${parts.join(', ')}${d.runId ? ` (run ${d.runId})` : ''}`;
}

function regressionLines(d: Digest): string[] {
  return d.regressions.map((r) => {
    const labels = labelsText(r.labels);
    const what = r.mode === 'fail' ? 'failed the test' : 'reported (DISAGG_REGRESSION=warn)';
    if (r.rule === 'robust') {
      const alert = r.status === 'still-regressed' ? `alert ${r.alertId} still open` : r.alertId ? `alert ${r.alertId} opened` : 'a regression';
      return `${r.testId}: ${r.metric}${labels ? `{${labels}}` : ''} ${figure(r.value)} ${r.unit} against its level ${figure(r.baseline)} ${r.unit} `
        + `(${signed((r.change ?? 0) * 100)}, noise ${((r.scale ?? 0) * 100).toFixed(1)}%, threshold ${(r.threshold * 100).toFixed(1)}%, ${r.runs ?? r.days} post-merge run(s)): ${alert}; ${what}`;
    }
    return `${r.testId}: ${r.metric}${labels ? `{${labels}}` : ''} ${figure(r.value)} ${r.unit} against baseline ${figure(r.baseline)} ${r.unit} `
      + `(${signed(r.diffPercent)} as upstream states it, positive = better; threshold ${(r.threshold * 100).toFixed(1)}%; baseline from ${r.days} day(s) of post-merge history, upstream's rule): ${what}`;
  });
}

/**
 * Why the "vs baseline" column is empty in every row, when it is: without it a first run's column
 * of dashes reads like a gate that did not work.
 */
function noBaselineLine(d: Digest): string | undefined {
  if (!d.tests.some((t) => t.headline) || d.tests.some((t) => t.headline?.baseline)) return undefined;
  const kind = d.run?.kind;
  const own = kind && kind !== 'post-merge' ? `; this run is ${kind}, never a baseline itself (--run-kind post-merge makes one)` : '';
  return `vs baseline: no figure has a baseline yet: baselines come from earlier post-merge runs of the same test (docs/history.md)${own}`;
}

/** The tail of the terminal: one line per test, then what to act on. */
export function digestTerminal(d: Digest): string {
  const rows = d.tests.map((t) => [VERDICT_WORD(t.verdict), t.testId, headlineText(t.headline), previousText(t.headline), baselineText(t.headline), seconds(t.runSec), seconds(t.queueSec)]);
  const header = ['', 'test', 'headline', 'vs previous', 'vs baseline', TIME_WORDS.run.word, TIME_WORDS.queue.word];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  const out = ['', `disagg-bench run digest${d.runId ? ` (${d.runId})` : ''}`, line(header), ...rows.map(line)];
  const why = noBaselineLine(d);
  if (why) out.push(why);
  for (const t of d.tests.filter((x) => x.figures)) {
    const groups = figureGroups(t.figures!);
    const more = groups.length > MAX_TERMINAL_FIGURE_GROUPS ? `; ... ${groups.length - MAX_TERMINAL_FIGURE_GROUPS} more in ${d.files.summaryMd}` : '';
    out.push(`figures: ${t.testId}: ${groups.slice(0, MAX_TERMINAL_FIGURE_GROUPS).join('; ')}${more}`);
  }
  for (const t of d.tests.filter((x) => x.verdict === 'failed' && !x.regressed)) out.push(`failed: ${t.testId}: ${t.failures[0] ?? 'no reason recorded'}`);
  // a noisy run can regress dozens of figures: the tail keeps room for the rest, summary.md has them all
  const regressions = regressionLines(d);
  for (const r of regressions.slice(0, MAX_TERMINAL_REGRESSIONS)) out.push(`REGRESSION ${r}`);
  if (regressions.length > MAX_TERMINAL_REGRESSIONS) out.push(`REGRESSION ... and ${regressions.length - MAX_TERMINAL_REGRESSIONS} more regressed figure(s), every one in ${d.files.summaryMd}`);
  for (const a of d.openAlerts ?? []) out.push(`OPEN ALERT ${a}`);
  for (const t of d.tests.filter((x) => x.verdict === 'skipped')) out.push(`skipped: ${t.testId}: ${t.skipReason ?? 'no reason recorded'}`);
  const notRun = d.tests.filter((x) => x.verdict === 'not run');
  if (notRun.length > 0) out.push(`not run: ${notRun.map((t) => t.testId).join(', ')}${d.resume ? `; continue with: ${d.resume}` : ''}`);
  if (d.gateSensitivity) out.push(sensitivityText(d.gateSensitivity));
  for (const note of d.notes) out.push(note);
  out.push(totalsLine(d));
  if (d.files.report) out.push(`report: ${d.files.report}`);
  if (d.files.index) out.push(`runs: ${d.files.index}`);
  out.push(`summary: ${d.files.summaryMd}`);
  return out.join('\n') + '\n';
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** summary.md: the same digest as Markdown. */
export function digestMarkdown(d: Digest): string {
  const out = [`# disagg-bench run${d.runId ? ` ${d.runId}` : ''}`, '', `**${totalsLine(d)}**`, ''];
  if (d.start) out.push(`From ${d.start} to ${d.end}.`, '');
  out.push('| | test | headline | vs previous | vs baseline | run | queue |', '|---|---|---|---|---|---|---|');
  for (const t of d.tests) {
    out.push(`| ${VERDICT_WORD(t.verdict)} | ${cell(t.testId)} | ${cell(headlineText(t.headline))} | ${previousText(t.headline)} | ${baselineText(t.headline)} | ${seconds(t.runSec)} | ${seconds(t.queueSec)} |`);
  }
  const section = (title: string, lines: string[]) => {
    if (lines.length > 0) out.push('', `## ${title}`, '', ...lines.map((l) => `- ${cell(l)}`));
  };
  section('Figures', d.tests.filter((t) => t.figures).map((t) => `${t.testId}: ${figureGroups(t.figures!).join('; ')}`));
  section('Regressions', regressionLines(d));
  section('Open alerts (until the series comes back or `disagg-bench history ack ID --reason ...`)', d.openAlerts ?? []);
  section('Gate sensitivity', d.gateSensitivity ? [sensitivityText(d.gateSensitivity).replace(/^gate sensitivity: /, '')] : []);
  section('Failed', d.tests.filter((t) => t.verdict === 'failed').map((t) => `${t.testId}: ${t.failures.join('; ') || 'no reason recorded'}`));
  section('Skipped', d.tests.filter((t) => t.verdict === 'skipped').map((t) => `${t.testId}: ${t.skipReason ?? 'no reason recorded'}`));
  section('Not run', d.tests.filter((t) => t.verdict === 'not run').map((t) => `${t.testId}${d.resume ? `: continue with \`${d.resume}\`` : ''}`));
  section('Notes', d.notes);
  out.push('', `Results: \`${d.files.results}\`${d.files.report ? `; report: \`${d.files.report}\`` : ''}${d.files.index ? `; every run: \`${d.files.index}\`` : ''}.`, '');
  return out.join('\n');
}
