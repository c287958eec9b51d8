// The report's table of tests: one row per record (id, type, category, verdict, job, scheduler
// state, duration) with the failures (a log's problems among them), a skip's reason and the
// metrics in an expandable cell.
import { pathToFileURL } from 'node:url';
import type { TestRecord } from '../json.ts';
import { formatDuration } from '../test-timing.ts';
import { escapeHtml } from './escape.ts';
import { formatMetricValue } from './format.ts';
import { END_STATE_ORDER, END_STATES, TIME_WORDS } from '../test-states.ts';

/** The verdicts a record can hold (a test not run has no record). */
const RECORD_VERDICTS = END_STATES.filter((v) => v !== 'not run');
import { formatLabels } from './metric-key.ts';

function metricsTable(record: TestRecord): string {
  if (record.metrics.length === 0) return '<p class="meta">No metrics.</p>';
  const rows = record.metrics.map(
    (m) =>
      `<tr><td><code>${escapeHtml(m.name)}</code></td><td><code>${escapeHtml(formatLabels(m.labels))}</code></td>` +
      `<td class="num"${m.rounded === undefined ? '' : ` title="printed rounded to ${m.rounded}"`}>${escapeHtml(formatMetricValue(m))}</td><td>${escapeHtml(m.unit)}</td></tr>`,
  );
  return `<table class="inner"><thead><tr><th>Metric</th><th>Labels</th><th>Value</th><th>Unit</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function facts(record: TestRecord): string {
  const items: [string, string | undefined][] = [
    ['config', record.configPath],
    ['logs', record.logDir],
    ['host', record.host],
    ['GPU', record.gpuType],
    ['start', record.timing.start],
    ['end', record.timing.end],
  ];
  return items
    .filter(([, v]) => v)
    .map(([k, v]) => `<span class="meta">${escapeHtml(k)}:</span> <code>${escapeHtml(v)}</code>`)
    .join('<br>');
}

function detailsCell(record: TestRecord): string {
  const failures = record.failures.map((f) => `<pre class="failure">${escapeHtml(f)}</pre>`).join('');
  const skip = record.skipReason ? `<p class="skip-reason">${escapeHtml(`skipped: ${record.skipReason}`)}</p>` : '';
  const parts = [
    record.failures.length ? `${record.failures.length} failure${record.failures.length > 1 ? 's' : ''}` : '',
    record.skipReason ? 'skipped' : '',
    `${record.metrics.length} metric${record.metrics.length === 1 ? '' : 's'}`,
  ].filter(Boolean);
  // Failures are why people open the report: their details start open.
  const open = record.failures.length ? ' open' : '';
  return `<details${open}><summary>${escapeHtml(parts.join(', '))}</summary>${failures}${skip}${metricsTable(record)}${facts(record)}</details>`;
}

/** The record's first headline figure (its type's TestType.headline), as `NAME (labels) value unit`. */
function headlineCell(record: TestRecord): string {
  const ref = record.headline?.[0];
  const m = ref && record.metrics.find((x) => x.name === ref.name && formatLabels(x.labels) === formatLabels(ref.labels));
  if (!m) return '—';
  const labels = formatLabels(m.labels);
  return `<code>${escapeHtml(m.name)}</code>${labels ? ` <span class="meta">${escapeHtml(labels)}</span>` : ''} <b>${escapeHtml(formatMetricValue(m))}</b> ${escapeHtml(m.unit)}`;
}

/** Job run and queue time (the scheduler's start and end, in the words of test-states.ts) when known, else the test's span. */
function timesCell(record: TestRecord): string {
  const run = record.job?.runSec;
  if (run === undefined) return escapeHtml(formatDuration(record.timing.durationSec));
  const queue = record.job?.queueSec;
  return `${escapeHtml(formatDuration(run))}${queue === undefined ? '' : ` <span class="meta">${TIME_WORDS.queue.word} ${escapeHtml(formatDuration(queue))}</span>`}`;
}

/** Filter, search and sort over the rows (the page script wires them; without it every row shows, in run order). */
const FILTER = '<p class="filter"><input type="search" id="test-filter" placeholder="Search tests (id, type, reason)" aria-label="Search tests"> ' +
  `<select id="verdict-filter" aria-label="Verdict"><option value="">every verdict</option>${RECORD_VERDICTS.map((v) => `<option>${v}</option>`).join('')}</select> ` +
  '<label class="meta">sort by <select id="test-sort" aria-label="Sort tests"><option value="">run order</option><option value="name">name</option>' +
  '<option value="verdict">verdict (failed first)</option><option value="change">headline change (worst first)</option></select></label> ' +
  '<span class="meta" id="filter-count"></span></p>';

/**
 * The headline's change against its baseline from the history (percent, + = better), the sort's
 * key; absent when the headline was not checked or was below its printed resolution.
 */
function headlineChange(record: TestRecord): number | undefined {
  const ref = record.headline?.[0];
  if (!ref) return undefined;
  const finding = record.regression?.findings.find((f) => f.metric === ref.name && formatLabels(f.labels) === formatLabels(ref.labels));
  return finding && Number.isFinite(finding.diffPercent) ? finding.diffPercent : undefined;
}

/** `plotAnchors`: test id -> the id of its plots section, for a link from the row. */
export function testsTable(records: TestRecord[], plotAnchors: Map<string, string>): string {
  const rows = records.map((r) => {
    const anchor = plotAnchors.get(r.testId);
    const id = anchor ? `<a href="#${escapeHtml(anchor)}">${escapeHtml(r.testId)}</a>` : escapeHtml(r.testId);
    const change = headlineChange(r);
    return (
      `<tr class="row-${escapeHtml(r.verdict)}" data-test="${escapeHtml(r.testId)}" data-verdict-rank="${END_STATE_ORDER[r.verdict] ?? END_STATES.length}"${change === undefined ? '' : ` data-change="${change}"`}>` +
      `<td class="id">${id}</td><td>${escapeHtml(r.type)}</td><td>${escapeHtml(r.category)}</td>` +
      `<td class="verdict verdict-${escapeHtml(r.verdict)}">${escapeHtml(r.verdict)}${r.regression?.findings.some((f) => f.regression) ? ' <span class="flag">REGRESSED</span>' : ''}</td>` +
      `<td><code>${escapeHtml(r.jobId ?? '—')}</code></td><td>${escapeHtml(r.schedulerState ?? '—')}</td>` +
      `<td>${headlineCell(r)}${r.skipReason ? `<p class="skip-reason">${escapeHtml(r.skipReason)}</p>` : ''}</td>` +
      `<td class="num">${timesCell(r)}</td><td>${r.logDir ? `<a class="logs" href="${escapeHtml(pathToFileURL(r.logDir).href)}">logs</a>` : '—'}</td><td>${detailsCell(r)}</td></tr>`
    );
  });
  return (
    `<section id="tests"><h2>Tests</h2>${FILTER}<table class="tests"><thead><tr>` +
    `<th>Test</th><th>Type</th><th>Category</th><th>Verdict</th><th>Job</th><th>Scheduler state</th><th>Headline</th><th>${TIME_WORDS.run.word} time (${TIME_WORDS.queue.word})</th><th>Logs</th><th>Details</th>` +
    `</tr></thead><tbody>${rows.join('\n')}</tbody></table></section>`
  );
}
