// Two runs as a perf engineer reads them the morning after, in headless Chromium (Debian's
// chromium package): the second run's report and the index of runs, both written by the product
// from a real DuckDB history of the two runs (tests/fixtures/report/two-runs.ts). The report shows
// the run's metadata (commits and branches of the configs and of disagg-bench, scheduler, label,
// kind, span), trend cards titled by test and metric, the filter and the sort (the page's own
// script reorders the rows: ?sort=verdict), and draws no chart of a series printed rounded to zero;
// the index lists both runs newest first, each row linking to a report that is there.
// DISAGG_NO_BROWSER=1 skips this file where no browser can be installed.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, skipBrowser } from '../fixtures/report/chromium.ts';
import { CONFIGS_COMMIT, EP, KVPIPE, PROJECT_COMMIT, RUN_IDS, SWEEP, writeTwoRuns } from '../fixtures/report/two-runs.ts';

const root = mkdtempSync(path.join(tmpdir(), 'runs-browser-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The attributes of <body> and the rows of a table as Chromium left them after the page's scripts ran. */
const bodyOf = (dom: string) => /<body\b[^>]*>/.exec(dom)?.[0] ?? '';
const reportData = (dom: string) =>
  JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(dom)![1]) as { plots: { id: string; title: string; series: { metric: string; values: (number | null)[] }[] }[] };

describe.skipIf(skipBrowser)('two runs in headless Chromium: the report and the index of runs', () => {
  let folders: string[];
  beforeAll(async () => {
    folders = await writeTwoRuns(root);
  }, 120_000);

  it("the second run's report: metadata, titled trend cards, filter and sort, no chart of a series rounded to zero", async () => {
    const dom = await chromium(path.join(folders[1], 'report.html'), root, ['--dump-dom'], 2000, '?sort=verdict');
    const body = bodyOf(dom);
    expect(body).toContain('data-filter="ready"');
    expect(body).toContain('data-sort="verdict"');
    const charts = Number(/data-charts="(\d+)"/.exec(body)![1]);
    expect(charts).toBeGreaterThan(0);
    expect(body).toContain(`data-rendered="${charts}"`);

    const meta = /<dl class="run-meta" id="run-meta">(.*?)<\/dl>/s.exec(dom)?.[1] ?? '';
    const items: [string, string][] = [
      ['run', RUN_IDS[1]], ['label', 'nightly'], ['run kind', 'post-merge'], ['scheduler', 'slurm'],
      ['configs commit', CONFIGS_COMMIT], ['configs branch', 'main'], ['disagg-bench commit', PROJECT_COMMIT], ['disagg-bench branch', 'release-1'],
      ['start', '2026-11-28T02:00:00.000Z'], ['end', '2026-11-28T02:00:44.000Z'],
    ];
    for (const [k, v] of items) expect(meta).toContain(`<dt>${k}</dt><dd><code>${v}</code></dd>`);
    expect(dom).toContain('<a id="index-link" href="../../index.html">All runs</a>');

    // the trend card of the headline, over both runs, titled by test and metric
    const plots = reportData(dom).plots;
    const trend = plots.find((p) => p.id.startsWith('trend-'))!;
    expect(trend.title).toBe(`${KVPIPE}: PURE_THROUGHPUT_GBPS_AVG`);
    expect(trend.series[0].values).toEqual([7.1, 7.25]);
    expect(dom).toContain(`<figcaption>${KVPIPE}: PURE_THROUGHPUT_GBPS_AVG</figcaption>`);
    // THROUGHPUT_GBPS was printed 0.00 in every round: no chart, no series of it anywhere
    expect(plots.flatMap((p) => p.series.map((s) => s.metric))).not.toContain('THROUGHPUT_GBPS');
    expect(plots.some((p) => p.series.some((s) => s.metric === 'SEND_TIME_S'))).toBe(true);
    // ...and the tests table says what it was: below its step, not 0
    expect(dom).toMatch(/<td class="num" title="printed rounded to 0\.01">&lt;0\.01<\/td>/);

    // sorted by verdict by the page's script: the failed sweep first, the skip last; all three shown
    const order = [...dom.matchAll(/<tr class="row-(\w+)" data-test="([^"]+)"/g)].map((m) => `${m[2]}:${m[1]}`);
    expect(order).toEqual([`${SWEEP}:failed`, `${KVPIPE}:passed`, `${EP}:skipped`]);
    expect(dom).toMatch(/<span class="meta" id="filter-count">3 of 3 tests<\/span>/);
    expect(dom).toMatch(/<select id="test-sort" aria-label="Sort tests">/);
  });

  it('the index: both runs newest first, counts from the history and each run folder, a link to each report', async () => {
    const index = path.join(root, 'index.html');
    const dom = await chromium(index, root, ['--dump-dom'], 800);
    const rows = [...dom.matchAll(/<tr(?: class="([^"]*)")? data-run="([^"]+)">(.*?)<\/tr>/gs)];
    expect(rows.map((m) => m[2])).toEqual([RUN_IDS[1], RUN_IDS[0]]);
    for (const [k, id] of [RUN_IDS[1], RUN_IDS[0]].entries()) {
      const link = `runs/${id}/report.html`;
      expect(rows[k][3]).toContain(`<a href="${link}">${id}</a>`);
      expect(existsSync(path.join(root, link)), link).toBe(true);
    }
    const counts = (row: string) => [...row.matchAll(/<td class="num[^"]*">([^<]*)<\/td>/g)].map((m) => m[1]);
    // passed, failed, skipped, not run, regressed
    expect(counts(rows[0][3])).toEqual(['1', '1', '1', '0', '0']);
    expect(counts(rows[1][3])).toEqual(['2', '0', '0', '0', '0']);
    expect(rows[0][1]).toBe('row-failed');
    expect(rows[0][3]).toContain(`<code title="${CONFIGS_COMMIT}">${CONFIGS_COMMIT.slice(0, 12)}</code>`);
    expect(dom).toMatch(/2 run\(s\) from the DuckDB history \S+history\.duckdb, newest first/);
  });
});
