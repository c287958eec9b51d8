// The page around the report's sections: styles, the inlined charting library, the plot data and
// the page script. Everything is in the one file, so it opens offline and travels as one file.
import { readFileSync } from 'node:fs';
import { chartLibrarySource } from './chart-library.ts';
import { escapeHtml, jsonForScript } from './escape.ts';

const PAGE_SCRIPT = readFileSync(new URL('./page-script.js', import.meta.url), 'utf8');

/** The report's styles; the index of runs (results/index/) uses them too. */
export const STYLE = `
:root { --fg: #1d232a; --muted: #5b6670; --line: #d9dee3; --pass: #1a7f37; --fail: #c62828; --skip: #8a6d00; --bg2: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); margin: 0; padding: 20px 28px 40px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 8px; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.meta { color: var(--muted); margin: 0 0 10px; }
.counts span { display: inline-block; margin-right: 14px; font-weight: 600; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--bg2); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; }
.verdict { font-weight: 700; text-transform: uppercase; font-size: 12px; }
.verdict-passed { color: var(--pass); } .verdict-failed { color: var(--fail); } .verdict-skipped { color: var(--skip); }
tr.row-failed { background: #fff5f5; }
details summary { cursor: pointer; color: var(--muted); }
pre.failure { white-space: pre-wrap; background: #fff0f0; border-left: 3px solid var(--fail); padding: 6px 8px; margin: 6px 0; }
p.skip-reason { background: #fffbe6; border-left: 3px solid var(--skip); padding: 6px 8px; margin: 6px 0; }
dl.run-meta { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 0 0 10px; }
dl.run-meta dt { color: var(--muted); }
dl.run-meta dd { margin: 0 0 0 -12px; }
p.filter input { width: 24em; padding: 4px; }
table.runs tr.regressed td { background: #fff5f5; } table.runs td.flag { color: var(--fail); }
table.inner { width: auto; margin: 6px 0; } table.inner td, table.inner th { padding: 2px 8px; font-size: 12.5px; }
tr.regression td { background: #ffe9e9; } tr.regression td.change { color: var(--fail); font-weight: 700; }
tr.improvement td.change, tr.improvement td.flag { color: var(--pass); font-weight: 700; }
.flag { font-weight: 700; color: var(--fail); }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(600px, 1fr)); gap: 14px; }
figure.chart { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; }
figure.chart figcaption { font-weight: 600; margin-bottom: 4px; }
.chart-box { position: relative; height: 300px; }
#chart-errors { color: var(--fail); font-weight: 600; }
`;

export interface PageParts {
  title: string;
  /** Already-escaped HTML of the sections, in order. */
  sections: string[];
  /** Handed to the page script as JSON (plot specs). */
  data: unknown;
}

export function pageHtml(parts: PageParts): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(parts.title)}</title>
<style>${STYLE}</style>
</head>
<body data-rendered="0">
<p id="chart-errors" hidden></p>
${parts.sections.join('\n')}
<script type="application/json" id="report-data">${jsonForScript(parts.data)}</script>
<script>${chartLibrarySource()}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
