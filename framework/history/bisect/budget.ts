// How many runs a bisection may spend, and what to ask for when it could not decide within them.
// Each end and each step is run at least `repeat` times (the ends at least MIN_END_RUNS: the noise
// is estimated from their repeats before any step is judged), then once more at a time until its
// verdict is significant, at most `maxStepRuns` times; the whole bisection, ends included, runs at
// most `maxRuns` times. The flags are the command's (--repeat, --max-step-runs, --max-runs).

export interface Budget {
  /** Runs of each step before it is judged (--repeat). */
  repeat: number;
  /** Most runs of one candidate or end (--max-step-runs). */
  maxStepRuns: number;
  /** Most runs of the whole bisection, ends included (--max-runs). */
  maxRuns: number;
}

/**
 * Two runs per step by default: one run cannot be told from an outlier (one run in 20 off by 20 %
 * names a wrong commit in about 2 % of bisections with one, 0.3 % with two: bench/bisect-simulation.ts).
 */
export const DEFAULT_BUDGET: Budget = { repeat: 2, maxStepRuns: 12, maxRuns: 80 };

/** Runs of each measurable end before the ends are judged: enough repeats to estimate the noise. */
export const MIN_END_RUNS = 3;

export const endRuns = (budget: Budget) => Math.min(Math.max(budget.repeat, MIN_END_RUNS), budget.maxStepRuns);

/** Why a budget cannot work, or undefined. */
export function budgetProblem(budget: Budget): string | undefined {
  if (budget.maxStepRuns < 2) return `--max-step-runs ${budget.maxStepRuns}: the noise is estimated from an end's repeats, so at least 2`;
  if (budget.maxStepRuns < budget.repeat) return `--max-step-runs ${budget.maxStepRuns} is below --repeat ${budget.repeat}: a step may run at most as often as it must`;
  if (budget.maxRuns < 2 * endRuns(budget) + budget.repeat) {
    return `--max-runs ${budget.maxRuns} leaves no run for a step: the two ends take ${2 * endRuns(budget)} (${endRuns(budget)} each) and a step ${budget.repeat}`;
  }
  return undefined;
}

/** What would decide a step that `more` further runs of it would make significant, having spent `used` of the budget. */
export function moreRunsAdvice(budget: Budget, stepRuns: number, more: number | undefined, used: number, stepsLeft: number): string {
  if (more === undefined) {
    return `its mean sits too near the middle for more runs of it alone to decide (it may hold part of the change); more runs of the ends and the step would: --max-step-runs ${budget.maxStepRuns * 2} --max-runs ${budget.maxRuns * 2}`;
  }
  const perStep = Math.max(budget.maxStepRuns, stepRuns + more);
  const total = Math.max(budget.maxRuns, used + more + stepsLeft * Math.max(budget.repeat, 2));
  const flags = [perStep > budget.maxStepRuns ? `--max-step-runs ${perStep}` : '', total > budget.maxRuns ? `--max-runs ${total}` : ''].filter(Boolean).join(' ');
  return `about ${more} more run(s) of it would: ${flags || `--max-runs ${budget.maxRuns + more}`}`;
}
