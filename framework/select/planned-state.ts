// What a run would make of a planned test, before it runs, in the words the run itself uses
// (framework/results/test-states.ts): `disagg-bench list` says WAITING where the run's progress
// shows a test waiting for its batch, SKIPPED and FAILED where the digest and report.html will.
import type { TestState } from '../results/test-states.ts';
import type { PlannedTest } from './plan.ts';

/** The states a plan can foresee: a job for it, no job on purpose, or a config that fails the test. */
export type PlannedState = Extract<TestState, 'waiting' | 'skipped' | 'failed'>;

export function plannedState(t: PlannedTest): PlannedState {
  // A config for another GPU is skipped, valid or not (as upstream); its issues are still counted.
  return t.skipReason ? 'skipped' : t.issues.length ? 'failed' : 'waiting';
}

/** Why it is skipped or failed (undefined when it would run); an invalid config's issues are counted, `disagg-bench validate` locates them. */
export function plannedReason(t: PlannedTest): string | undefined {
  const issues = `${t.issues.length} issue${t.issues.length > 1 ? 's' : ''}, see disagg-bench validate`;
  if (t.skipReason) return t.issues.length ? `${t.skipReason} (its config also has ${issues})` : t.skipReason;
  return t.issues.length ? `invalid config: ${issues}` : undefined;
}
