// How often `history bisect` names the right commit, names a wrong one, or says it cannot tell, at
// run-to-run noise: the project's own bisect() (framework/history/bisect/bisect.ts) run in-process
// over 16 commits (the good one, then 15 candidates, the last the bad one), every run of the test a
// SIMULATED measurement: value = level(commit) * (1 + noise * N(0, 1)), seeded (mulberry32), a
// latency (lower is better) whose level steps up by the case's change at one commit. The budget is
// the command's default (budget.ts) unless given. Goals (each case, 2,000 bisections): a real step
// named right in >= 95 %, else "inconclusive", a wrong commit in <= 2 %; no change: >= 99 %
// "nothing to search" or "inconclusive". The mean number of runs (ends included) is reported.
// Command line: USAGE below (--help prints it).
import { bisect, type BisectPlan, type Candidate } from '../framework/history/bisect/bisect.ts';
import { DEFAULT_BUDGET, type Budget } from '../framework/history/bisect/budget.ts';
import type { StepRunInput, StepValue } from '../framework/history/bisect/step-run.ts';
import { normalSample, seededRandom } from '../runners/common/random.ts';
import { appendResult, printGoals, printRunHeader, printTable, type Goal } from './lib/report.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/bisect-simulation.ts [--trials 2000] [--noise 3] [--outliers 0] [--repeat N]
    [--max-step-runs N] [--max-runs N] [--seed 1] [--smoke]
  --trials bisections per case at --noise percent of normal run-to-run noise; --outliers 0.05: heavy
  tails, one run in 20 off by ±20 % besides (informative, no goal); --repeat, --max-step-runs,
  --max-runs: the bisection's budget (default: the command's). --smoke: 40 trials, no figure kept.`;

const cli = benchOptions({
  args: benchArgs(['--trials', '40']),
  options: {
    trials: { type: 'string', default: '2000' },
    noise: { type: 'string', default: '3' },
    repeat: { type: 'string', default: String(DEFAULT_BUDGET.repeat) },
    'max-step-runs': { type: 'string', default: String(DEFAULT_BUDGET.maxStepRuns) },
    'max-runs': { type: 'string', default: String(DEFAULT_BUDGET.maxRuns) },
    seed: { type: 'string', default: '1' },
    /** Heavy tails: this share of runs (a fraction) is off by ±20 % on top of the noise. */
    outliers: { type: 'string', default: '0' },
  },
}, USAGE);
const TRIALS = cli.wholeNumber('trials');
const NOISE_PCT = cli.number('noise');
const NOISE = NOISE_PCT / 100;
const OUTLIERS = cli.number('outliers', { min: 0, max: 1 });
const SEED = cli.wholeNumber('seed', {});
const COMMITS = 16;
const BUDGET: Budget = { repeat: cli.wholeNumber('repeat'), maxStepRuns: cli.wholeNumber('max-step-runs'), maxRuns: cli.wholeNumber('max-runs') };

interface Case {
  name: string;
  /** The change of the level (a fraction, worse = higher latency); 0: none. */
  change: number;
  /** 1-based commit that brings it (2..16). */
  at: number;
}

const CASES: Case[] = [
  { name: '10 % step at commit 11', change: 0.1, at: 11 },
  { name: '10 % step at commit 16 (last)', change: 0.1, at: 16 },
  { name: '10 % step at commit 2 (first after good)', change: 0.1, at: 2 },
  { name: '10 % step at commit 6', change: 0.1, at: 6 },
  { name: '20 % step at commit 11', change: 0.2, at: 11 },
  { name: '20 % step at commit 16 (last)', change: 0.2, at: 16 },
  { name: 'no change', change: 0, at: 0 },
];

/** One bisection of `c`; what it concluded and the runs it took. */
async function trial(c: Case, random: () => number): Promise<{ kind: string; right: boolean; runs: number }> {
  const level = (commit: number) => 100 * (c.change > 0 && commit >= c.at ? 1 + c.change : 1);
  const outlier = () => (OUTLIERS > 0 && random() < OUTLIERS ? (random() < 0.5 ? -0.2 : 0.2) : 0);
  const noisy = (commit: number) => level(commit) * (1 + NOISE * normalSample(random, 0, 1) + outlier());
  const commits: Candidate[] = Array.from({ length: COMMITS }, (_, k) => ({ name: `commit-${k + 1}`, commit: String(k + 1) }));
  let current = 1;
  const runner = { measure: async (_input: StepRunInput): Promise<StepValue> => ({ value: noisy(current), higherIsBetter: false }) };
  const plan: BisectPlan = {
    testId: 'disagg_perf_simulated',
    testType: 'disagg',
    metric: { name: 'SERVER_MEDIAN_TTFT' },
    // Each end as one run of the history would give it: one value.
    good: { end: 'good', given: 'good-run', values: [noisy(1)], runIds: ['good-run'], ref: '1' },
    bad: { end: 'bad', given: 'bad-run', values: [noisy(COMMITS)], runIds: ['bad-run'], ref: String(COMMITS) },
    higherIsBetter: false,
    threshold: 0.05,
    candidates: commits.slice(1),
    lastIsBad: true,
    endStates: { good: commits[0], bad: commits[COMMITS - 1] },
    budget: BUDGET,
    outputRoot: '/nonexistent',
    env: {},
    prepare: (candidate) => {
      current = Number(candidate.commit);
      return {};
    },
  };
  const result = await bisect(plan, runner, () => {}, () => undefined);
  const o = result.outcome;
  return { kind: o.kind, right: o.kind === 'found' && Number(o.candidate.commit) === c.at, runs: result.runs };
}

printRunHeader();
console.log(`noise ${NOISE_PCT} % (normal)${OUTLIERS > 0 ? `, ${OUTLIERS * 100} % of runs off by ±20 %` : ''}, ${COMMITS} commits, ${TRIALS} bisections per case, budget --repeat ${BUDGET.repeat} --max-step-runs ${BUDGET.maxStepRuns} --max-runs ${BUDGET.maxRuns}, seed ${SEED}`);
const rows: (string | number)[][] = [];
const goals: Goal[] = [];
const figures: Record<string, unknown> = {};
for (const [k, c] of CASES.entries()) {
  const random = seededRandom(SEED * 1000 + k);
  const counts: Record<string, number> = { right: 0, wrong: 0, inconclusive: 0, nothing: 0, none: 0 };
  const runs: number[] = [];
  for (let t = 0; t < TRIALS; t++) {
    const r = await trial(c, random);
    counts[r.kind === 'found' ? (r.right ? 'right' : 'wrong') : r.kind]++;
    runs.push(r.runs);
  }
  runs.sort((a, b) => a - b);
  const share = (n: number) => (100 * n) / TRIALS;
  const meanRuns = runs.reduce((a, b) => a + b, 0) / TRIALS;
  const p95 = runs[Math.min(TRIALS - 1, Math.floor(0.95 * TRIALS))];
  rows.push([c.name, ...['right', 'wrong', 'inconclusive', 'nothing', 'none'].map((key) => share(counts[key]).toFixed(2)), meanRuns.toFixed(1), p95, runs.at(-1)!]);
  figures[c.name] = { ...Object.fromEntries(Object.entries(counts).map(([key, n]) => [`${key}Pct`, share(n)])), meanRuns, p95Runs: p95, maxRuns: runs.at(-1) };
  if (c.change > 0) {
    goals.push({ what: `${c.name}: named right`, value: share(counts.right), limit: 95, atMost: false, unit: '%' });
    goals.push({ what: `${c.name}: a wrong commit`, value: share(counts.wrong), limit: 2, atMost: true, unit: '%' });
  } else {
    goals.push({ what: `${c.name}: "nothing to search" or "inconclusive"`, value: share(counts.nothing + counts.inconclusive), limit: 99, atMost: false, unit: '%' });
  }
}
printTable('outcomes, % of bisections; runs of the test per bisection (ends included)', ['case', 'right', 'wrong', 'inconclusive', 'nothing', 'none', 'mean runs', 'p95 runs', 'max runs'], rows);
printGoals(goals);
appendResult('bisect-simulation', { trials: TRIALS, noisePct: NOISE_PCT, outliers: OUTLIERS, commits: COMMITS, budget: BUDGET, seed: SEED, cases: figures }, goals);
