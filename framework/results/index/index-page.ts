// index.html: the runs of the history as one table, newest first (run-index.ts makes the rows).
// A plain page in the report's styles: no charts, no script, so it opens anywhere at once.
import { escapeHtml } from '../report/escape.ts';
import { STYLE } from '../report/template.ts';
import type { RunIndexRow } from './run-index.ts';

/** Rows the page lists: the newest; a history of years would make a page no browser opens quickly. */
export const MAX_INDEX_ROWS = 1000;

export interface IndexPageInput {
  rows: RunIndexRow[];
  /** The history store, as messages name it. */
  store: string;
  generatedAt?: Date;
}

const when = (iso: string) => iso.slice(0, 19).replace('T', ' ');
const count = (n: number | undefined, cls = '') => `<td class="num${n && cls ? ` ${cls}` : ''}">${n === undefined ? '—' : n}</td>`;

function row(r: RunIndexRow): string {
  const id = r.report ? `<a href="${escapeHtml(r.report)}">${escapeHtml(r.runId)}</a>` : escapeHtml(r.runId);
  const commit = r.commit ? `<code title="${escapeHtml(r.commit)}">${escapeHtml(r.commit.slice(0, 12))}</code>` : '—';
  const report = r.report ? `<a class="report" href="${escapeHtml(r.report)}">report</a>` : `<span class="meta">${r.source === 'run' ? 'not kept' : escapeHtml(r.source)}</span>`;
  const classes = [r.regressed ? 'regressed' : '', r.failed ? 'row-failed' : ''].filter(Boolean).join(' ');
  return (
    `<tr${classes ? ` class="${classes}"` : ''} data-run="${escapeHtml(r.runId)}"><td class="id">${id}</td>` +
    `<td>${escapeHtml(when(r.start))}</td><td>${escapeHtml(when(r.end))}</td><td>${escapeHtml(r.label ?? '')}</td><td>${escapeHtml(r.kind)}</td>` +
    `<td>${escapeHtml(r.branch ?? '—')}</td><td>${commit}</td><td>${escapeHtml(r.gpuTypes ?? '—')}</td>` +
    `${count(r.passed)}${count(r.failed, 'verdict-failed')}${count(r.skipped)}${count(r.notRun)}${count(r.regressed, 'flag')}<td>${report}</td></tr>`
  );
}

export function indexPageHtml(input: IndexPageInput): string {
  const title = 'disagg-bench runs';
  const shown = input.rows.slice(0, MAX_INDEX_ROWS);
  const older = input.rows.length - shown.length;
  const more = older > 0 ? `<p class="meta" id="older-runs">${older} older run(s) not listed: \`disagg-bench history runs\` lists every one.</p>` : '';
  const body = input.rows.length
    ? '<table class="runs"><thead><tr><th>Run</th><th>Start (UTC)</th><th>End (UTC)</th><th>Label</th><th>Kind</th><th>Configs branch</th>' +
      '<th>Configs commit</th><th>GPU</th><th>Passed</th><th>Failed</th><th>Skipped</th><th>Not run</th><th>Regressed</th><th>Report</th></tr></thead>' +
      `<tbody>${shown.map(row).join('\n')}</tbody></table>${more}`
    : '<p class="meta" id="no-runs">The history holds no run yet.</p>';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>${title}</h1>
<p class="meta">${input.rows.length} run(s) from ${escapeHtml(input.store)}, newest first · generated ${escapeHtml((input.generatedAt ?? new Date()).toISOString())}.
Skipped and not-run counts come from each run's summary.json (— where its folder is not here); Regressed counts the tests with a figure beyond its baseline.</p></header>
<section id="runs">${body}</section>
</body>
</html>
`;
}
