import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Metric } from '../../../framework/metrics/metric.ts';
import { extractServingMetrics, parseServingLog, servingMetricFor } from '../../../framework/metrics/extractors/serving.ts';

const log = (name: string) => readFileSync(new URL(`../../fixtures/logs/serving/${name}`, import.meta.url), 'utf8');
const value = (metrics: Metric[], name: string, concurrency: number) =>
  metrics.find((m) => m.name === name && m.labels.concurrency === concurrency)?.value;

describe('serving extractor on a complete 6_bench.log', () => {
  const { metrics, problems } = extractServingMetrics(log('6_bench.log'));

  it('finds both concurrencies and no problem', () => {
    expect(problems).toEqual([]);
    expect([...new Set(metrics.map((m) => m.labels.concurrency))]).toEqual([8, 16]);
  });

  it('extracts every field of the block with units and direction', () => {
    const c8 = metrics.filter((m) => m.labels.concurrency === 8);
    expect(c8.map((m) => m.name)).toEqual([
      'SERVER_TOTAL_REQUESTS',
      'SERVER_SUCCESSFUL_REQUESTS',
      'SERVER_FAILED_REQUESTS',
      'SERVER_DURATION',
      'SERVER_TOTAL_INPUT_TOKENS',
      'SERVER_TOTAL_GENERATED_TOKENS',
      'SERVER_REQUEST_THROUGHPUT',
      'SERVER_OUTPUT_TOKEN_THROUGHPUT',
      'SERVER_TOTAL_TOKEN_THROUGHPUT',
      'SERVER_USER_THROUGHPUT',
      ...['TTFT', 'TPOT', 'ITL', 'E2EL'].flatMap((x) => [`SERVER_MEAN_${x}`, `SERVER_MEDIAN_${x}`, `SERVER_STD_${x}`, `SERVER_P99_${x}`]),
      'SERVER_TOTAL_FAILED_REQUESTS', // the log's `Total failed requests:` line, a metric of its own
    ]);
    expect(c8.find((m) => m.name === 'SERVER_MEDIAN_TTFT')).toEqual({
      name: 'SERVER_MEDIAN_TTFT',
      value: 198.43,
      unit: 'ms',
      higherIsBetter: false,
      labels: { concurrency: 8 },
      rounded: 0.01, // printed with 2 decimals; the exact value is result.json's (serving-saved-result.test.ts)
    });
    // a count is printed whole: exact, no mark
    expect(c8.find((m) => m.name === 'SERVER_SUCCESSFUL_REQUESTS')).not.toHaveProperty('rounded');
    expect(c8.find((m) => m.name === 'SERVER_OUTPUT_TOKEN_THROUGHPUT')).toMatchObject({ value: 449.19, unit: 'tok/s', higherIsBetter: true });
    expect(c8.find((m) => m.name === 'SERVER_DURATION')).toMatchObject({ value: 182.37, unit: 's' });
    expect(c8.find((m) => m.name === 'SERVER_FAILED_REQUESTS')).toMatchObject({ value: 0, unit: 'count', higherIsBetter: false });
    expect(value(metrics, 'SERVER_MEDIAN_E2EL', 16)).toBe(20031.77);
    expect(value(metrics, 'SERVER_P99_ITL', 16)).toBe(29.88);
  });
});

describe('serving extractor on damaged logs', () => {
  it('drops a truncated block and says where the log was cut', () => {
    const { metrics, problems } = extractServingMetrics(log('6_bench_truncated.log'));
    expect(value(metrics, 'SERVER_MEDIAN_TTFT', 8)).toBe(198.43);
    expect(metrics.some((m) => m.labels.concurrency === 16)).toBe(false);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^line 70: log ends in the middle of a line \('Median TPOT \(ms\): +19\.3'\)/);
    expect(problems[1]).toMatch(/concurrency 16: result block is truncated/);
    expect(problems[2]).toMatch(/concurrency 16: no 'Benchmark with concurrency 16 done' marker/);
  });

  it('reports failed requests as a metric and a crashed concurrency as problems', () => {
    const { metrics, problems } = extractServingMetrics(log('6_bench_failed_requests.log'));
    expect(value(metrics, 'SERVER_FAILED_REQUESTS', 8)).toBe(3);
    expect(value(metrics, 'SERVER_SUCCESSFUL_REQUESTS', 8)).toBe(77);
    expect(problems).toEqual([
      expect.stringMatching(/^line \d+: concurrency 16: no 'Serving Benchmark Result' block/),
      expect.stringMatching(/^line \d+: concurrency 16: no 'Benchmark with concurrency 16 done' marker/),
    ]);
  });

  const block = (full: string) => full.slice(full.indexOf('============ Serving'), full.indexOf('Benchmark with concurrency 8 done'));
  const c8Block = block(log('6_bench.log'));

  it('takes the failed count from "Total failed requests" when the block has no Failed line', () => {
    const old = c8Block.replace(/^Failed requests:.*\n/m, '').replace(/^User throughput.*\n/m, (l) =>
      `${l}=======================!FAILED REQUESTS!=======================\nTotal failed requests: 2\n=====================!CHECK LOG FOR ERRORS!====================\n`,
    );
    const { metrics, problems } = extractServingMetrics(`Benchmarking with concurrency 8 ... 80 prompts\n${old}Benchmark with concurrency 8 done\n`);
    expect(problems).toEqual([]);
    expect(value(metrics, 'SERVER_FAILED_REQUESTS', 8)).toBe(2);
    expect(value(metrics, 'SERVER_TOTAL_FAILED_REQUESTS', 8)).toBe(2);
  });

  it('records "Total failed requests" as SERVER_TOTAL_FAILED_REQUESTS beside a block\'s Failed line, and not when the log has none', () => {
    const withTotal = c8Block.replace(/^User throughput.*\n/m, (l) => `${l}Total failed requests: 3\n`);
    const { metrics, problems } = extractServingMetrics(`Benchmarking with concurrency 8 ... 80 prompts\n${withTotal}Benchmark with concurrency 8 done\n`);
    expect(problems).toEqual([]);
    expect(value(metrics, 'SERVER_TOTAL_FAILED_REQUESTS', 8)).toBe(3);
    const plain = extractServingMetrics(`Benchmarking with concurrency 8 ... 80 prompts\n${c8Block}Benchmark with concurrency 8 done\n`);
    expect(plain.metrics.filter((m) => m.name === 'SERVER_TOTAL_FAILED_REQUESTS')).toEqual([]);
  });

  it('labels a block without markers from "Maximum request concurrency", with a problem', () => {
    const { metrics, problems } = extractServingMetrics(`Maximum request concurrency: 8\n${c8Block}`);
    expect(value(metrics, 'SERVER_MEDIAN_TTFT', 8)).toBe(198.43);
    expect(problems).toEqual([expect.stringMatching(/^line 2: result block has no 'Benchmarking with concurrency' marker; labelled concurrency 8/)]);
  });

  it('ignores a block with no marker and no concurrency hint', () => {
    const { metrics, problems } = extractServingMetrics(c8Block);
    expect(metrics).toEqual([]);
    expect(problems[0]).toMatch(/no 'Benchmarking with concurrency' marker and no 'Maximum request concurrency'/);
  });

  it('flags a done marker for another concurrency, a stray done marker and a prompt count mismatch', () => {
    const text =
      'Benchmark with concurrency 4 done\n' +
      `Benchmarking with concurrency 8 ... 64 prompts\n${c8Block}Benchmark with concurrency 16 done\n`;
    const { metrics, problems } = extractServingMetrics(text);
    expect(value(metrics, 'SERVER_MEDIAN_TTFT', 8)).toBe(198.43);
    expect(problems).toEqual([
      "line 1: 'Benchmark with concurrency 4 done' without its 'Benchmarking with concurrency 4' marker",
      'line 35: done marker for concurrency 16 closes the run started for concurrency 8 at line 2',
      'line 3: concurrency 8: 64 prompts announced but 80 requests reported',
    ]);
  });

  it('ends a block cut short by the next marker and keeps the later concurrency', () => {
    const cut = c8Block.slice(0, c8Block.indexOf('---------------Inter-token'));
    const text =
      `Benchmarking with concurrency 8 ... 80 prompts\n${cut}` +
      `Benchmarking with concurrency 16 ... 80 prompts\n${c8Block}Benchmark with concurrency 16 done\n`;
    const { metrics, problems } = extractServingMetrics(text);
    expect(metrics.some((m) => m.labels.concurrency === 8)).toBe(false);
    expect(value(metrics, 'SERVER_MEDIAN_TTFT', 16)).toBe(198.43);
    expect(problems).toEqual([
      expect.stringMatching(/concurrency 8: result block is truncated/),
      expect.stringMatching(/concurrency 8: no 'Benchmark with concurrency 8 done' marker/),
    ]);
  });

  it('reports a concurrency measured twice', () => {
    const one = `Benchmarking with concurrency 8 ... 80 prompts\n${c8Block}Benchmark with concurrency 8 done\n`;
    const { metrics, problems } = extractServingMetrics(one + one);
    expect(metrics.filter((m) => m.name === 'SERVER_MEDIAN_TTFT')).toHaveLength(2);
    expect(problems).toEqual([expect.stringMatching(/concurrency 8 has a second result \(first at line 2\)/)]);
  });

  it('reports a nan value instead of a metric', () => {
    const nan = c8Block.replace(/^(Median TTFT \(ms\): +)198\.43/m, '$1nan   ');
    const { metrics, problems } = extractServingMetrics(`Benchmarking with concurrency 8 ... 80 prompts\n${nan}Benchmark with concurrency 8 done\n`);
    expect(value(metrics, 'SERVER_MEDIAN_TTFT', 8)).toBeUndefined();
    expect(value(metrics, 'SERVER_MEAN_TTFT', 8)).toBe(214.57);
    expect(problems).toEqual([expect.stringMatching(/concurrency 8: SERVER_MEDIAN_TTFT is 'nan', not a number/)]);
  });

  it('reads CRLF logs', () => {
    const { results, problems } = parseServingLog(log('6_bench.log').replace(/\n/g, '\r\n'));
    expect(problems).toEqual([]);
    expect(results.map((r) => r.concurrency)).toEqual([8, 16]);
    const metrics = results.flatMap((r) => r.metrics);
    expect(value(metrics, 'SERVER_MEDIAN_TTFT', 16)).toBe(230.12);
  });
});

describe('servingMetricFor', () => {
  it('names other clients\' statistics and extra lines consistently', () => {
    expect(servingMetricFor('P99.9 TTFT (ms):')).toEqual({ name: 'SERVER_P99_9_TTFT', unit: 'ms', higherIsBetter: false });
    expect(servingMetricFor('Min Avg Decoded Tokens per Iter:')).toEqual({
      name: 'SERVER_MIN_AVG_DECODED_TOKENS_PER_ITER',
      unit: 'count',
      higherIsBetter: true,
    });
    expect(servingMetricFor('Request goodput (req/s):')).toMatchObject({ name: 'SERVER_REQUEST_GOODPUT', unit: 'req/s' });
    expect(servingMetricFor('Total Energy (J):')).toEqual({ name: 'SERVER_TOTAL_ENERGY', unit: 'J' });
  });
});
