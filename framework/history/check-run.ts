// `history regressions`: every record of one run checked against the baselines of the history
// before it (one query for all its tests), as the suite checks each test at the run's end
// (test-check.ts) and as upstream's prepare_regressive_test_cases checks a whole upload. The
// thresholds are those the records embed (their configs' benchmark.regression), else
// DISAGG_REGRESSION_THRESHOLD, else upstream's defaults for the run's kind. The baselines come from
// the run's own branch for a post-merge or local run, from the baseline branch for a pre-merge one
// (baselineBranchOf); the gating metrics are those the records carry (run.gate), else `fallbackGate`.
import type { RegressionFinding, TestRecord } from '../results/json.ts';
import type { GateSettings, RunKind } from '../settings.ts';
import type { GateRule } from './gate.ts';
import { lookbackStartMs } from './baseline.ts';
import { checkRecord, newPoints } from './regression.ts';
import type { HistoryStore } from './store.ts';
import type { ConfigIdentity } from './config-identity.ts';

export interface RunCheck {
  testId: string;
  findings: RegressionFinding[];
  skipped?: string;
  /** Metrics printed rounded to zero, left unjudged (regression.ts). */
  unmeasured?: string[];
}

/** Embedded thresholds (fractions) as a config's benchmark.regression (percents). */
function asConfigThresholds(record: TestRecord): Record<string, { post_merge: number; pre_merge: number }> {
  return Object.fromEntries(Object.entries(record.run?.thresholds ?? {}).map(([m, t]) => [m, { post_merge: t.postMerge * 100, pre_merge: t.preMerge * 100 }]));
}

export async function checkRun(
  store: HistoryStore,
  records: TestRecord[],
  options: {
    runKind?: RunKind;
    globalThresholdPercent?: number;
    identityOf?: (testId: string) => ConfigIdentity | undefined;
    /** The records are this run's as the store holds them: its values are read there. */
    storedRunId?: string;
    rule?: GateRule;
    /** The baseline branch (DISAGG_BASELINE_BRANCH), for pre-merge runs. */
    baselineBranch?: string;
    /** The gating metrics of a record that carries none (written before the gate was kept). */
    fallbackGate?: (record: TestRecord) => string[];
  },
): Promise<RunCheck[]> {
  const measured = records.filter((r) => r.verdict === 'passed' || r.regression?.findings.some((f) => f.regression));
  if (measured.length === 0) return [];
  const anchor = measured.reduce((min, r) => Math.min(min, Date.parse(r.timing.start)), Infinity);
  const runIds = [...new Set(measured.map((r) => r.run?.id).filter((id): id is string => !!id))];
  const inputs = measured.map((record) => ({
    record,
    thresholds: asConfigThresholds(record),
    globalThresholdPercent: options.globalThresholdPercent,
    // A record of an older version has no run context: its config says what its identity is.
    identity: record.run ? record.run.identity : options.identityOf?.(record.testId)?.identity,
  }));
  const kindOf = (r: TestRecord): RunKind => options.runKind ?? r.run?.kind ?? 'post-merge';
  const first = measured[0];
  const baselines = await store.baselines({
    fromMs: lookbackStartMs(anchor),
    toMs: anchor,
    branch: baselineBranchOf(kindOf(first), first.run?.branch, options.baselineBranch),
    excludeRunId: runIds.length === 1 ? runIds[0] : undefined,
    ...(options.storedRunId ? { storedRunId: options.storedRunId, points: [] } : { points: inputs.flatMap((input) => newPoints(input.record, input)) }),
  });
  return inputs.map((input) => ({
    testId: input.record.testId,
    ...checkRecord({ ...input, baselines, runKind: kindOf(input.record), rule: options.rule, gate: input.record.run?.gate ?? options.fallbackGate?.(input.record) }),
  }));
}

/**
 * The branch whose history a run is judged against: the baseline branch for a pre-merge run (newest
 * upstream's pre-merge lookup), its own for the others. A local run is judged exactly as a
 * post-merge run of its branch; it only feeds no baseline. Undefined (every branch) when the run's
 * branch is not known. Values recorded without a branch join every branch.
 */
export function baselineBranchOf(kind: RunKind, branch: string | undefined, baselineBranch: string | undefined): string | undefined {
  if (kind === 'pre-merge') return baselineBranch ?? 'main';
  return branch;
}

export const ruleOf = (gate: GateSettings): GateRule => ({ minDays: gate.minDays, noiseK: gate.noiseK });
