// `history bisect`: the first candidate (commit, ref or container image) at which a test's metric
// is bad, found by rerunning the test at the candidates between a good and a bad state, with a
// verdict at every step that is significant or says it is not.
//
// First the two ends are measured again, beside the steps (the same machine, the same session: the
// values given for them were measured elsewhere or earlier), each at least MIN_END_RUNS times, then
// one run at a time until their difference is significant (step-verdict.ts judgeEnds): a
// regression is searched, a change surely below the threshold is "nothing to search". Then
// search.ts picks the steps; each runs `repeat` times, then once more at a time until its mean is
// significantly nearer the good level or the bad one (classifyStep), or the budget is spent
// (budget.ts): then the outcome is "inconclusive", naming the range left and the flag and value
// that would decide it. Nothing here runs a process: a step's run is the StepMeasure given.
import path from 'node:path';
import { DisaggBenchError, UsageError } from '../../../runners/common/errors.ts';
import { classifyStep, judgeEnds, mean, pooledNoise, roundingFloor, type EndsVerdict, type Noise } from './step-verdict.ts';
import { search, type Mark } from './search.ts';
import { endRuns, moreRunsAdvice, type Budget } from './budget.ts';
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

/** One run of the test: StepRun, or a simulation of it. */
export type StepMeasure = Pick<StepRun, 'measure'>;

export interface StepOutcome {
  step: number;
  candidate: Candidate;
  values: number[];
  verdict: Mark;
  mean?: number;
  /** Where the mean lies: 0 at the good end's mean, 1 at the bad end's. */
  position?: number;
  /** Why the step was skipped, or why it could not decide. */
  note?: string;
}

export interface BisectPlan {
  testId: string;
  testType: string;
  metric: MetricRef;
  good: Reference;
  bad: Reference;
  higherIsBetter: boolean;
  /** The change (a fraction) below which the ends are no regression. */
  threshold: number;
  /** The step the figure was printed rounded to: the noise is at least what that rounding hides. */
  rounded?: number;
  candidates: Candidate[];
  /** The last candidate is the bad reference's own state. */
  lastIsBad: boolean;
  /** The states of the ends, measured again beside the steps; absent: only the values given for that end. */
  endStates: { good?: Candidate; bad?: Candidate };
  budget: Budget;
  /** Each measurement's output folder is made under it. */
  outputRoot: string;
  /** Variables every step's run gets (SCHEDULER, GPU_TYPE...). */
  env: Record<string, string>;
  /** Makes the candidate the state the next run measures; returns the variables that select it (WORK_DIR, CONTAINER_IMAGE...). */
  prepare: (candidate: Candidate) => Record<string, string>;
}

export type Outcome =
  | { kind: 'found'; candidate: Candidate; values: number[]; maybe: Candidate[] }
  | { kind: 'nothing'; why: string }
  | { kind: 'none'; why: string }
  | { kind: 'inconclusive'; why: string; decide: string; after?: Candidate; upTo?: Candidate }
  | { kind: 'interrupted'; signal: NodeJS.Signals };

export interface BisectResult {
  outcome: Outcome;
  /** The values each end was judged by: measured again where it could be, else those given. */
  ends: { good: number[]; bad: number[]; verdict?: EndsVerdict };
  steps: StepOutcome[];
  /** Runs of the test, ends included. */
  runs: number;
  noise: Noise;
}

/** Thrown out of the search when a signal came: the step in flight was stopped, no other starts. */
class StepsStopped extends DisaggBenchError {
  override name = 'StepsStopped';
}

/** Estimated steps for `count` candidates, as git bisect says "roughly N steps". */
export const roughSteps = (count: number) => (count <= 1 ? count : Math.ceil(Math.log2(count + 1)));

export async function bisect(plan: BisectPlan, runner: StepMeasure, progress: (line: string) => void, interrupted: () => NodeJS.Signals | undefined): Promise<BisectResult> {
  const { budget } = plan;
  const steps: StepOutcome[] = [];
  const ends = { good: plan.endStates.good ? [] : [...plan.good.values], bad: plan.endStates.bad ? [] : [...plan.bad.values] };
  let runs = 0;
  const noise = () => pooledNoise([ends.good, ends.bad, ...steps.map((s) => s.values)], roundingFloor(plan.rounded));
  const result = (outcome: Outcome, verdict?: EndsVerdict): BisectResult => ({ outcome, ends: { ...ends, ...(verdict && { verdict }) }, steps, runs, noise: noise() });
  const stopped = () => {
    if (interrupted()) throw new StepsStopped('the bisection was interrupted');
  };

  /** One run at `candidate`; its value, or why there is none. */
  const runOnce = async (candidate: Candidate, folder: string, selected: Record<string, string>, r: number) => {
    stopped();
    runs++;
    const measured = await runner.measure({
      testId: plan.testId,
      testType: plan.testType,
      metric: plan.metric,
      outputPath: path.join(plan.outputRoot, folder, `run-${r}`),
      env: { ...plan.env, ...selected },
      ...(candidate.image ? { image: candidate.image } : {}),
    });
    stopped();
    if (measured.imageUnused) throw new UsageError(`--images: ${measured.why}; bisect commits or --refs instead`, 'images');
    return measured;
  };

  // The ends: each measurable one to its minimum, then one more run at a time (the one with fewer) until they are judged.
  let endsVerdict: EndsVerdict | undefined;
  const measurable = (['good', 'bad'] as const).filter((end) => plan.endStates[end]);
  const measureEnd = async (end: 'good' | 'bad') => {
    const state = plan.endStates[end]!;
    const measured = await runOnce(state, end, plan.prepare(state), ends[end].length + 1);
    if (measured.value === undefined) throw new EndUnmeasured(end, state, measured.why ?? 'no value');
    ends[end].push(measured.value);
  };
  const unmeasuredEnd = (error: EndUnmeasured) => result({ kind: 'inconclusive', why: error.message, decide: `make the test pass at the ${error.end} end, or name another --${error.end}` }, endsVerdict);
  try {
    for (let r = 0; r < endRuns(budget); r++) for (const end of measurable) if (ends[end].length < endRuns(budget)) await measureEnd(end);
    for (;;) {
      endsVerdict = judgeEnds(ends.good, ends.bad, noise(), plan.higherIsBetter, plan.threshold, plan.rounded);
      if (endsVerdict.kind !== 'open') break;
      const next = measurable.filter((end) => ends[end].length < budget.maxStepRuns).sort((a, b) => ends[a].length - ends[b].length)[0];
      if (!next || runs >= budget.maxRuns) break;
      await measureEnd(next);
    }
    for (const end of measurable) progress(`${end} ${plan.endStates[end]!.name}: ${ends[end].map(fixed).join(', ')} (mean ${fixed(mean(ends[end]))})`);
    progress(`ends: ${endsVerdict.why}; noise sd ${fixed(noise().sd)} (${noise().freedom} degrees of freedom)`);
  } catch (error) {
    if (error instanceof StepsStopped) return result({ kind: 'interrupted', signal: interrupted()! });
    if (error instanceof EndUnmeasured) return unmeasuredEnd(error);
    throw error;
  }
  if (endsVerdict.kind === 'none') return result({ kind: 'nothing', why: `${endsVerdict.why}${notReproduced(plan, ends)}` }, endsVerdict);
  if (endsVerdict.kind === 'open') {
    if (noise().freedom === 0) return result({ kind: 'inconclusive', why: `${endsVerdict.why}: no end has repeats to estimate the noise from`, decide: 'give two or more values for an end (--good REF:V1,V2,V3) or a commit the bisection can measure' }, endsVerdict);
    if (!endsVerdict.distinguishable) {
      const upTo = Math.max(0, endsVerdict.marginPercent - endsVerdict.diffPercent).toFixed(2);
      const narrower = measurable.length > 0 ? ` (more runs of the ends would narrow it: --max-step-runs ${budget.maxStepRuns * 2}${runs >= budget.maxRuns ? ` --max-runs ${budget.maxRuns * 2}` : ''})` : '';
      const why = `${endsVerdict.why} after ${ends.good.length} and ${ends.bad.length} value(s); a change of up to ${upTo}% is not ruled out${narrower}${notReproduced(plan, ends)}`;
      return result({ kind: 'nothing', why }, endsVerdict);
    }
    const more = measurable.length > 0 ? `--max-step-runs ${budget.maxStepRuns * 2}${runs >= budget.maxRuns ? ` --max-runs ${budget.maxRuns * 2}` : ''}` : 'more values for the ends (--good REF:V1,V2,...)';
    return result({ kind: 'inconclusive', why: `${endsVerdict.why} after ${ends.good.length} and ${ends.bad.length} value(s)`, decide: `more runs of the ends would decide it: ${more}` }, endsVerdict);
  }

  const measurableSteps = plan.lastIsBad && plan.endStates.bad ? plan.candidates.length - 1 : plan.candidates.length;
  const rough = roughSteps(measurableSteps);
  let unsure: { outcome: StepOutcome; advice: string } | undefined;
  /** The end whose next run narrows a step of `n` runs most (1/(4 n_end) is its share of the variance), if one does more than the step's own. */
  const endToMeasure = (n: number) =>
    measurable
      .filter((end) => ends[end].length < budget.maxStepRuns)
      .map((end) => ({ end, gain: 1 / (4 * ends[end].length * (ends[end].length + 1)) }))
      .filter((e) => e.gain > 1 / (n * (n + 1)) || n >= budget.maxStepRuns)
      .sort((a, b) => b.gain - a.gain)[0]?.end;
  const measure = async (index: number): Promise<Mark> => {
    const candidate = plan.candidates[index];
    const outcome: StepOutcome = { step: steps.length + 1, candidate, values: [], verdict: 'skip' };
    steps.push(outcome);
    for (;;) {
      const v = outcome.values.length > 0 ? classifyStep(outcome.values, ends.good, ends.bad, noise()) : undefined;
      if (v) Object.assign(outcome, { mean: v.mean, position: v.position });
      if (v?.mark && outcome.values.length >= budget.repeat) {
        outcome.verdict = v.mark;
        break;
      }
      const atCap = outcome.values.length >= budget.maxStepRuns && !endToMeasure(outcome.values.length);
      if (runs >= budget.maxRuns || atCap) {
        outcome.verdict = 'unsure';
        const spent = atCap ? `its --max-step-runs ${budget.maxStepRuns}` : `the bisection's --max-runs ${budget.maxRuns}`;
        outcome.note = `not significantly nearer good or bad after ${outcome.values.length} run(s) (${spent} spent)`;
        const more = v?.repeatsToDecide !== undefined ? Math.max(1, v.repeatsToDecide - outcome.values.length) : outcome.values.length < budget.repeat ? budget.repeat - outcome.values.length : undefined;
        unsure = { outcome, advice: moreRunsAdvice(budget, outcome.values.length, more, runs, Math.max(0, rough - outcome.step)) };
        break;
      }
      // The ends' uncertainty weighs in every step's verdict: an end is measured again instead of the
      // step when that narrows the step's standard error more (and it serves the later steps too).
      const end = outcome.values.length >= budget.repeat ? endToMeasure(outcome.values.length) : undefined;
      if (end) {
        await measureEnd(end);
        continue;
      }
      const measured = await runOnce(candidate, `step-${outcome.step}`, plan.prepare(candidate), outcome.values.length + 1);
      if (measured.value === undefined) {
        outcome.note = measured.why;
        break;
      }
      outcome.values.push(measured.value);
    }
    progress(stepLine(outcome, rough));
    return outcome.verdict;
  };
  let endFailed: EndUnmeasured | undefined;
  const found = await search({ count: plan.candidates.length, lastIsBad: plan.lastIsBad, lastMeasured: plan.lastIsBad && Boolean(plan.endStates.bad), test: measure }).catch((error: unknown) => {
    if (error instanceof EndUnmeasured) endFailed = error;
    else if (!(error instanceof StepsStopped)) throw error;
    return undefined;
  });
  if (endFailed) return unmeasuredEnd(endFailed);
  if (!found) return result({ kind: 'interrupted', signal: interrupted()! }, endsVerdict);
  if (found.unsure && unsure) {
    const { after, upTo } = found.unsure;
    return result({
      kind: 'inconclusive',
      why: `${unsure.outcome.candidate.name}: ${unsure.outcome.note}; the first bad one is after ${after < 0 ? 'good' : plan.candidates[after].name} and at or before ${upTo < plan.candidates.length ? plan.candidates[upTo].name : 'the last candidate (or none is)'}`,
      decide: unsure.advice,
      ...(after >= 0 && { after: plan.candidates[after] }),
      ...(upTo < plan.candidates.length && { upTo: plan.candidates[upTo] }),
    }, endsVerdict);
  }
  if (found.firstBad === undefined) return result({ kind: 'none', why: plan.lastIsBad ? 'no candidate measured bad: the bad values were not reproduced' : 'no candidate measured bad: the change is after the last one' }, endsVerdict);
  const candidate = plan.candidates[found.firstBad];
  const step = [...steps].reverse().find((s) => s.candidate === candidate && s.verdict === 'bad');
  return result({ kind: 'found', candidate, values: step?.values ?? ends.bad, maybe: found.maybe.map((k) => plan.candidates[k]) }, endsVerdict);
}

/** Where an end measured again is unlike the values given for it that made it a regression: that they were not reproduced. */
function notReproduced(plan: BisectPlan, ends: { good: number[]; bad: number[] }): string {
  const given = judgeEnds(plan.endStates.good ? ends.good : plan.good.values, plan.bad.values, { sd: 0, freedom: 1 }, plan.higherIsBetter, plan.threshold);
  if (!plan.endStates.bad || given.kind !== 'regression') return '';
  return `; the values given for bad (${plan.bad.values.map(fixed).join(', ')}) were not reproduced`;
}

/** An end whose test did not yield the metric: nothing can be judged against it. */
class EndUnmeasured extends DisaggBenchError {
  override name = 'EndUnmeasured';
  constructor(readonly end: 'good' | 'bad', state: Candidate, why: string) {
    super(`the ${end} end ${state.name} could not be measured: ${why}`);
  }
}

/** A measured value for a line of text: two decimals from 100 up, else four significant digits. */
export const fixed = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(2) : v.toPrecision(4));

/** `step 2/~4  abc1234 subject: 101.2, 100.8 -> good (mean 101.0, 0.02 of the way to bad)` */
export function stepLine(s: StepOutcome, rough: number): string {
  const values = s.values.map(fixed).join(', ') || '-';
  const where = s.mean !== undefined && s.position !== undefined ? ` (mean ${fixed(s.mean)}, ${s.position.toFixed(2)} of the way from good to bad)` : '';
  return `step ${s.step}/~${Math.max(rough, s.step)}  ${s.candidate.name}: ${values} -> ${s.verdict}${where}${s.note ? `: ${s.note}` : ''}`;
}
