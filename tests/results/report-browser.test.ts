// Opens the report in headless Chromium (Debian's chromium package): the page's own script counts
// the charts that drew pixels onto their canvases (body data-rendered), a second run takes a
// screenshot. DISAGG_NO_BROWSER=1 skips this file where no browser can be installed;
// DISAGG_UPDATE_SCREENSHOT=1 also copies the screenshot to docs/report-screenshot.png (the README's).
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReport } from '../../framework/results/report/render.ts';
import { baselineRecords, fixtureRecords } from '../fixtures/report/fixture.ts';
import { chromium as runChromium, skipBrowser } from '../fixtures/report/chromium.ts';

const SCREENSHOT_COPY = fileURLToPath(new URL('../../docs/report-screenshot.png', import.meta.url));

describe.skipIf(skipBrowser)('report.html in headless Chromium', () => {
  let dir: string;
  let page: string;
  let plotCount: number;

  const chromium = (...args: string[]) => runChromium(page, dir, args);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'report-browser-'));
    page = path.join(dir, 'report.html');
    const report = renderReport({
      records: fixtureRecords(),
      baseline: baselineRecords(),
      sources: ['results/results.json'],
      baselineSources: ['results-previous/results.json'],
      generatedAt: new Date('2025-11-03T12:00:00Z'),
    });
    plotCount = report.plots.length;
    await writeFile(page, report.html);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('draws every plot onto its canvas, and the script in a failure message does not run', async () => {
    const dom = await chromium('--dump-dom');
    const body = /<body\b[^>]*>/.exec(dom)?.[0] ?? '';
    expect(plotCount).toBe(11);
    expect(body).toContain(`data-charts="${plotCount}"`);
    expect(body).toContain(`data-rendered="${plotCount}"`);
    expect(body).not.toContain('data-injected');
    // No drawing error was reported, and Chart.js sized each canvas.
    expect(dom).toMatch(/<p id="chart-errors" hidden="">\s*<\/p>/);
    const sized = [...dom.matchAll(/<canvas id="plot-\d+"[^>]*\bwidth="(\d+)"[^>]*\bheight="(\d+)"/g)].filter((m) => Number(m[1]) > 0 && Number(m[2]) > 0);
    expect(sized).toHaveLength(plotCount);
  });

  it('takes a screenshot of the page', async () => {
    const shot = path.join(dir, 'report.png');
    await chromium(`--screenshot=${shot}`);
    const png = await readFile(shot);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1400, 2000]); // IHDR width, height
    // A blank page of this size compresses to a few KB; tables, text and charts do not.
    expect(png.length).toBeGreaterThan(100_000);
    if (process.env.DISAGG_UPDATE_SCREENSHOT === '1') await copyFile(shot, SCREENSHOT_COPY);
  });
});
