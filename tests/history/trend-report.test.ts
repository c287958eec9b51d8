// The report's trend section from a real DuckDB history, checked in headless Chromium: every trend
// chart draws pixels (the page script counts them), regressions come first with their baseline
// and threshold, and the page's screenshot is the one committed as docs/history-trends.png
// (DISAGG_UPDATE_SCREENSHOT=1 copies it there).
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withHistory } from '../../framework/history/store.ts';
import { checkRun } from '../../framework/history/check-run.ts';
import { trendsForRun } from '../../framework/history/trends.ts';
import { renderReport } from '../../framework/results/report/render.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import type { TrendInput } from '../../framework/results/report/trends.ts';
import { chromium as runChromium, skipBrowser } from '../fixtures/report/chromium.ts';
import { entry, record } from '../fixtures/history/records.ts';

const SCREENSHOT_COPY = fileURLToPath(new URL('../../docs/history-trends.png', import.meta.url));

describe('the report\'s trend section', () => {
  let dir: string;
  let page: string;
  let trends: TrendInput;
  let plotCount: number;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'history-trends-'));
    page = path.join(dir, 'report.html');
    const store = { kind: 'duckdb' as const, file: path.join(dir, 'history.duckdb') };
    // Twelve days of two tests with some noise; today test A's TTFT jumps (regression), B is steady.
    const noise = (d: number) => ((d * 7) % 5) - 2;
    const days: TestRecord[] = [];
    for (let d = 0; d < 12; d++) {
      days.push(record({ runId: `night-${d}`, day: d, testId: 'disagg_perf_a_ccb-NIXL', ttft: 20 + noise(d) * 0.3, throughput: 1000 + noise(d) * 8 }));
      days.push(record({ runId: `night-${d}`, day: d, testId: 'disagg_perf_b_ccb-UCX', ttft: 30 + noise(d) * 0.2, throughput: 800 + noise(d) * 5 }));
    }
    const today = [
      record({ runId: 'today', day: 12, testId: 'disagg_perf_a_ccb-NIXL', ttft: 27, throughput: 995 }),
      record({ runId: 'today', day: 12, testId: 'disagg_perf_b_ccb-UCX', ttft: 30.1, throughput: 802 }),
    ];
    trends = await withHistory(
      store,
      async (s) => {
        await s.append(days.map(entry));
        // TTFT and throughput both gate here (records written before the gate was kept name none).
        const checks = await checkRun(s, today, { fallbackGate: () => ['SERVER_MEDIAN_TTFT', 'SERVER_OUTPUT_TOKEN_THROUGHPUT'] });
        for (const r of today) r.regression = { mode: 'warn', findings: checks.find((c) => c.testId === r.testId)!.findings };
        await s.append(today.map(entry));
        return trendsForRun(s, today);
      },
      { create: true },
    );
    const report = renderReport({ records: today, trends, sources: ['results/results.json'], generatedAt: new Date('2026-11-13T12:00:00Z') });
    plotCount = report.plots.length + trends.charts.length;
    await writeFile(page, report.html);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('charts the regression first, with its series, baseline and threshold, this run marked', () => {
    expect(trends.charts.map((c) => [c.testId, c.metric, c.regression])).toEqual([
      ['disagg_perf_a_ccb-NIXL', 'SERVER_MEDIAN_TTFT', true],
      ['disagg_perf_b_ccb-UCX', expect.any(String), false],
    ]);
    const [a] = trends.charts;
    expect(a.points).toHaveLength(13);
    expect(a.points.filter((p) => p.current)).toEqual([expect.objectContaining({ value: 27, runId: 'today' })]);
    expect(a.baseline).toBeGreaterThan(19);
    expect(a.baseline).toBeLessThan(21);
    expect(a.threshold).toBe(0.05);
  });

  it.skipIf(skipBrowser)('draws every chart in headless Chromium, and the screenshot shows them', { timeout: 180_000 }, async () => {
    const dom = await runChromium(page, dir, ['--dump-dom']);
    const body = /<body\b[^>]*>/.exec(dom)?.[0] ?? '';
    expect(body).toContain(`data-charts="${plotCount}"`);
    expect(body).toContain(`data-rendered="${plotCount}"`);
    expect(dom).toMatch(/<p id="chart-errors" hidden="">\s*<\/p>/);
    expect(dom).toMatch(/<section id="trends"><h2>Trends against the history<\/h2>/);
    const rows = [...dom.matchAll(/<tr class="(regression|)" data-trend="(trend-\d+)">/g)].map((m) => [m[1], m[2]]);
    expect(rows).toEqual([['regression', 'trend-1'], ['', 'trend-2']]);
    const sized = [...dom.matchAll(/<canvas id="trend-\d+"[^>]*\bwidth="(\d+)"[^>]*\bheight="(\d+)"/g)].filter((m) => Number(m[1]) > 0 && Number(m[2]) > 0);
    expect(sized).toHaveLength(2);
    const shot = path.join(dir, 'trends.png');
    await runChromium(page, dir, [`--screenshot=${shot}`], 1100);
    const png = await readFile(shot);
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1400, 1100]);
    expect(png.length).toBeGreaterThan(60_000);
    if (process.env.DISAGG_UPDATE_SCREENSHOT === '1') await copyFile(shot, SCREENSHOT_COPY);
  });
});
