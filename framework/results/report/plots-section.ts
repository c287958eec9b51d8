// The report's plots, grouped by test: one <figure> and <canvas> per plot spec; the page script
// draws into the canvases. Attributes name each plot's test, axis and unit for readers and tests.
import { escapeHtml } from './escape.ts';
import type { PlotSpec } from './plots.ts';

export type { PlotSpec };

export function figure(plot: PlotSpec): string {
  return (
    `<figure class="chart" data-plot="${escapeHtml(plot.id)}" data-test="${escapeHtml(plot.testId)}" ` +
    `data-axis="${escapeHtml(plot.axis)}" data-unit="${escapeHtml(plot.unit)}" data-chart="${plot.chart}">` +
    `<figcaption>${escapeHtml(plot.title)}</figcaption>` +
    `<div class="chart-box"><canvas id="${escapeHtml(plot.id)}" role="img" aria-label="${escapeHtml(plot.title)}"></canvas></div></figure>`
  );
}

/** Plot groups by record (test id + job id); returns the HTML and test id -> anchor of its group. */
export function plotsSection(plots: PlotSpec[]): { html: string; anchors: Map<string, string> } {
  const groups = new Map<string, PlotSpec[]>();
  for (const p of plots) {
    const key = JSON.stringify([p.testId, p.jobId]);
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  const groupTests = [...groups.values()].map((g) => g[0].testId);
  const repeated = new Set(groupTests.filter((id, k) => groupTests.indexOf(id) !== k));
  const anchors = new Map<string, string>();
  const sections = [...groups.values()].map((group, k) => {
    const { testId, jobId } = group[0];
    const anchor = `plots-${k + 1}`;
    if (!anchors.has(testId)) anchors.set(testId, anchor);
    // The same test from several runs (merged files): the job id tells the groups apart.
    const job = repeated.has(testId) ? ` <span class="meta">job ${escapeHtml(jobId ?? '—')}</span>` : '';
    return `<section class="test-plots" id="${anchor}"><h3>${escapeHtml(testId)}${job}</h3><div class="charts">${group.map(figure).join('\n')}</div></section>`;
  });
  const html = plots.length
    ? `<section id="plots"><h2>Plots</h2>${sections.join('\n')}</section>`
    : '<section id="plots"><h2>Plots</h2><p class="meta">No metric repeats over a label, so there is nothing to plot.</p></section>';
  return { html, anchors };
}
