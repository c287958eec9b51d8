// The parts of `history bisect` that decide, without running anything: the search (how many steps,
// skipped candidates, a bad end that does not reproduce, a step that cannot tell), the noise of the
// repeats, and how the metric and values-given ends are read (the statistics: bisect-statistics.test.ts).
import { describe, expect, it } from 'vitest';
import { search, type Mark } from '../../framework/history/bisect/search.ts';
import { pooledNoise } from '../../framework/history/bisect/step-verdict.ts';
import { parseMetricRef } from '../../framework/history/bisect/metric-ref.ts';
import { valuesReference } from '../../framework/history/bisect/references.ts';
import { testNamePattern, metricValueOf } from '../../framework/history/bisect/step-run.ts';
import { roughSteps } from '../../framework/history/bisect/bisect.ts';
import { record } from '../fixtures/history/records.ts';

/** A search over `count` candidates whose first bad one is `firstBad` (none: count). */
const searchFor = (count: number, firstBad: number, lastIsBad: boolean, skip: number[] = []) =>
  search({ count, lastIsBad, test: async (k): Promise<Mark> => (skip.includes(k) ? 'skip' : k >= firstBad ? 'bad' : 'good') });

describe('the bisection search', () => {
  it('finds any first bad commit among the 15 after a good one in at most 5 steps (16 commits)', async () => {
    for (let firstBad = 0; firstBad < 15; firstBad++) {
      const found = await searchFor(15, firstBad, true);
      expect(found.firstBad, `first bad ${firstBad}`).toBe(firstBad);
      expect(found.measured.length).toBeLessThanOrEqual(5);
      expect(new Set(found.measured).size).toBe(found.measured.length);
    }
    expect(roughSteps(14)).toBe(4);
  });

  it('measures a bad end known only by its given values once, and finds none when it is good after all', async () => {
    const none = await searchFor(15, 15, true);
    expect(none.firstBad).toBeUndefined();
    expect(none.measured.at(-1)).toBe(14);
    const last = await searchFor(15, 14, true);
    expect(last.firstBad).toBe(14);
    expect(last.measured.at(-1)).toBe(14);
  });

  it('searches a list of refs where none may be bad', async () => {
    expect((await searchFor(6, 6, false)).firstBad).toBeUndefined();
    expect((await searchFor(6, 5, false)).firstBad).toBe(5);
    expect((await searchFor(6, 0, false)).firstBad).toBe(0);
  });

  it('stops at a step that cannot tell, naming the range the first bad one is still in', async () => {
    const unsure = await search({ count: 15, lastIsBad: true, lastMeasured: true, test: async (k): Promise<Mark> => (k === 4 ? 'unsure' : k >= 5 ? 'bad' : 'good') });
    expect(unsure.firstBad).toBeUndefined();
    // 6 is bad, 2 good, 4 cannot tell: the first bad one is after 2 and at or before 6.
    expect(unsure.measured).toEqual([6, 2, 4]);
    expect(unsure.unsure).toEqual({ index: 4, after: 2, upTo: 6 });
  });

  it('does not measure a bad end again that was measured already', async () => {
    const found = await search({ count: 15, lastIsBad: true, lastMeasured: true, test: async () => 'good' });
    expect(found.firstBad).toBe(14);
    expect(found.measured).not.toContain(14);
  });

  it('steps around a candidate that cannot be measured, and names the skipped ones that may be first', async () => {
    const around = await searchFor(15, 9, true, [10]);
    expect(around).toMatchObject({ firstBad: 9, maybe: [] });
    const ambiguous = await searchFor(15, 9, true, [8]);
    expect(ambiguous).toMatchObject({ firstBad: 9, maybe: [8] });
  });
});

describe('the noise', () => {
  it('pools the spread of each group around its own mean (a slowdown between groups is no noise)', () => {
    expect(pooledNoise([[100], [150]])).toEqual({ sd: 0, freedom: 0 });
    expect(pooledNoise([[99, 101], [149, 151]]).sd).toBeCloseTo(Math.SQRT2);
    expect(pooledNoise([[99, 101], [149, 151]]).freedom).toBe(2);
    // A print rounded to 1: no spread below what the rounding hides.
    expect(pooledNoise([[100, 100], [150, 150]], 1 / Math.sqrt(12)).sd).toBeCloseTo(0.2887, 4);
  });
});

describe('what bisect reads', () => {
  it('a metric with or without its labels', () => {
    expect(parseMetricRef('SERVER_MEDIAN_TTFT')).toEqual({ name: 'SERVER_MEDIAN_TTFT' });
    expect(parseMetricRef('SERVER_MEDIAN_TTFT[concurrency=8]')).toEqual({ name: 'SERVER_MEDIAN_TTFT', labels: { concurrency: 8 } });
    expect(() => parseMetricRef('A[b]')).toThrow(/label 'b' is not label=value/);
  });

  it('values given for a ref, and a run named otherwise', () => {
    expect(valuesReference('good', 'v1.2:101.5,99.8')).toMatchObject({ ref: 'v1.2', values: [101.5, 99.8] });
    expect(valuesReference('bad', 'registry/img:2.1:3e2')).toMatchObject({ ref: 'registry/img:2.1', values: [300] });
    expect(valuesReference('good', 'nightly-42')).toBeUndefined();
    expect(valuesReference('good', 'run-2026-11-28T10-00-00-000Z-123')).toBeUndefined();
  });

  it("a record's one value of the metric, or why there is none", () => {
    const r = record({ runId: 'r', day: 0 });
    expect(metricValueOf(r, { name: 'SERVER_MEDIAN_TTFT' }).value).toBe(20);
    expect(metricValueOf(r, { name: 'SERVER_MEDIAN_TTFT', labels: { concurrency: 8 } }).value).toBe(20);
    expect(metricValueOf(r, { name: 'SERVER_MEDIAN_TTFT', labels: { concurrency: 1 } }).why).toMatch(/no value with the labels asked for; name one of SERVER_MEDIAN_TTFT\[concurrency=8\]/);
    expect(metricValueOf(r, { name: 'NOPE' }).why).toMatch(/^it yielded no NOPE \(it yielded SERVER_MEDIAN_TTFT/);
  });

  it('a -t pattern that selects exactly one test', () => {
    const pattern = new RegExp(testNamePattern('disagg_perf_a.b'));
    expect(pattern.test('framework/suite/suite.test.ts disagg disagg_perf_a.b')).toBe(true);
    expect(pattern.test('disagg disagg_perf_a.b_more')).toBe(false);
    expect(pattern.test('disagg disagg_perf_aXb')).toBe(false);
  });
});
