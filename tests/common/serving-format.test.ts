import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { centreTitle, formatServingResult, pythonFixed, type ServingResult } from '../../runners/common/serving-format.ts';
import { parseServingLog } from '../../framework/metrics/extractors/serving.ts';

const fixture = readFileSync(new URL('../fixtures/logs/serving/6_bench.log', import.meta.url), 'utf8');

// The concurrency-8 numbers of the fixture, whose block Python's own format strings printed.
const c8: ServingResult = {
  totalRequests: 80,
  successfulRequests: 80,
  failedRequests: 0,
  durationSec: 182.3712449,
  totalInputTokens: 81920,
  totalGeneratedTokens: 81920,
  requestThroughput: 80 / 182.3712449,
  outputTokenThroughput: 81920 / 182.3712449,
  totalTokenThroughput: (2 * 81920) / 182.3712449,
  userThroughput: 56.2131,
  ttft: { mean: 214.5731, median: 198.4312, std: 61.2049, percentiles: { '99': 412.8817 } },
  tpot: { mean: 17.5812, median: 17.5219, std: 0.4127, percentiles: { '99': 18.7204 } },
  itl: { mean: 17.5806, median: 17.3125, std: 3.0519, percentiles: { '99': 24.9012 } },
  e2el: { mean: 18198.4311, median: 18187.0237, std: 142.7003, percentiles: { '99': 18566.3101 } },
};

describe('formatServingResult', () => {
  it('prints the block byte for byte as benchmark_serving does', () => {
    const block = formatServingResult(c8);
    const start = fixture.indexOf('============ Serving Benchmark Result');
    expect(fixture.slice(start, start + block.length)).toBe(block);
  });

  it('adds the failed-requests block and orders percentiles numerically', () => {
    const text = formatServingResult({
      ...c8,
      successfulRequests: 77,
      failedRequests: 3,
      ttft: { mean: 1, median: 1, percentiles: { '99.9': 9, '50': 5, '99': 8 } },
    });
    expect(text).toContain('=======================!FAILED REQUESTS!=======================\nTotal failed requests: 3\n');
    expect(text.indexOf('P50 TTFT')).toBeLessThan(text.indexOf('P99 TTFT'));
    expect(text.indexOf('P99 TTFT')).toBeLessThan(text.indexOf('P99.9 TTFT'));
    expect(text).not.toContain('Std Dev TTFT');
  });

  it('round-trips through the extractor', () => {
    const text = `Benchmarking with concurrency 8 ... 80 prompts\n${formatServingResult(c8)}Benchmark with concurrency 8 done\n`;
    const { results, problems } = parseServingLog(text);
    expect(problems).toEqual([]);
    const value = (name: string) => results[0].metrics.find((m) => m.name === name)?.value;
    expect(value('SERVER_MEDIAN_TTFT')).toBe(198.43);
    expect(value('SERVER_P99_E2EL')).toBe(18566.31);
    expect(value('SERVER_STD_TPOT')).toBe(0.41);
    expect(value('SERVER_REQUEST_THROUGHPUT')).toBe(0.44);
  });
});

describe('Python number formatting', () => {
  it('centres titles as str.format ^ does (odd fill goes right)', () => {
    expect(centreTitle('End-to-end Latency', '-')).toBe('----------------End-to-end Latency----------------');
    expect(centreTitle('Time to First Token', '-')).toBe('---------------Time to First Token----------------');
    expect(centreTitle(' Serving Benchmark Result ', '=')).toHaveLength(50);
  });

  it('rounds exact binary ties half to even, like %.2f', () => {
    expect(pythonFixed(0.125, 2)).toBe('0.12');
    expect(pythonFixed(0.375, 2)).toBe('0.38');
    expect(pythonFixed(0.625, 2)).toBe('0.62');
    expect(pythonFixed(-0.125, 2)).toBe('-0.12');
    expect(pythonFixed(2.675, 2)).toBe('2.67'); // 2.675 is stored below the tie
    expect(pythonFixed(1.005, 2)).toBe('1.00');
    expect(pythonFixed(61.2049, 2)).toBe('61.20');
    expect(pythonFixed(Number.NaN, 2)).toBe('nan');
    expect(pythonFixed(-Infinity, 2)).toBe('-inf');
  });
});
