// The family a run's false-alarm budget is spread over (framework/history/gate/family.ts): a gating
// figure counts by its chance to alarm on noise at all, so figures that cannot (printed far coarser
// than their noise, or far quieter than their threshold) leave their share to the others.
import { describe, expect, it } from 'vitest';
import { alarmWeight, effectiveFamily, type SeriesFloors } from '../../framework/history/gate/family.ts';
import { judgeRun, type GateSeries, type RunPoint } from '../../framework/history/gate/judge-run.ts';

const ALPHA = 0.05;
const plain: SeriesFloors = { lift: 1, floor: 5 / 3, rho: 0.07, heavy: false };

describe('the weight of a gating figure in the family', () => {
  it('is 1 for a figure its threshold and print do not floor', () => {
    expect(alarmWeight(plain, ALPHA, 31)).toBe(1);
    expect(alarmWeight({ ...plain, heavy: true }, ALPHA, 31)).toBe(1);
  });

  it('is near 0 for a figure printed to a step four times its noise, or far quieter than its threshold', () => {
    expect(alarmWeight({ ...plain, lift: 4 }, ALPHA, 31)).toBeLessThan(1e-6);
    // 1 % noise under upstream's 5 % threshold: a false alarm needs 5 noise at once
    expect(alarmWeight({ ...plain, floor: 5 }, ALPHA, 31)).toBeLessThan(0.01);
  });

  it('falls as the floor rises between the two bounds', () => {
    const weights = [2.5, 3, 3.5, 4].map((floor) => alarmWeight({ ...plain, floor }, ALPHA, 31));
    for (let k = 1; k < weights.length; k++) expect(weights[k]).toBeLessThan(weights[k - 1]);
    expect(weights[0]).toBeLessThan(1);
    expect(weights[0]).toBeGreaterThan(0.3); // the one-run rule still spends its whole share
  });
});

describe('the family of a run', () => {
  it('is the count where no figure is floored, and leaves out what floored figures cannot spend', () => {
    expect(effectiveFamily(Array(31).fill(plain), ALPHA)).toBe(31);
    expect(effectiveFamily([], ALPHA)).toBe(0);
    const family = effectiveFamily([...Array(29).fill(plain), { ...plain, lift: 1.45 }, { ...plain, lift: 4 }], ALPHA);
    expect(family).toBeGreaterThanOrEqual(29);
    expect(family).toBeLessThan(29.05);
  });

  /** A run of 10 gating figures at 3 % noise, 14 runs each, and 20 more printed to a step of half their level, gating or shown. */
  function run(coarseGate: boolean): GateSeries[] {
    let seed = 7;
    const uniform = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    return Array.from({ length: 30 }, (_, s) => {
      const level = 10 + s;
      const history: RunPoint[] = Array.from({ length: 14 }, (_, k) => ({ runId: `r${k}`, tsMs: k, value: level * (1 + 0.03 * normal()) }));
      return {
        seriesId: s, testId: `test${s % 5}`, metric: 'BW_GBPS', labels: { s }, unit: 'GB/s', higherIsBetter: true, gated: s < 10 || coarseGate,
        threshold: 0.05, ...(s >= 10 ? { rounded: level / 2 } : {}), value: level * (1 + 0.03 * normal()), history, previous: history.at(-1),
      };
    });
  }

  it('so figures that cannot alarm on noise leave the others as sensitive as a run without them', () => {
    const alone = judgeRun(run(false), { alpha: ALPHA, minRuns: 5, runId: 'now' });
    const beside = judgeRun(run(true), { alpha: ALPHA, minRuns: 5, runId: 'now' });
    expect(alone.family).toBe(10);
    expect(beside.family).toBeLessThan(10.05);
    // the same values in both runs, the coarse figures gating in one: the ten plain ones' stated sizes match
    for (let s = 0; s < 10; s++) {
      const a = alone.findings[s].detectable!;
      const b = beside.findings[s].detectable!;
      expect(b.oneRun).toBeCloseTo(a.oneRun, 3);
      expect(b.byTwoRuns).toBeCloseTo(a.byTwoRuns, 3);
    }
  });
});
