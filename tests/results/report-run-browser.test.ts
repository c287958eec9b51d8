// The report of a run that keeps a history, in headless Chromium: the header carries the run's
// metadata (run, label, kind, the configs' commit and branch, GPU type, span), trend cards are
// titled by test and metric, the tests table has its filter (wired by the page's own script:
// body data-filter="ready", the count of shown rows), each test's headline figure, its skip reason
// in the row and a link to its log folder.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReport } from '../../framework/results/report/render.ts';
import type { TestRecord } from '../../framework/results/json.ts';
import { chromium as runChromium, skipBrowser } from '../fixtures/report/chromium.ts';

const run = { id: 'run-2', kind: 'post-merge' as const, label: 'nightly', commit: '0123abc', branch: 'main' };
const at = (s: number) => new Date(Date.UTC(2026, 10, 28, 2, 0, s)).toISOString();
const base = { category: 'perf', host: 'node1', failures: [], gpuType: undefined };
const records: TestRecord[] = [
  {
    ...base, testId: 'nixl_perf_kvpipe_shm', type: 'nixl', configPath: 'test_configs/nixl/perf/kvpipe_shm.yaml', jobId: '41', schedulerState: 'COMPLETED', verdict: 'passed',
    metrics: [
      { name: 'SEND_TIME_S', value: 0.41, unit: 's', higherIsBetter: false, labels: { round: 1 } },
      { name: 'PURE_THROUGHPUT_GBPS_AVG', value: 7.25, unit: 'GB/s', higherIsBetter: true, labels: {} },
    ],
    headline: [{ name: 'PURE_THROUGHPUT_GBPS_AVG', labels: {} }], job: { queueSec: 0.3, runSec: 12 },
    timing: { start: at(0), end: at(14), durationSec: 14 }, logDir: '/results/slurm_logs/nixl_perf_kvpipe_shm', run,
  },
  {
    ...base, testId: 'nixl_perf_ep_cuda_2gpu', type: 'nixl', configPath: 'test_configs/nixl/perf/ep_cuda_2gpu.yaml', jobId: null, verdict: 'skipped', metrics: [],
    skipReason: 'needs a GPU (H100, H200) but none was detected and GPU_TYPE is unset', timing: { start: at(0), end: at(0), durationSec: 0 },
  },
];
const trends = {
  store: 'the DuckDB history /results/history.duckdb',
  charts: [{
    testId: 'nixl_perf_kvpipe_shm', metric: 'PURE_THROUGHPUT_GBPS_AVG', labels: {}, unit: 'GB/s', higherIsBetter: true, regression: false, baseline: 7.1, threshold: 0.05, diffPercent: 2.1,
    points: [{ tsMs: Date.parse(at(0)) - 86_400_000, value: 7.1, runId: 'run-1', current: false }, { tsMs: Date.parse(at(14)), value: 7.25, runId: 'run-2', current: true }],
  }],
};

describe.skipIf(skipBrowser)('a run\'s report in headless Chromium', () => {
  let dir: string;
  let page: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'report-run-browser-'));
    page = path.join(dir, 'report.html');
    await writeFile(page, renderReport({ records, trends, generatedAt: new Date(at(20)) }).html);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('shows the run\'s metadata, titled trend cards, the filter, headlines, skip reasons and log links', async () => {
    const dom = await runChromium(page, dir, ['--dump-dom']);
    const body = /<body\b[^>]*>/.exec(dom)?.[0] ?? '';
    expect(body).toContain('data-filter="ready"');
    expect(body).toContain('data-rendered="1"');
    const meta = /<dl class="run-meta" id="run-meta">(.*?)<\/dl>/s.exec(dom)?.[1] ?? '';
    for (const [k, v] of [['run', 'run-2'], ['label', 'nightly'], ['run kind', 'post-merge'], ['configs commit', '0123abc'], ['configs branch', 'main'], ['start', at(0)], ['end', at(14)]]) {
      expect(meta).toContain(`<dt>${k}</dt><dd><code>${v}</code></dd>`);
    }
    // the trend card's title names the test and the metric (Chart.js draws it; the spec carries it)
    expect(dom).toContain('"title":"nixl_perf_kvpipe_shm: PURE_THROUGHPUT_GBPS_AVG"');
    expect(dom).toMatch(/<span class="meta" id="filter-count">2 of 2 tests<\/span>/);
    expect(dom).toMatch(/<code>PURE_THROUGHPUT_GBPS_AVG<\/code> <b>7\.25<\/b> GB\/s/);
    expect(dom).toMatch(/<p class="skip-reason">needs a GPU \(H100, H200\) but none was detected/);
    expect(dom).toContain('<a class="logs" href="file:///results/slurm_logs/nixl_perf_kvpipe_shm">logs</a>');
  });
});
