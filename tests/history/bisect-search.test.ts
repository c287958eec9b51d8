// The parts of `history bisect` that decide, without running anything: the search (how many steps,
// skipped candidates, a bad end that does not reproduce), the step's verdict by the gate's rule
// with the noise of the repeats, and how the metric and values-given ends are read.
import { describe, expect, it } from 'vitest';
import { search, type Mark } from '../../framework/history/bisect/search.ts';
import { judgeStep, pooledSd } from '../../framework/history/bisect/step-verdict.ts';
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

  it('steps around a candidate that cannot be measured, and names the skipped ones that may be first', async () => {
    const around = await searchFor(15, 9, true, [10]);
    expect(around).toMatchObject({ firstBad: 9, maybe: [] });
    const ambiguous = await searchFor(15, 9, true, [8]);
    expect(ambiguous).toMatchObject({ firstBad: 9, maybe: [8] });
  });
});

describe("a step's verdict", () => {
  const rule = { threshold: 0.05, noiseK: 2.75 };

  it('is bad beyond the threshold and the noise, good within either', () => {
    expect(judgeStep([150, 151], [100, 101], [150, 149], false, rule)).toMatchObject({ bad: true, mean: 150.5 });
    expect(judgeStep([101, 102], [100, 101], [150, 149], false, rule).bad).toBe(false);
    // 8 % worse, but the repeats spread by 5: within 2.75 standard deviations.
    const noisy = judgeStep([108, 108], [95, 105, 100], [150, 140], false, rule);
    expect(noisy.bad).toBe(false);
    expect(noisy.note).toMatch(/within the noise/);
    // Higher is better: a drop is bad, a rise is not.
    expect(judgeStep([80], [100], [80], true, rule).bad).toBe(true);
    expect(judgeStep([120], [100], [80], true, rule).bad).toBe(false);
    expect(judgeStep([80], [100], [80], true, rule).diffPercent).toBeCloseTo(-20);
  });

  it('pools the spread of each group around its own mean (a slowdown between groups is no noise)', () => {
    expect(pooledSd([[100], [150]])).toBeUndefined();
    expect(pooledSd([[99, 101], [149, 151]])).toBeCloseTo(Math.SQRT2);
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
