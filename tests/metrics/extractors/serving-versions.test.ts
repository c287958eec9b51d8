// Every result-block layout benchmark_serving has printed over its versions, and the SemiAnalysis
// client's, read from fixtures written in their shapes (tests/fixtures/logs/serving/versions/):
// the failed-request count comes out right whatever the version printed about it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseServingLog } from '../../../framework/metrics/extractors/serving.ts';

const dir = path.resolve(import.meta.dirname, '../../fixtures/logs/serving/versions');

function parse(name: string) {
  const { results, problems } = parseServingLog(readFileSync(path.join(dir, name), 'utf8'));
  const value = (c: number, metric: string) =>
    results.find((r) => r.concurrency === c)?.metrics.find((m) => m.name === metric)?.value;
  return { results, problems, value };
}

/** Each fixture: concurrency -> [prompts, failed]; the median TTFT there is 100 + c ms. */
const versions: Array<[string, Record<number, [number, number]>]> = [
  ['v1-successful-only.log', { 8: [64, 0], 16: [128, 0] }],
  ['v2-user-throughput-failed-banner.log', { 8: [64, 0], 16: [128, 3] }],
  ['v3-total-and-failed-lines.log', { 8: [64, 0], 16: [128, 5] }],
  ['v4-std-min-max-decoded-tokens.log', { 8: [64, 2], 16: [128, 0] }],
  ['v5-goodput-energy.log', { 8: [64, 0], 16: [128, 1] }],
  ['total-and-successful-only.log', { 8: [64, 4] }],
  ['sa-bench-serving.log', { 4: [32, 0], 8: [64, 2] }],
];

describe('benchmark_serving block layouts of every version', () => {
  for (const [file, runs] of versions) {
    it(`${file}: failed and successful requests and latencies per concurrency`, () => {
      const { results, problems, value } = parse(file);
      expect(problems).toEqual([]);
      expect(results.map((r) => r.concurrency)).toEqual(Object.keys(runs).map(Number));
      for (const [c, [prompts, failed]] of Object.entries(runs).map(([c, v]) => [Number(c), v] as const)) {
        expect(value(c, 'SERVER_FAILED_REQUESTS'), `${file} c=${c}`).toBe(failed);
        expect(value(c, 'SERVER_SUCCESSFUL_REQUESTS')).toBe(prompts - failed);
        expect(value(c, 'SERVER_MEDIAN_TTFT')).toBe(100 + c);
        expect(value(c, 'SERVER_MEDIAN_E2EL')).toBe((100 + c) * 10);
      }
    });
  }

  it('reads the optional lines: user throughput, Std/Min/Max, decoded tokens per iteration, goodput, energy', () => {
    const v1 = parse('v1-successful-only.log');
    expect(v1.value(8, 'SERVER_USER_THROUGHPUT')).toBeUndefined();
    expect(v1.value(8, 'SERVER_STD_TTFT')).toBeUndefined();
    const v4 = parse('v4-std-min-max-decoded-tokens.log');
    expect(v4.value(8, 'SERVER_STD_TTFT')).toBe(4.25);
    expect(v4.value(8, 'SERVER_MIN_TTFT')).toBe(88);
    expect(v4.value(8, 'SERVER_MAX_E2EL')).toBe(1188);
    expect(v4.value(16, 'SERVER_MEAN_AVG_DECODED_TOKENS_PER_ITER')).toBe(2.41);
    expect(v4.value(16, 'SERVER_P99_AVG_DECODED_TOKENS_PER_ITER')).toBe(2.7);
    const v5 = parse('v5-goodput-energy.log');
    expect(v5.value(16, 'SERVER_REQUEST_GOODPUT')).toBe(5.29);
    expect(v5.value(16, 'SERVER_TOTAL_ENERGY')).toBe(123456.789);
    expect(v5.value(16, 'SERVER_OUTPUT_TOKENS_PER_SECOND_PER_WATT')).toBe(3.1416);
    expect(v5.value(16, 'SERVER_TOTAL_GPU_POWER')).toBe(4321.5);
    expect(v5.results[1].metrics.find((m) => m.name === 'SERVER_TOTAL_ENERGY')?.unit).toBe('J');
  });

  it('takes the SA script\'s trailing "Total failed requests" for its own run, not for the next one', () => {
    const text = readFileSync(path.join(dir, 'sa-bench-serving.log'), 'utf8');
    // Without the line of the second run, that run has no failure information: 0.
    const cut = text.replace(/Total failed requests: 2\n/, '');
    const { results } = parseServingLog(cut);
    const failed = (c: number) => results.find((r) => r.concurrency === c)?.metrics.find((m) => m.name === 'SERVER_FAILED_REQUESTS')?.value;
    expect([failed(4), failed(8)]).toEqual([0, 0]);
  });
});
