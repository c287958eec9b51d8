// The statistics of `history bisect`, in-process, each run of the test a SIMULATED measurement (the
// values a step's run returns are given, or seeded noise around a level): the ends measured again
// before any step, a step run until its verdict is significant, "inconclusive" within a budget
// naming the flag that would decide it, "nothing to search" when the ends are alike, the direction
// from the metric's definition, and the error rates at 3 % noise.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { bisect, type BisectPlan, type BisectResult, type Candidate } from '../../framework/history/bisect/bisect.ts';
import { budgetProblem, DEFAULT_BUDGET, MIN_END_RUNS, type Budget } from '../../framework/history/bisect/budget.ts';
import { metricDirection } from '../../framework/history/bisect/direction.ts';
import { valuesReference } from '../../framework/history/bisect/references.ts';
import { classifyStep, judgeEnds, pooledNoise } from '../../framework/history/bisect/step-verdict.ts';
import { studentTCritical } from '../../framework/history/bisect/student-t.ts';
import { answerLine } from '../../framework/commands/history/bisect-report.ts';
import { run as bisectCommand } from '../../framework/commands/history/bisect.ts';
import { EXIT_INCONCLUSIVE } from '../../framework/commands/support/exit-code.ts';
import { normalSample, seededRandom } from '../../runners/common/random.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'bisect-statistics-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const commits: Candidate[] = Array.from({ length: 16 }, (_, k) => ({ name: `c${k + 1}`, commit: String(k + 1) }));

/**
 * A bisection over 16 commits (good: 1, bad: 16, the last candidate), each given as one value of a
 * run; `value(commit, k)` is the k-th run (0-based) at that commit. Returns the result and the runs, in order.
 */
async function simulate(value: (commit: number, k: number) => number, budget: Partial<Budget> = {}): Promise<{ result: BisectResult; runs: number[]; lines: string[] }> {
  let current = 1;
  const counts = new Map<number, number>();
  const runs: number[] = [];
  const lines: string[] = [];
  const plan: BisectPlan = {
    testId: 'disagg_perf_simulated',
    testType: 'disagg',
    metric: { name: 'SERVER_MEDIAN_TTFT' },
    good: { end: 'good', given: 'good-run', values: [value(1, -1)], runIds: ['good-run'], ref: '1' },
    bad: { end: 'bad', given: 'bad-run', values: [value(16, -1)], runIds: ['bad-run'], ref: '16' },
    higherIsBetter: false,
    threshold: 0.05,
    candidates: commits.slice(1),
    lastIsBad: true,
    endStates: { good: commits[0], bad: commits[15] },
    budget: { ...DEFAULT_BUDGET, ...budget },
    outputRoot: path.join(scratch, 'runs'),
    env: {},
    prepare: (c) => {
      current = Number(c.commit);
      return {};
    },
  };
  const measure = async () => {
    const k = counts.get(current) ?? 0;
    counts.set(current, k + 1);
    runs.push(current);
    return { value: value(current, k) };
  };
  const result = await bisect(plan, { measure }, (line) => lines.push(line), () => undefined);
  return { result, runs, lines };
}

/** Values that alternate around `level` by `spread` (a fraction): a known, deterministic noise. */
const around = (level: number, spread: number) => (k: number) => level * (1 + (k % 2 === 0 ? spread : -spread) * (1 + (k % 3) / 10));

describe('bisect with statistics', () => {
  it('measures both ends again, at least 3 times each, before any step', async () => {
    const { result, runs } = await simulate((c, k) => around(c >= 11 ? 150 : 100, 0.01)(k));
    expect(runs.slice(0, 2 * MIN_END_RUNS).sort((a, b) => a - b)).toEqual([1, 1, 1, 16, 16, 16]);
    expect(result.ends.good.length).toBeGreaterThanOrEqual(MIN_END_RUNS);
    expect(result.ends.bad.length).toBeGreaterThanOrEqual(MIN_END_RUNS);
    expect(result.noise.freedom).toBeGreaterThan(0);
    expect(result.outcome).toMatchObject({ kind: 'found', candidate: { commit: '11' } });
  });

  it('runs a step again until its verdict is significant: a first value midway is not taken as good', async () => {
    // Commit 8 is bad (the change came at 8); its first run happens to land midway between the levels.
    const { result } = await simulate((c, k) => (c === 8 && k === 0 ? 125 : around(c >= 8 ? 150 : 100, 0.01)(k)), { repeat: 1 });
    const step = result.steps.find((s) => s.candidate.commit === '8')!;
    expect(step.values.length).toBeGreaterThan(1);
    expect(step.verdict).toBe('bad');
    expect(result.outcome).toMatchObject({ kind: 'found', candidate: { commit: '8' } });
  });

  it('says "inconclusive" when a step stays midway within its budget, naming the range left and the flag and value that would decide it', async () => {
    const { result } = await simulate((c, k) => (c === 8 ? around(125, 0.01)(k) : around(c > 8 ? 150 : 100, 0.01)(k)), { maxStepRuns: 5, maxRuns: 40 });
    expect(result.outcome.kind).toBe('inconclusive');
    const o = result.outcome as Extract<BisectResult['outcome'], { kind: 'inconclusive' }>;
    expect(o.why).toMatch(/^c8: not significantly nearer good or bad after 5 run\(s\) \(its --max-step-runs 5 spent\); the first bad one is after good and at or before c16$/);
    expect(o.decide).toMatch(/--max-step-runs \d+/);
    expect(result.runs).toBeLessThanOrEqual(40);
    expect(answerLine({ metric: { name: 'M' } } as BisectPlan, result)).toMatch(/^inconclusive: c8: .*; .*--max-step-runs \d+/);
  });

  it('stops at --max-runs, inconclusive, and asks for a larger one', async () => {
    const { result } = await simulate((c, k) => around(c >= 11 ? 110 : 100, 0.03)(k), { maxRuns: 12 });
    expect(result.runs).toBeLessThanOrEqual(12);
    expect(result.outcome.kind).toBe('inconclusive');
    expect((result.outcome as { decide: string }).decide).toMatch(/--max-runs \d+|--max-step-runs \d+/);
  });

  it('finds nothing to search when the ends measured again are alike, without a step', async () => {
    const { result } = await simulate((_c, k) => around(100, 0.01)(k));
    expect(result.outcome.kind).toBe('nothing');
    expect(result.steps).toEqual([]);
    expect(answerLine({ metric: { name: 'M' } } as BisectPlan, result)).toMatch(/^nothing to search: bad is [-+][\d.]+% against good/);
  });

  it('finds nothing to search when the ends are still not distinguishable at their limit of runs', async () => {
    const { result } = await simulate((c, k) => around(c >= 11 ? 104 : 100, 0.05)(k), { maxStepRuns: 3 });
    expect(result.ends.good).toHaveLength(3);
    expect(result.outcome).toMatchObject({
      kind: 'nothing',
      why: expect.stringMatching(/: not distinguishable from good after 3 and 3 value\(s\); a change of up to [\d.]+% is not ruled out \(more runs of the ends would narrow it: --max-step-runs 6\)$/),
    });
  });

  it('refuses a budget that leaves no run for a step', () => {
    expect(budgetProblem({ repeat: 1, maxStepRuns: 12, maxRuns: 6 })).toMatch(/--max-runs 6 leaves no run for a step/);
    expect(budgetProblem({ repeat: 4, maxStepRuns: 3, maxRuns: 80 })).toMatch(/--max-step-runs 3 is below --repeat 4/);
    expect(budgetProblem({ repeat: 1, maxStepRuns: 1, maxRuns: 80 })).toMatch(/--max-step-runs 1: the noise is estimated from an end's repeats, so at least 2/);
    expect(budgetProblem(DEFAULT_BUDGET)).toBeUndefined();
  });

  it('at 3 % noise names a 10 % step right or says it cannot tell, never a wrong commit, and leaves an unchanged history alone (300 seeded bisections each)', async () => {
    const random = seededRandom(7);
    const noisy = (level: number) => level * (1 + 0.03 * normalSample(random, 0, 1));
    const tally = async (at: number | undefined) => {
      const kinds: Record<string, number> = {};
      for (let t = 0; t < 300; t++) {
        const { result } = await simulate((c) => noisy(at !== undefined && c >= at ? 110 : 100));
        const o = result.outcome;
        const kind = o.kind === 'found' ? (Number(o.candidate.commit) === at ? 'right' : 'wrong') : o.kind;
        kinds[kind] = (kinds[kind] ?? 0) + 1;
      }
      return kinds;
    };
    const step = await tally(11);
    expect(step.wrong ?? 0).toBeLessThanOrEqual(3);
    expect(step.right).toBeGreaterThanOrEqual(285);
    const none = await tally(undefined);
    expect((none.nothing ?? 0) + (none.inconclusive ?? 0)).toBe(300);
  });
});

describe("the statistics' parts", () => {
  it("Student's t critical values", () => {
    expect(studentTCritical(0.001, 4)).toBeCloseTo(7.173, 2);
    expect(studentTCritical(0.025, 30)).toBeCloseTo(2.042, 2);
    expect(studentTCritical(0.05, 1)).toBeCloseTo(6.314, 2);
  });

  it('the ends: a regression only when significant and beyond the threshold; nothing when surely below it', () => {
    const good = [100, 101, 99, 100];
    const noise = pooledNoise([good, [110, 111, 109, 110]]);
    expect(judgeEnds(good, [110, 111, 109, 110], noise, false, 0.05).kind).toBe('regression');
    // Higher is better: the same rise is an improvement.
    expect(judgeEnds(good, [110, 111, 109, 110], noise, true, 0.05).kind).toBe('none');
    expect(judgeEnds(good, [100.5, 101, 100, 99.5], pooledNoise([good, [100.5, 101, 100, 99.5]]), false, 0.05).kind).toBe('none');
    // 8 % worse, but 5 % noise with 2 values each: open.
    const wide = [[95, 105], [103, 113]];
    expect(judgeEnds(wide[0], wide[1], pooledNoise(wide), false, 0.05).kind).toBe('open');
    // No repeats anywhere: the noise is unknown, nothing is significant.
    expect(judgeEnds([100], [150], pooledNoise([[100], [150]]), false, 0.05)).toMatchObject({ kind: 'open', marginPercent: Infinity });
  });

  it('a step: good or bad once the likelihood ratio is decisive, else how many runs would decide it', () => {
    const [good, bad] = [[100, 101, 99, 100, 102, 98], [110, 111, 109, 110, 112, 108]];
    const noise = pooledNoise([good, bad]);
    expect(classifyStep([109.5, 110.5], good, bad, noise).mark).toBe('bad');
    expect(classifyStep([100.5, 99.5], good, bad, noise).mark).toBe('good');
    const nearer = classifyStep([102.5], good, bad, noise);
    expect(nearer.mark).toBeUndefined();
    expect(nearer.repeatsToDecide).toBeGreaterThan(1);
    // Midway, the ends' own uncertainty leaves more runs of the step alone unable to decide.
    const midway = classifyStep([104.5], good, bad, noise);
    expect(midway.position).toBeCloseTo(0.45, 5);
    expect(midway.repeatsToDecide).toBeUndefined();
  });
});

describe('the direction of the metric', () => {
  const where = { workDir: scratch, testId: 'disagg_perf_x', testType: 'disagg' };
  const given = (text: string) => valuesReference(text.startsWith('a') ? 'good' : 'bad', text)!;

  it('is read from the metric, never from the values: a latency lower at the bad end is still lower-is-better', () => {
    // The values fall from good to bad: a guess from the data would say "higher is better".
    expect(metricDirection({ name: 'SERVER_MEDIAN_TTFT' }, [given('a:100,101'), given('b:80,81')], where)).toMatchObject({ higherIsBetter: false });
    expect(metricDirection({ name: 'SERVER_OUTPUT_TOKEN_THROUGHPUT' }, [given('a:100'), given('b:120')], where)).toMatchObject({ higherIsBetter: true });
  });

  it("takes the runs' recorded direction first, and the test's config next", () => {
    const recorded = { ...given('a:100'), higherIsBetter: true };
    expect(metricDirection({ name: 'SERVER_MEDIAN_TTFT' }, [recorded, given('b:90')], where)).toMatchObject({ higherIsBetter: true, from: 'as the good run recorded it' });
    const workDir = path.join(scratch, 'work');
    mkdirSync(path.join(workDir, 'test_configs/disagg/perf'), { recursive: true });
    const override = { benchmark: { metrics: { log_file: 'x.log', extractor_pattern: 'v: ([\\d.]+)', metric_names: ['STEP_RATE'], unit: '1/s', higher_is_better: true } } };
    writeFileSync(path.join(workDir, 'test_configs/disagg/perf/x.yaml'), stringify(override));
    expect(metricDirection({ name: 'STEP_RATE' }, [given('a:100'), given('b:90')], { ...where, workDir })).toMatchObject({ higherIsBetter: true, from: "as the test's config defines it" });
  });

  it('refuses in one sentence when nothing defines it', async () => {
    expect(() => metricDirection({ name: 'MYSTERY' }, [given('a:100'), given('b:90')], where)).toThrow(/^--metric MYSTERY: whether higher or lower is better is not known \(.*\); name a run of the history as --good or --bad$/);
    await expect(bisectCommand(['disagg_perf_x', '--metric', 'MYSTERY', '--good', 'a:1,2', '--bad', 'b:3,4'])).rejects.toThrow(/whether higher or lower is better is not known/);
  });

  it('exits with its own code when inconclusive', () => {
    expect(EXIT_INCONCLUSIVE).toBe(4);
  });
});
