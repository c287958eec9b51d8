// `history bisect`: the first candidate (commit, ref or container image) at which a test's metric
// is bad, found by rerunning the test at the candidates between a good and a bad state. Each step
// prepares its candidate (checks out its commit in the bisection's own work tree, or sets its
// image), runs the test `repeat` times through `disagg-bench run` (step-run.ts) and judges the
// values by the gate's rule against the good ones (step-verdict.ts); search.ts picks the steps.
import path from 'node:path';
import { DisaggBenchError, UsageError } from '../../../runners/common/errors.ts';
import { judgeStep, type StepRule, type StepVerdict } from './step-verdict.ts';
import { search, type Mark } from './search.ts';
import type { StepRun } from './step-run.ts';
import type { MetricRef } from './metric-ref.ts';
import type { Reference } from './references.ts';

export interface Candidate {
  /** How output names it: a short commit and its subject, a ref, an image. */
  name: string;
  commit?: string;
  subject?: string;
  image?: string;
}

export interface StepOutcome {
  step: number;
  candidate: Candidate;
  values: number[];
  verdict: Mark;
  mean?: number;
  diffPercent?: number;
  /** Why the step was skipped, or why a change beyond the threshold was judged noise. */
  note?: string;
}

export interface BisectPlan {
  testId: string;
  testType: string;
  metric: MetricRef;
  good: Reference;
  bad: Reference;
  higherIsBetter: boolean;
  rule: StepRule;
  candidates: Candidate[];
  /** The last candidate is the bad reference's own state. */
  lastIsBad: boolean;
  repeat: number;
  /** Each measurement's output folder is made under it. */
  outputRoot: string;
  /** Variables every step's run gets (SCHEDULER, GPU_TYPE...). */
  env: Record<string, string>;
  /** Makes the candidate the state the next run measures; returns the variables that select it (WORK_DIR, CONTAINER_IMAGE...). */
  prepare: (candidate: Candidate) => Record<string, string>;
}

export interface BisectResult {
  /** The bad values are a regression against the good ones; false: nothing to search. */
  regressed: boolean;
  endsVerdict: StepVerdict;
  firstBad?: StepOutcome | { candidate: Candidate; values: number[]; fromBadReference: true };
  /** Skipped candidates that may be the first bad one instead. */
  maybe: Candidate[];
  steps: StepOutcome[];
  /** The run was stopped by a signal. */
  interrupted?: NodeJS.Signals;
}

/** Thrown out of the search when a signal came: the step in flight was stopped, no other starts. */
class StepsStopped extends DisaggBenchError {
  override name = 'StepsStopped';
}

/** Estimated steps for `count` candidates, as git bisect says "roughly N steps". */
export const roughSteps = (count: number) => (count <= 1 ? count : Math.ceil(Math.log2(count + 1)));

export async function bisect(plan: BisectPlan, runner: StepRun, progress: (line: string) => void, interrupted: () => NodeJS.Signals | undefined): Promise<BisectResult> {
  const endsVerdict = judgeStep(plan.bad.values, plan.good.values, [], plan.higherIsBetter, plan.rule);
  if (!endsVerdict.bad) return { regressed: false, endsVerdict, maybe: [], steps: [] };
  const steps: StepOutcome[] = [];
  const rough = roughSteps(plan.lastIsBad ? plan.candidates.length - 1 : plan.candidates.length);
  const measure = async (index: number): Promise<Mark> => {
    if (interrupted()) throw new StepsStopped('the bisection was interrupted');
    const candidate = plan.candidates[index];
    const step = steps.length + 1;
    const outcome: StepOutcome = { step, candidate, values: [], verdict: 'skip' };
    steps.push(outcome);
    const selected = plan.prepare(candidate);
    for (let r = 1; r <= plan.repeat && !interrupted(); r++) {
      const measured = await runner.measure({
        testId: plan.testId,
        testType: plan.testType,
        metric: plan.metric,
        outputPath: path.join(plan.outputRoot, `step-${step}`, `run-${r}`),
        env: { ...plan.env, ...selected },
        ...(candidate.image ? { image: candidate.image } : {}),
      });
      if (measured.imageUnused) throw new UsageError(`--images: ${measured.why}; bisect commits or --refs instead`, 'images');
      if (measured.value === undefined) {
        outcome.note = measured.why;
        break;
      }
      outcome.values.push(measured.value);
    }
    if (interrupted()) throw new StepsStopped('the bisection was interrupted');
    if (outcome.values.length === plan.repeat) {
      const verdict = judgeStep(outcome.values, plan.good.values, plan.bad.values, plan.higherIsBetter, plan.rule);
      Object.assign(outcome, { verdict: verdict.bad ? 'bad' : 'good', mean: verdict.mean, diffPercent: verdict.diffPercent }, verdict.note ? { note: verdict.note } : {});
    }
    progress(stepLine(outcome, rough));
    return outcome.verdict;
  };
  const found = await search({ count: plan.candidates.length, lastIsBad: plan.lastIsBad, test: measure }).catch((error: unknown) => {
    if (!(error instanceof StepsStopped)) throw error;
    return undefined;
  });
  if (!found) return { regressed: true, endsVerdict, maybe: [], steps, interrupted: interrupted() };
  const result: BisectResult = { regressed: true, endsVerdict, maybe: found.maybe.map((k) => plan.candidates[k]), steps };
  if (found.firstBad !== undefined) {
    const candidate = plan.candidates[found.firstBad];
    const measured = [...steps].reverse().find((s) => s.candidate === candidate && s.verdict === 'bad');
    result.firstBad = measured ?? { candidate, values: plan.bad.values, fromBadReference: true };
  }
  return result;
}

/** A measured value for a line of text: two decimals from 100 up, else four significant digits. */
export const fixed = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(2) : v.toPrecision(4));

/** `step 2/~4 abc1234 subject: 101.2, 100.8 -> good (+0.30%)` */
export function stepLine(s: StepOutcome, rough: number): string {
  const values = s.values.map(fixed).join(', ') || '-';
  const change = s.diffPercent !== undefined ? ` (${s.diffPercent >= 0 ? '+' : ''}${s.diffPercent.toFixed(2)}% against good)` : '';
  return `step ${s.step}/~${Math.max(rough, s.step)}  ${s.candidate.name}: ${values} -> ${s.verdict}${change}${s.note ? `: ${s.note}` : ''}`;
}
