// The serving figures at full precision: the client's concurrency_<c>/result.json (real files in a
// real log folder) beside the 6_bench.log golden log, read through the log parser as a job's are.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { extractMetrics } from '../../../framework/metrics/log-parser.ts';
import { savedResultKeys } from '../../../framework/metrics/extractors/serving-saved-result.ts';
import { appendPerfRows, perfRowsFor } from '../../../framework/results/csv.ts';
import type { Metric } from '../../../framework/metrics/metric.ts';

const goldenLog = path.resolve(import.meta.dirname, '../../fixtures/logs/serving/6_bench.log');
const spec = { logFile: '6_bench.log', extractor: 'serving' };
const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A log folder holding the golden 6_bench.log (concurrencies 8 and 16) and the given files. */
function logFolder(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'saved-result-'));
  folders.push(dir);
  copyFileSync(goldenLog, path.join(dir, '6_bench.log'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/**
 * What benchmark_serving saves for the golden log's concurrency 8 (its prints are these rounded
 * to 2 decimals), under upstream's keys; `extra` replaces or adds keys.
 */
function savedC8(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    date: '20261128-101500', backend: 'openai', model_id: 'm', num_prompts: 80,
    duration: 182.3712404, completed: 80, total_input_tokens: 81920, total_output_tokens: 81920,
    request_throughput: 0.438666, 'request_goodput:': null, output_throughput: 449.188211, total_token_throughput: 898.386, user_throughput: 56.2061,
    mean_ttft_ms: 214.5712, median_ttft_ms: 198.4271, std_ttft_ms: 61.2049, p99_ttft_ms: 412.8812,
    mean_e2el_ms: 18198.4264, median_e2el_ms: 18187.0155, std_e2el_ms: 142.7, p99_e2el_ms: 18566.3149,
    ...extra,
  });
}

const find = (metrics: Metric[], name: string, concurrency = 8) => metrics.find((m) => m.name === name && m.labels.concurrency === concurrency);

describe('serving figures from the client\'s result.json', () => {
  it('takes the exact value where the file holds it, naming the file and key, and keeps the print for the CSV', async () => {
    const { metrics, problems } = await extractMetrics(logFolder({ 'concurrency_8/result.json': savedC8() }), [spec]);
    expect(problems).toEqual([]);
    expect(find(metrics, 'SERVER_MEDIAN_TTFT')).toEqual({
      name: 'SERVER_MEDIAN_TTFT', value: 198.4271, unit: 'ms', higherIsBetter: false, labels: { concurrency: 8 },
      printed: 198.43, source: 'concurrency_8/result.json median_ttft_ms',
    });
    expect(find(metrics, 'SERVER_OUTPUT_TOKEN_THROUGHPUT')).toMatchObject({ value: 449.188211, printed: 449.19 });
    expect(find(metrics, 'SERVER_DURATION')).toMatchObject({ value: 182.3712404, source: 'concurrency_8/result.json duration' });
    // a figure the file lacks (TPOT was not saved here) stays as printed, marked
    expect(find(metrics, 'SERVER_MEDIAN_TPOT')).toMatchObject({ value: 17.52, rounded: 0.01 });
    expect(find(metrics, 'SERVER_MEDIAN_TPOT')).not.toHaveProperty('source');
    // concurrency 16 has no file: every decimal as printed, marked; its counts exact
    expect(find(metrics, 'SERVER_MEDIAN_TTFT', 16)).toMatchObject({ value: 230.12, rounded: 0.01 });
    expect(find(metrics, 'SERVER_TOTAL_REQUESTS', 16)).not.toHaveProperty('rounded');

    // upstream's CSV is filled from the print: the row holds 198.43, never 198.4271
    const rows = perfRowsFor({ name: 'test_benchmark[x]' }, [find(metrics, 'SERVER_MEDIAN_TTFT')!], { start: new Date(0), end: new Date(1000), durationSec: 1 });
    expect(rows[0].perf_metric).toBe(198.43);
    const csvDir = logFolder();
    expect(readFileSync(await appendPerfRows(csvDir, rows), 'utf8')).toContain(',198.43,');
  });

  it('reads the file beside the log, for a log in a subfolder too', async () => {
    const dir = logFolder({ 'client/concurrency_8/result.json': savedC8() });
    copyFileSync(goldenLog, path.join(dir, 'client/6_bench.log'));
    const { metrics, problems } = await extractMetrics(dir, [{ ...spec, logFile: 'client/6_bench.log' }]);
    expect(problems).toEqual([]);
    expect(find(metrics, 'SERVER_MEDIAN_TTFT')).toMatchObject({ value: 198.4271, source: 'client/concurrency_8/result.json median_ttft_ms' });
  });

  it('says once, naming the file and the figure, when the file contradicts the log, and keeps every print of that concurrency', async () => {
    const stale = savedC8({ median_ttft_ms: 150.5, p99_ttft_ms: 300 });
    const { metrics, problems } = await extractMetrics(logFolder({ 'concurrency_8/result.json': stale, 'concurrency_16/result.json': JSON.stringify({ median_ttft_ms: 230.1184 }) }), [spec]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^6_bench\.log: concurrency_8\/result\.json: SERVER_MEDIAN_TTFT is 150\.5 there but 198\.43 in 6_bench\.log's result block \(and 1 more figure\), so the file is not this run's/);
    expect(problems[0]).toContain('the printed figures of concurrency 8 are recorded, marked rounded');
    // even the figures that agree are not taken from a file that contradicts the log
    expect(find(metrics, 'SERVER_DURATION')).toMatchObject({ value: 182.37, rounded: 0.01 });
    expect(find(metrics, 'SERVER_MEDIAN_TTFT')).not.toHaveProperty('printed');
    // the other concurrency's file is fine
    expect(find(metrics, 'SERVER_MEDIAN_TTFT', 16)).toMatchObject({ value: 230.1184, printed: 230.12 });
  });

  it('tells a file of another run by its counts too', async () => {
    const { problems } = await extractMetrics(logFolder({ 'concurrency_8/result.json': savedC8({ completed: 79 }) }), [spec]);
    expect(problems).toEqual([expect.stringContaining('concurrency_8/result.json: SERVER_SUCCESSFUL_REQUESTS is 79 there but 80')]);
  });

  it('falls back to the prints with one clear problem for a file cut off, not an object, or a folder', async () => {
    for (const [files, expected] of [
      [{ 'concurrency_8/result.json': savedC8().slice(0, 60) }, /^6_bench\.log: concurrency_8\/result\.json is not JSON \(.+; cut off while the client wrote it\?\); the printed figures of concurrency 8 are recorded, marked rounded$/],
      [{ 'concurrency_8/result.json': '[1, 2]' }, /concurrency_8\/result\.json is JSON but no object of figures/],
      [{ 'concurrency_8/result.json/x': '' }, /concurrency_8\/result\.json is not a regular file \(a folder\)/],
    ] as const) {
      const { metrics, problems } = await extractMetrics(logFolder(files), [spec]);
      expect(problems).toEqual([expect.stringMatching(expected)]);
      expect(find(metrics, 'SERVER_MEDIAN_TTFT')).toMatchObject({ value: 198.43, rounded: 0.01 });
    }
  });

  it('reads Python\'s bare NaN as no value: that figure stays printed, the others exact', async () => {
    const text = savedC8().replace('"std_ttft_ms":61.2049', '"std_ttft_ms": NaN');
    expect(text).toContain('NaN');
    const { metrics, problems } = await extractMetrics(logFolder({ 'concurrency_8/result.json': text }), [spec]);
    expect(problems).toEqual([]);
    expect(find(metrics, 'SERVER_STD_TTFT')).toMatchObject({ value: 61.2, rounded: 0.01 });
    expect(find(metrics, 'SERVER_MEAN_TTFT')).toMatchObject({ value: 214.5712 });
  });

  it('knows upstream\'s keys: percentiles with a fraction, goodput\'s colon, decoded tokens and energy', () => {
    expect(savedResultKeys('SERVER_P99_9_E2EL')).toEqual([['p99.9_e2el_ms']]);
    expect(savedResultKeys('SERVER_REQUEST_GOODPUT')).toEqual([['request_goodput:'], ['request_goodput']]);
    expect(savedResultKeys('SERVER_P90_AVG_DECODED_TOKENS_PER_ITER')).toEqual([['p90_avg_decoded_tokens_per_iter'], ['avg_decoded_tokens_per_iter', 'percentiles', 'p90']]);
    expect(savedResultKeys('SERVER_TOTAL_GPU_POWER')).toEqual([['energy', 'total_gpu_power_w']]);
    expect(savedResultKeys('SERVER_FAILED_REQUESTS')).toEqual([]);
  });
});
