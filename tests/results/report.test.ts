import { describe, expect, it } from 'vitest';
import { renderReport } from '../../framework/results/report/render.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import { baselineRecords, fixtureRecords, ids } from '../fixtures/report/fixture.ts';

const rows = (html: string) => [...html.matchAll(/<tr class="row-(\w+)" data-test="([^"]*)"/g)].map((m) => ({ verdict: m[1], test: m[2] }));
const figures = (html: string) =>
  [...html.matchAll(/<figure class="chart" data-plot="([^"]*)" data-test="([^"]*)" data-axis="([^"]*)" data-unit="([^"]*)" data-chart="(\w+)">/g)].map(
    (m) => ({ plot: m[1], test: m[2], axis: m[3], unit: m[4], chart: m[5] }),
  );
const reportData = (html: string) => JSON.parse(/<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)![1]);
const scriptTags = (html: string) => html.match(/<script\b/gi) ?? [];

describe('report.html from a results.json covering every test type', () => {
  const records = fixtureRecords();
  const { html, plots } = renderReport({ records, sources: ['results.json'], generatedAt: new Date('2025-11-03T12:00:00Z') });

  it('is one page with the charting library inlined and no external resource', () => {
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('Chart.js v4');
    expect(/<(script|link|img|iframe)\b[^>]*\b(src|href)=/i.exec(html)?.[0]).toBeUndefined();
    expect(/<style>([\s\S]*?)<\/style>/.exec(html)![1]).not.toMatch(/url\(|@import/);
    expect(scriptTags(html)).toHaveLength(3); // data, library, page script
  });

  it('has one table row per test with its verdict, job, scheduler state and duration', () => {
    expect(rows(html)).toEqual(records.map((r) => ({ verdict: r.verdict, test: r.testId })));
    const failedRow = html.slice(html.indexOf(`data-test="${ids.failed}"`)).split('</tr>')[0];
    expect(failedRow).toContain('<td><code>48220</code></td><td>FAILED</td>');
    expect(failedRow).toContain('15m 12s');
    expect(failedRow).toContain('<details open><summary>3 failures, 2 metrics</summary>');
    expect(failedRow).toContain('6_bench.log:812: result block truncated');
    expect(failedRow).toContain('concurrency 64: no result in 6_bench.log (markers seen: 16)');
    const skippedRow = html.slice(html.indexOf(`data-test="${ids.skipped}"`)).split('</tr>')[0];
    expect(skippedRow).toContain('<td><code>—</code></td><td>—</td>');
    expect(skippedRow).toContain('<summary>skipped, 0 metrics</summary><p class="skip-reason">skipped: GPU type GB200 is not in supported_gpus [GB300]</p>');
    expect(html).toContain('<span>9 tests</span><span class="verdict-passed">7 passed</span><span class="verdict-failed">1 failed</span>');
  });

  it('draws one chart per expected plot, chosen from the metrics labels and units', () => {
    const expected = [
      { test: ids.disagg, axis: 'concurrency', unit: 'ms', chart: 'line' },
      { test: ids.disagg, axis: 'concurrency', unit: 'tok/s', chart: 'line' },
      { test: ids.disagg, axis: 'concurrency', unit: 'req/s', chart: 'line' },
      { test: ids.wideep, axis: 'concurrency', unit: 'ms', chart: 'line' },
      { test: ids.sweep, axis: 'block_size', unit: 'GB/s', chart: 'line' },
      { test: ids.sweep, axis: 'block_size', unit: 'us', chart: 'line' },
      { test: ids.seqCt, axis: 'pattern', unit: 'ms', chart: 'bar' },
      { test: ids.seqCt, axis: 'pattern', unit: 'GB', chart: 'bar' },
      { test: ids.ct, axis: 'rank', unit: 'GB/s', chart: 'bar' },
      { test: ids.ep, axis: 'rank', unit: 'GB/s', chart: 'bar' },
      { test: ids.ep, axis: 'rank', unit: 'us', chart: 'bar' },
    ];
    expect(figures(html).map(({ plot: _, ...f }) => f)).toEqual(expected);
    // Each figure has its canvas, and the page script gets the same plots.
    for (const f of figures(html)) expect(html).toContain(`<canvas id="${f.plot}"`);
    expect(reportData(html).plots).toEqual(JSON.parse(JSON.stringify(plots)));
    // The accuracy test (one run) and the failed test (one concurrency) repeat nothing: no plot.
    expect(figures(html).some((f) => f.test === ids.accuracy || f.test === ids.failed)).toBe(false);
  });

  it('puts the plotted values in the series: serving per concurrency, sweep per block size, latency vs isolated per pattern', () => {
    const plot = (test: string, unit: string) => plots.find((p) => p.testId === test && p.unit === unit)!;
    const serving = plot(ids.disagg, 'ms');
    expect(serving.xLabels).toEqual(['16', '64']);
    expect(serving.series.map((s) => [s.name, s.values])).toEqual([
      ['SERVER_MEDIAN_TTFT', [182.44, 411.08]],
      ['SERVER_MEDIAN_E2EL', [9712.3, 15834.9]],
    ]);
    const sweep = plot(ids.sweep, 'GB/s');
    expect(sweep.xLabels[0]).toBe('4 KiB');
    expect(sweep.xLabels.at(-1)).toBe('64 MiB');
    expect(sweep.series[0].values).toHaveLength(15);
    expect(plot(ids.seqCt, 'ms').series.map((s) => s.name)).toEqual(['LATENCY_MS', 'ISOLATED_LATENCY_MS']);
    expect(plot(ids.ep, 'GB/s').series.map((s) => s.name)).toEqual(['BW_GBPS op=dispatch', 'BW_GBPS op=combine']);
    // 12 latency statistics: the medians first, 6 visible, the rest behind the legend.
    const wideep = plot(ids.wideep, 'ms');
    expect(wideep.series).toHaveLength(12);
    expect(wideep.series.filter((s) => !s.hidden)).toHaveLength(6);
    expect(wideep.series.filter((s) => s.name.includes('MEDIAN')).every((s) => !s.hidden)).toBe(true);
  });

  it('marks no comparison without a baseline', () => {
    expect(html).not.toContain('id="comparison"');
  });
});

describe('strings from results are inert', () => {
  const hostile: TestRecord = {
    ...fixtureRecords().find((r) => r.testId === ids.failed)!,
    testId: 'disagg_perf_x"><img src=x onerror=alert(1)>',
    failures: ['HTTP 500 </script><script>document.title="pwned"</script>', "<script>document.body.setAttribute('data-injected','yes')</script>"],
    metrics: [16, 32].map((c) => ({ name: 'SERVER_MEDIAN_TTFT', value: c, unit: 'ms<b>', labels: { concurrency: c, note: `</script><script>alert(${c})</script>` } })),
  };
  const { html } = renderReport({ records: [hostile], baseline: [{ ...hostile, verdict: 'passed' }] });

  it('escapes test ids, failure messages, labels and units in the HTML', () => {
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>');
    expect(html).not.toContain('<script>document');
    expect(html).toContain('&lt;script&gt;document.body.setAttribute(&#39;data-injected&#39;,&#39;yes&#39;)&lt;/script&gt;');
    expect(html).toContain('data-test="disagg_perf_x&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"');
    expect(scriptTags(html)).toHaveLength(3);
  });

  it('keeps the plot data inside its script element and reads it back unchanged', () => {
    const data = reportData(html);
    expect(data.plots[0].testId).toBe(hostile.testId);
    expect(data.plots[0].series[0].name).toBe('SERVER_MEDIAN_TTFT note=</script><script>alert(16)</script>');
    expect(data.plots[0].unit).toBe('ms<b>');
  });
});

describe('comparison with a baseline', () => {
  const records = fixtureRecords();
  const { html, comparison } = renderReport({ records, baseline: baselineRecords(), baselineSources: ['old.json'] });
  const comparisonRows = (page: string) =>
    [...page.matchAll(/<tr class="(\w+)" data-test="([^"]*)" data-metric="([^"]*)">/g)].map((m) => ({ status: m[1], test: m[2], metric: m[3] }));

  it('marks the metrics worse by more than 5% in their direction as regressions, and the improvements', () => {
    const moved = comparisonRows(html.slice(html.indexOf('id="comparison"'), html.indexOf('<details><summary>All')));
    expect(moved).toEqual([
      { status: 'regression', test: ids.disagg, metric: 'SERVER_MEDIAN_TTFT' },
      { status: 'regression', test: ids.sweep, metric: 'BW_GBPS' },
      { status: 'improvement', test: ids.ct, metric: 'BW_GBPS' },
    ]);
    expect(comparison!.regressions).toBe(2);
    expect(html).toContain('<span class="flag">2 regressions vs baseline</span>');
    expect(html).toMatch(/SERVER_MEDIAN_TTFT<\/code><\/td><td><code>concurrency=64<\/code><\/td><td class="num">350<\/td><td class="num">411.08<\/td><td>ms<\/td><td>lower<\/td><td class="num change">\+17%<\/td><td class="flag">REGRESSION/);
  });

  it('shows a change of a metric without direction but never judges it, and lists verdict changes and unmatched tests', () => {
    const undirected = comparison!.metrics.find((m) => m.testId === ids.seqCt && m.name === 'TRANSFER_SIZE_GB' && m.labels.pattern === 0)!;
    expect(undirected).toMatchObject({ baseline: 0.2, current: 0.1, change: -0.5, status: 'undirected' });
    expect(html).toContain(`<li class="flag"><span class="id">${ids.failed}</span>: passed → failed</li>`);
    expect(comparison!.onlyInBaseline).toEqual(['disagg_perf_retired-config']);
    expect(html).toContain('Only in the baseline: <span class="id">disagg_perf_retired-config</span>');
  });

  it('draws the baseline as a dashed twin of each series it has values for', () => {
    const plots = reportData(html).plots as { testId: string; unit: string; series: { name: string; baseline: boolean; values: (number | null)[] }[] }[];
    const serving = plots.find((p) => p.testId === ids.disagg && p.unit === 'ms')!;
    expect(serving.series.map((s) => [s.name, s.baseline])).toEqual([
      ['SERVER_MEDIAN_TTFT', false],
      ['SERVER_MEDIAN_TTFT (baseline)', true],
      ['SERVER_MEDIAN_E2EL', false],
      ['SERVER_MEDIAN_E2EL (baseline)', true],
    ]);
    expect(serving.series[1].values).toEqual([182.44, 350]);
  });

  it('takes the threshold: at 20% the +17.5% TTFT is no regression', () => {
    const loose = renderReport({ records, baseline: baselineRecords(), threshold: 0.2 });
    expect(loose.comparison!.regressions).toBe(0);
    expect(loose.html).toContain('worse by more than 20% in its better direction');
  });
});

describe("the gate's verdict in the report", () => {
  const records = fixtureRecords();
  const regressed: TestRecord = {
    ...records[0],
    regression: {
      mode: 'warn',
      findings: [{ metric: 'X', labels: {}, unit: 'ms', value: 30, baseline: 20, threshold: 0.05, diffPercent: -50, regression: true, days: 8, gated: true, rule: 'robust', status: 'regression', change: 0.5, alertId: 'a1234abcd', detectable: { power: 0.95, oneRun: 0.144, byTwoRuns: 0.101 } }],
    },
  };
  const { html } = renderReport({
    records: [regressed, ...records.slice(1)],
    trends: { store: 'the DuckDB history h.duckdb', charts: [], openAlerts: ['a1234abcd  t X: +50.0% against 20 ms ...; open'] },
  });
  it('counts the regressed tests as the digest does, marks their rows, and lists the open alerts', () => {
    expect(html).toMatch(/<span class="flag" id="regressed-count">1 regressed<\/span>/);
    expect(html).toMatch(/<a href="#open-alerts">1 open alert<\/a>/);
    expect(html).toMatch(new RegExp(`data-test="${records[0].testId}"[\\s\\S]*?REGRESSED`));
    expect(html).toMatch(/<section id="open-alerts"><h2>Open alerts<\/h2>[\s\S]*a1234abcd/);
  });
  it('says under the counts what the gate catches, as the digest says it', () => {
    expect(html).toMatch(/<p class="meta" id="gate-sensitivity">gate sensitivity: the worsening caught 95 % of the time, median of 1 judged gating figure\(s\): 14\.4% on its first run, 10\.1% by its second/);
    expect(renderReport({ records }).html).not.toMatch(/id="gate-sensitivity"/);
  });
  it('says 0 regressed, and no alert section, when the gate found none', () => {
    const quiet = renderReport({ records }).html;
    expect(quiet).toMatch(/id="regressed-count">0 regressed</);
    expect(quiet).not.toMatch(/id="open-alerts"/);
  });
});
