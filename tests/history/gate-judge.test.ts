// The robust gate's pure core (framework/history/gate/): series in, findings out. Seeded noise, so
// every figure below is the same on every machine; each rule is shown by a case it decides.
import { describe, expect, it } from 'vitest';
import { judgeRun, runWideEstimates, type GateSeries, type RunPoint } from '../../framework/history/gate/judge-run.ts';
import { leaveOneOutTrimmedResiduals, madScale, normalQuantile, tQuantile, trimmedMean } from '../../framework/history/gate/robust.ts';
import { normalTail, ruleThresholds, seriesAlpha } from '../../framework/history/gate/thresholds.ts';
import { segment } from '../../framework/history/run-verdict.ts';
import type { Alert } from '../../framework/history/alert-store.ts';

/** mulberry32: a seeded uniform generator, and normal deviates from it (Box-Muller). */
function rng(seed: number) {
  let s = seed | 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { uniform, normal: () => Math.sqrt(-2 * Math.log(uniform() || 1e-12)) * Math.cos(2 * Math.PI * uniform()) };
}

const OPTIONS = { alpha: 0.05, minRuns: 5, runId: 'now' };

/** A nixl-like run: 13 tests, 29 gating figures and 72 shown ones, `runs` post-merge runs of history. */
function suite(seed: number, opts: { runs?: number; noise?: (r: ReturnType<typeof rng>) => number; step?: number; stepRuns?: number; badRun?: number; mixed?: boolean } = {}): GateSeries[] {
  const r = rng(seed);
  const runs = opts.runs ?? 14;
  const noise = opts.noise ?? ((g) => 0.03 * g.normal());
  const stepRuns = opts.stepRuns ?? 0;
  return Array.from({ length: 101 }, (_, s) => {
    const level = 10 + s;
    // mixed: every other figure a latency (lower is better), worse when it rises
    const up = !(opts.mixed && s % 2 === 1);
    const history: RunPoint[] = Array.from({ length: runs + stepRuns }, (_, k) => {
      let value = level * (1 + noise(r));
      if (k === opts.badRun) value *= up ? 0.8 : 1.2;
      if (s === 0 && k >= runs) value *= 1 - (opts.step ?? 0);
      return { runId: `r${k}`, tsMs: k * 1000, value };
    });
    return {
      seriesId: s,
      testId: `test${s % 13}`,
      metric: 'BW_GBPS',
      labels: { block: s },
      unit: 'GB/s',
      higherIsBetter: up,
      gated: s < 29,
      threshold: 0.05,
      value: level * (1 + noise(r)) * (s === 0 ? 1 - (opts.step ?? 0) : 1),
      history,
      previous: history.at(-1),
    };
  });
}

const alerted = (series: GateSeries[]) => judgeRun(series, OPTIONS).findings.filter((f) => f.regression);

/**
 * A quiet run, then series 0's previous run and this one set zPrev and zNow of its noise below the
 * level of the runs before them (the noise as the gate measured it on the quiet run).
 */
function twoRunCase(seed: number, zPrev: number, zNow: number) {
  const series = suite(seed);
  const scale = judgeRun(series, OPTIONS).findings[0].scale;
  const s0 = series[0];
  const level = trimmedMean(s0.history.slice(0, -1).map((p) => p.value));
  const previous = { ...s0.history.at(-1)!, value: level * (1 - zPrev * scale) };
  series[0] = { ...s0, history: [...s0.history.slice(0, -1), previous], previous, value: level * (1 - zNow * scale) };
  return judgeRun(series, OPTIONS);
}

describe('robust statistics', () => {
  it('quantiles: normal and Student t at the tails the gate uses', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 5);
    expect(tQuantile(0.975, 10)).toBeCloseTo(2.228, 2);
    expect(tQuantile(0.99, 5)).toBeCloseTo(3.365, 1);
    expect(tQuantile(0.999, Infinity)).toBeCloseTo(3.090232, 5);
  });
  it('the MAD scale: one wild value barely moves it, where it multiplies the standard deviation', () => {
    const calm = [1, -1, 0.5, -0.5, 0.2, -0.2, 0.8, -0.8, 0.1];
    const sd = (xs: number[]) => Math.sqrt(xs.reduce((a, x) => a + x * x, 0) / (xs.length - 1));
    expect(madScale([...calm, 50], 0) / madScale([...calm, 0.3], 0)).toBeLessThan(1.5);
    expect(sd([...calm, 50]) / sd([...calm, 0.3])).toBeGreaterThan(10);
  });
});

describe("the rules' thresholds", () => {
  it('the two rules together spend exactly a series share of the run alpha (Sidak), not less', () => {
    // 29 gating figures, the two runs' z correlated through their shared level (13 baseline runs).
    const rho = 1.06 / 13 / (1 + 1.06 / 13);
    const t = ruleThresholds(0.05, 29, rho, Infinity, false);
    const q = seriesAlpha(0.05, 29);
    expect(q).toBeCloseTo(1 - 0.95 ** (1 / 29), 12);
    const g = rng(99);
    const pairs = 400_000;
    let fired = 0;
    for (let k = 0; k < pairs; k++) {
      const level = g.normal() * Math.sqrt(rho / (1 - rho));
      const zPrev = (g.normal() + level) * Math.sqrt(1 - rho);
      const zNow = (g.normal() + level) * Math.sqrt(1 - rho);
      if (zNow >= t.oneRun || (zPrev >= t.each && zNow >= t.each && (zPrev + zNow) / Math.sqrt(2 + 2 * rho) >= t.twoRun)) fired++;
    }
    // Bonferroni between the rules (each its own share, their overlap counted twice) spends about 12 % less.
    expect(fired / pairs / q).toBeGreaterThan(0.92);
    expect(fired / pairs / q).toBeLessThan(1.08);
    // the two-run mean needs less than its Bonferroni share would ask
    expect(t.twoRun).toBeLessThan(normalQuantile(1 - (0.05 * 0.55) / 29) - 0.05);
  });
  it('after a judged run, the two rules spend the share on new alerts only: pairs whose previous run raised its own alert are not counted', () => {
    const rho = 1.06 / 13 / (1 + 1.06 / 13);
    const plain = ruleThresholds(0.05, 29, rho, Infinity, false);
    const t = ruleThresholds(0.05, 29, rho, Infinity, false, true);
    const q = seriesAlpha(0.05, 29);
    expect(t.oneRun).toBe(plain.oneRun);
    expect(t.twoRun).toBeLessThan(plain.twoRun - 0.02);
    const g = rng(7);
    const pairs = 400_000;
    let raised = 0;
    let raisedPlain = 0;
    for (let k = 0; k < pairs; k++) {
      const level = g.normal() * Math.sqrt(rho / (1 - rho));
      const zPrev = (g.normal() + level) * Math.sqrt(1 - rho);
      const zNow = (g.normal() + level) * Math.sqrt(1 - rho);
      // the previous run's own one-run alert would be open now: not this run's
      if (zPrev >= t.oneRun) continue;
      const fires = (c2: number) => zNow >= t.oneRun || (zPrev >= t.each && zNow >= t.each && (zPrev + zNow) / Math.sqrt(2 + 2 * rho) >= c2);
      if (fires(t.twoRun)) raised++;
      if (fires(plain.twoRun)) raisedPlain++;
    }
    expect(raised / pairs / q).toBeGreaterThan(0.92);
    expect(raised / pairs / q).toBeLessThan(1.08);
    // the thresholds made for an unjudged previous run leave part of the share unspent in a stream
    expect(raisedPlain / raised).toBeLessThan(0.97);
  });
  it('normal tail: the quantiles read back', () => {
    for (const p of [0.3, 0.05, 1e-3, 1e-5]) expect(normalTail(normalQuantile(1 - p)) / p).toBeCloseTo(1, 5);
  });
  it('leave-one-out residuals: each value against the trimmed mean of the others, ties included', () => {
    const xs = [5, 3, 3, 9, 1, 3, 7, 2, 8, 3, 6];
    const direct = xs.map((x, i) => x - trimmedMean(xs.filter((_, k) => k !== i)));
    leaveOneOutTrimmedResiduals(xs).forEach((r, i) => expect(r).toBeCloseTo(direct[i], 12));
  });
});

describe('the gate on a whole run', () => {
  it('noise alone raises an alert in at most the share alpha allows, though 29 figures gate', () => {
    const trials = 300;
    let runs = 0;
    for (let seed = 1; seed <= trials; seed++) if (alerted(suite(seed)).length > 0) runs++;
    // alpha = 5 % for the whole run; a per-figure rule at 5 % would flag most runs
    expect(runs / trials).toBeLessThanOrEqual(0.07);
  });

  it('a 15 % step in one headline figure alerts on its first run, with this run as its first bad run', () => {
    let caught = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const hit = alerted(suite(seed, { step: 0.15 })).find((f) => f.seriesId === 0);
      if (hit) {
        caught++;
        // this run alone is evidence enough: the change begins here, the run before is the last good one
        expect([hit.firstRunId, hit.lastGoodRunId]).toEqual(['now', 'r13']);
        expect(hit.change).toBeLessThan(-0.05);
      }
    }
    expect(caught).toBeGreaterThanOrEqual(90);
  });

  it('a 10 % step too small for one run is confirmed by the next: the alert starts at the earlier run', () => {
    // One run of history exactly at the level, then two runs 10 % down: z about 3.3 each, 4.7 together.
    const series = suite(7, { step: 0.1, stepRuns: 1 });
    const found = judgeRun(series, OPTIONS).findings.find((f) => f.seriesId === 0)!;
    expect(found.status).toBe('regression');
    if (found.note.includes('two runs')) expect(found.firstRunId).toBe('r14');
  });

  it('two runs each 2.2 noise worse alert together (their mean beyond the exact two-run threshold, short of Bonferroni\'s)', () => {
    const verdict = twoRunCase(21, 2.24, 2.24);
    const found = verdict.findings.find((f) => f.seriesId === 0)!;
    expect(found).toMatchObject({ status: 'regression', regression: true });
    const meanZ = Number(found.note.match(/confirmed by two runs \(z ([\d.]+)/)?.[1]);
    // Bonferroni's 55 % share for the two-run rule over 29 figures would have asked for more
    expect(meanZ).toBeLessThan(normalQuantile(1 - (0.05 * 0.55) / 29));
    // the change began at the earlier run: both runs are as far off
    expect([found.firstRunId, found.lastGoodRunId]).toEqual(['r13', 'r12']);
  });

  it('a two-run alert whose earlier run was barely worse dates the change at this run', () => {
    const found = twoRunCase(21, 1.25, 3.25).findings.find((f) => f.seriesId === 0)!;
    expect(found).toMatchObject({ status: 'regression', regression: true });
    expect(found.note).toMatch(/two runs/);
    expect([found.firstRunId, found.lastGoodRunId]).toEqual(['now', 'r13']);
  });

  it('one bad night in the history (every figure 20 % worse) is left out instead of widening the noise', () => {
    const verdict = judgeRun(suite(3, { step: 0.15, badRun: 5 }), OPTIONS);
    expect(verdict.outlierRuns).toEqual(['r5']);
    // bandwidths down and latencies up on the same night: worse in each figure's direction
    expect(judgeRun(suite(3, { step: 0.15, badRun: 5, mixed: true }), OPTIONS).outlierRuns).toEqual(['r5']);
    expect(verdict.findings.find((f) => f.seriesId === 0)?.regression).toBe(true);
    expect(verdict.findings.find((f) => f.seriesId === 1)!.scale).toBeLessThan(0.05);
  });

  it('where single values run wild (1 in 20 off by 20 %), one wild value never alerts: two runs must agree', () => {
    const heavy = (g: ReturnType<typeof rng>) => (g.uniform() < 0.05 ? (g.uniform() < 0.5 ? 0.2 : -0.2) : 0.03 * g.normal());
    let noisy = 0;
    for (let seed = 1; seed <= 200; seed++) if (alerted(suite(seed, { noise: heavy, runs: 30 })).length > 0) noisy++;
    expect(noisy / 200).toBeLessThanOrEqual(0.12);
    // a lone 20 % drop on a heavy-tailed test: suspect, not an alert
    const series = suite(11, { noise: heavy, runs: 30 });
    const verdict = judgeRun(series, OPTIONS);
    if (verdict.heavyTailed.includes('test0')) {
      series[0] = { ...series[0], value: 10 * 0.8, previous: { runId: 'r29', tsMs: 29_000, value: 10 } };
      expect(judgeRun(series, OPTIONS).findings[0].regression).toBe(false);
    }
  });

  it('an open alert stays a regression of every run until its series is back, then recovers', () => {
    const base = suite(5)[0];
    const open = { id: 'a1', level: 10, scale: 0.03, size: 0.2, firstRunId: 'r10', previousBack: false };
    const still = judgeRun([{ ...base, value: 8, openAlert: open }], OPTIONS).findings[0];
    expect(still).toMatchObject({ status: 'still-regressed', regression: true, alertId: 'a1', firstRunId: 'r10' });
    const back = judgeRun([{ ...base, value: 10.05, openAlert: open }], OPTIONS).findings[0];
    expect(back).toMatchObject({ status: 'recovered', regression: false });
    expect(back.note).toMatch(/closes if the next run is too/);
    expect(judgeRun([{ ...base, value: 10.05, openAlert: { ...open, previousBack: true } }], OPTIONS).findings[0].note).toMatch(/for two runs: alert a1 closes/);
  });

  it('a fixed series reads back within its noise; a partial fix beyond the threshold and the noise keeps the alert', () => {
    const base = suite(5)[0];
    const open = { id: 'a1', level: 10, scale: 0.03, size: 0.12, firstRunId: 'r10', previousBack: false };
    const status = (value: number, scale = 0.03) => judgeRun([{ ...base, value, openAlert: { ...open, scale } }], OPTIONS).findings[0].status;
    // fixed, one noise worse (3.5 %: beyond half the 5 % threshold, the rule before kept it red)
    expect(status(9.65)).toBe('recovered');
    // at the regressed level, or nearer it than the old one
    expect(status(8.8)).toBe('still-regressed');
    expect(status(9.35)).toBe('still-regressed');
    // a quiet series (1 % noise) fixed halfway: 5.5 % worse, beyond the threshold and 2 noise
    expect(status(9.45, 0.01)).toBe('still-regressed');
    expect(status(9.6, 0.01)).toBe('recovered');
  });

  it('a figure that does not gate is shown, never an alert; too little history is said, not judged', () => {
    const series = suite(9, { step: 0.3 });
    series[0] = { ...series[0], gated: false };
    const f = judgeRun(series, OPTIONS).findings[0];
    expect(f).toMatchObject({ status: 'suspect', regression: false });
    const young = judgeRun([{ ...series[1], history: series[1].history.slice(0, 3), previous: undefined }], OPTIONS).findings[0];
    expect(young).toMatchObject({ status: 'unjudged', regression: false });
    expect(young.note).toMatch(/3 of 5 baseline run\(s\)/);
  });

  it('a series without noise (identical runs) has no wild values: a change beyond the threshold alerts on one run', () => {
    const flat = suite(17).map((x) => ({ ...x, history: x.history.map((p) => ({ ...p, value: 1.48e-6 })), previous: undefined, value: 1.48e-6 }));
    flat[0] = { ...flat[0], higherIsBetter: false, value: 1.5e-3 }; // a latency 1,000 times its level
    const verdict = judgeRun(flat, OPTIONS);
    expect(verdict.heavyTailed).toEqual([]);
    expect(verdict.findings[0]).toMatchObject({ status: 'regression', regression: true });
  });

  it('the direction comes from the metric: a latency 20 % up is worse, 20 % down is better', () => {
    const series = suite(13).map((s) => ({ ...s, higherIsBetter: false }));
    const up = judgeRun([{ ...series[0], value: series[0].value * 1.3 }, ...series.slice(1)], OPTIONS).findings[0];
    expect(up.regression).toBe(true);
    expect(up.change).toBeGreaterThan(0);
    const down = judgeRun([{ ...series[0], value: series[0].value * 0.7 }, ...series.slice(1)], OPTIONS).findings[0];
    expect(down).toMatchObject({ status: 'improved', regression: false });
  });
});

describe('a run judged one test at a time, as its tests end', () => {
  it('against the whole run\'s estimates, each test gets the verdict the whole run gives it', () => {
    for (const seed of [3, 5, 8]) {
      const series = suite(seed, { step: 0.12, badRun: 6 });
      const whole = judgeRun(series, OPTIONS);
      const runWide = runWideEstimates(series, OPTIONS);
      expect(runWide.family).toBe(whole.family);
      expect([...runWide.outlierRuns]).toEqual(whole.outlierRuns);
      expect(whole.outlierRuns).toEqual(['r6']); // the bad night, found from every test's series
      for (const testId of ['test0', 'test5']) {
        const alone = judgeRun(series.filter((x) => x.testId === testId), { ...OPTIONS, runWide });
        const same = whole.findings.filter((f) => f.testId === testId);
        expect(alone.findings.map((f) => [f.seriesId, f.status, f.z, f.detectable])).toEqual(same.map((f) => [f.seriesId, f.status, f.z, f.detectable]));
      }
    }
  });

  it('without them, a test alone is judged on its own few series: its noise and family differ', () => {
    const series = suite(3);
    const whole = judgeRun(series, OPTIONS);
    const alone = judgeRun(series.filter((x) => x.testId === 'test0'), OPTIONS);
    expect(alone.family).toBeLessThan(whole.family);
    expect(alone.findings[0].detectable).not.toEqual(whole.findings.find((f) => f.seriesId === alone.findings[0].seriesId)!.detectable);
  });
});

describe('the worsening the gate states it catches', () => {
  /** Series 0 of a quiet run, its direction set, and the size the gate states for it. */
  const stated = (seed: number, up: boolean) => {
    const series = suite(seed).map((x, k) => (k === 0 ? { ...x, higherIsBetter: up } : x));
    return { series, size: judgeRun(series, OPTIONS).findings[0].detectable! };
  };
  const worse = (value: number, d: number, up: boolean) => value * (up ? 1 - d : 1 + d);
  const caughtShare = (trials: number, catches: (seed: number) => boolean) => {
    let caught = 0;
    for (let seed = 1; seed <= trials; seed++) if (catches(seed)) caught++;
    return caught / trials;
  };

  for (const up of [true, false]) {
    it(`a step of the stated one-run size is caught on its first run about 95 % of the time, half of it seldom (${up ? 'a bandwidth' : 'a latency'})`, () => {
      const at = (factor: number) =>
        caughtShare(120, (seed) => {
          const { series, size } = stated(seed, up);
          expect(size.oneRun).toBeGreaterThan(0.05);
          expect(size.byTwoRuns).toBeLessThan(size.oneRun);
          const stepped = [{ ...series[0], value: worse(series[0].value, size.oneRun * factor, up) }, ...series.slice(1)];
          return judgeRun(stepped, OPTIONS).findings[0].regression;
        });
      expect(at(1)).toBeGreaterThanOrEqual(0.91);
      expect(at(0.5)).toBeLessThan(0.3);
    });
  }

  it('a step of the stated two-run size, lasting two runs, is caught by its second about 95 % of the time', () => {
    const share = caughtShare(200, (seed) => {
      const { series, size } = stated(seed, true);
      const s0 = series[0];
      const previous = { ...s0.previous!, runId: 'r14', tsMs: 14_000, value: worse(10 * (1 + 0.03 * rng(seed + 1000).normal()), size.byTwoRuns, true) }; // series 0's level is 10
      const stepped = [{ ...s0, history: [...s0.history, previous], previous, value: worse(s0.value, size.byTwoRuns, true) }, ...series.slice(1)];
      return judgeRun(stepped, OPTIONS).findings[0].regression;
    });
    expect(share).toBeGreaterThanOrEqual(0.91);
  });

  it('a test with wild single values states no one-run size; noisier figures need larger changes', () => {
    const wild = (r: ReturnType<typeof rng>) => (r.uniform() < 0.05 ? (r.uniform() < 0.5 ? 0.2 : -0.2) : 0.03 * r.normal());
    const verdict = judgeRun(suite(3, { noise: wild }), OPTIONS);
    expect(verdict.heavyTailed.length).toBeGreaterThan(0);
    const heavy = verdict.findings.find((f) => verdict.heavyTailed.includes(f.testId) && f.gated)!;
    expect(heavy.detectable!.oneRun).toBe(Infinity);
    expect(heavy.detectable!.byTwoRuns).toBeLessThan(Infinity);
    const quiet = judgeRun(suite(3, { noise: (r) => 0.01 * r.normal() }), OPTIONS).findings[0].detectable!;
    const loud = judgeRun(suite(3, { noise: (r) => 0.06 * r.normal() }), OPTIONS).findings[0].detectable!;
    expect(loud.oneRun).toBeGreaterThan(2 * quiet.oneRun);
    // at 1 % noise the threshold (5 %) decides: nothing below it is ever caught
    expect(quiet.byTwoRuns).toBeGreaterThan(0.05);
  });
});

describe('the baseline segment', () => {
  const points: RunPoint[] = Array.from({ length: 10 }, (_, k) => ({ runId: `r${k}`, tsMs: k * 10, value: k < 5 ? 100 : 80 }));
  const alert = (over: Partial<Alert>): Alert =>
    ({ id: 'a1', seriesId: 1, testId: 't', metric: 'm', labels: {}, unit: '', higherIsBetter: true, status: 'open', levelBefore: 100, scaleBefore: 0.03, change: -0.2, confirmedBy: 'one run', firstRunId: 'r5', firstTsMs: 50, openedRunId: 'r5', backRuns: 0, ...over }) as Alert;
  it('an open alert: the runs before it, and its state; a pre-merge run: the current level after it', () => {
    const post = segment(points, [alert({})], false);
    expect(post.history.map((p) => p.runId)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(post.openAlert?.level).toBe(100);
    expect(post.openAlert?.size).toBe(0.2); // a drop of 20 %, as worse
    // an alert stored without its change still closes (on the threshold and the noise)
    expect(segment(points, [alert({ change: Number.NaN })], false).openAlert?.size).toBe(Infinity);
    const pre = segment(points, [alert({})], true);
    expect(pre.history.map((p) => p.value)).toEqual([80, 80, 80, 80, 80]);
    expect(pre.openAlert).toBeUndefined();
  });
  it('acknowledged: the new level is the baseline; closed by itself: its runs are left out', () => {
    expect(segment(points, [alert({ status: 'acked' })], false).history.map((p) => p.runId)).toEqual(['r5', 'r6', 'r7', 'r8', 'r9']);
    expect(segment(points, [alert({ status: 'closed', closedTsMs: 80 })], false).history.map((p) => p.runId)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r8', 'r9']);
  });
});
