// The report's section "Trends against the history": a table of the charted metrics (regressions
// first: value, baseline, threshold, change) and one chart each (trends.ts makes their specs).
import { escapeHtml } from './escape.ts';
import { formatMetricValue, formatNumber } from './format.ts';
import { formatLabels } from './metric-key.ts';
import { figure, type PlotSpec } from './plots-section.ts';
import type { TrendInput } from './trends.ts';

export function trendSection(input: TrendInput, plots: PlotSpec[]): string {
  const parts = [
    '<section id="trends"><h2>Trends against the history</h2>',
    `<p class="meta">From ${escapeHtml(input.store)}. Baseline as upstream's perf pipeline computes it: the last 90 days of valid ` +
      `post-merge values, averaged per day, a 3-day rolling mean, then P95 (higher is better) or P5 (lower is better); ` +
      `a value beyond the threshold line is a regression. Regressions first.</p>`,
  ];
  if (input.charts.length === 0) {
    parts.push(`<p class="meta">${escapeHtml(input.note ?? 'Nothing to show.')}</p></section>`);
    return parts.join('\n');
  }
  const regressions = input.charts.filter((c) => c.regression).length;
  parts.push(`<p class="counts"><span class="${regressions ? 'flag' : ''}">${regressions} regression${regressions === 1 ? '' : 's'} against the history</span><span>${input.charts.length} charted</span></p>`);
  const rows = input.charts.map(
    (c, k) =>
      `<tr class="${c.regression ? 'regression' : ''}" data-trend="${escapeHtml(plots[k].id)}"><td class="id">${escapeHtml(c.testId)}</td><td><code>${escapeHtml(c.metric)}</code></td>` +
      `<td><code>${escapeHtml(formatLabels(c.labels))}</code></td><td class="num">${escapeHtml(formatMetricValue({ value: c.points.find((p) => p.current)?.value ?? NaN, rounded: c.rounded }))}</td>` +
      `<td class="num">${c.baseline === undefined ? '—' : escapeHtml(formatNumber(c.baseline))}</td><td>${escapeHtml(c.unit)}</td>` +
      `<td class="num">${c.threshold === undefined ? '—' : `${escapeHtml(formatNumber(c.threshold * 100))}%`}</td>` +
      `<td class="num change">${c.diffPercent === undefined ? '—' : `${c.diffPercent > 0 ? '+' : ''}${c.diffPercent.toFixed(2)}%`}</td>` +
      `<td class="flag">${c.regression ? 'REGRESSION' : ''}</td><td class="num">${c.points.length}</td></tr>`,
  );
  parts.push(
    '<table class="trends"><thead><tr><th>Test</th><th>Metric</th><th>Labels</th><th>This run</th><th>Baseline</th><th>Unit</th>' +
      `<th>Threshold</th><th>Change (+ = better)</th><th></th><th>Points</th></tr></thead><tbody>${rows.join('\n')}</tbody></table>`,
    `<div class="charts">${plots.map(figure).join('\n')}</div></section>`,
  );
  return parts.join('\n');
}
