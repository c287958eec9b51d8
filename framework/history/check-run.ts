// `history regressions`: every record of one run checked against the baselines of the history
// before it (one query for all its tests), as the suite checks each test at the run's end
// (test-check.ts) and as upstream's prepare_regressive_test_cases checks a whole upload. The
// thresholds are those the records embed (their configs' benchmark.regression), else
// DISAGG_REGRESSION_THRESHOLD, else upstream's defaults for the run's kind. The baselines come from
// the run's own branch for a post-merge or local run, from the baseline branch for a pre-merge one
// (baselineBranchOf); the gating metrics are those the records carry (run.gate), else `fallbackGate`.
import type { RegressionFinding, TestRecord } from '../results/json.ts';
import { DEFAULT_GATE, type GateSettings, type RunKind } from '../settings.ts';
import type { GateRule } from './gate.ts';
import { lookbackStartMs } from './baseline.ts';
import { checkRecord, newPoints } from './regression.ts';
import type { HistoryStore } from './store.ts';
import type { ConfigIdentity } from './config-identity.ts';
import { judgeRecords } from './run-verdict.ts';

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

export interface CheckRunOptions {
  runKind?: RunKind;
  globalThresholdPercent?: number;
  identityOf?: (testId: string) => ConfigIdentity | undefined;
  /** The records are this run's as the store holds them: its values are read there. */
  storedRunId?: string;
  /** The gate's settings: its rule, and for the robust rule alpha and minimum runs (default: DEFAULT_GATE). */
  gate?: GateSettings;
  /** The gating metrics of a record that carries none (written before the gate was kept). */
  fallbackGate?: (record: TestRecord) => string[];
  /**
   * Judge again even where the records carry the robust rule's verdict. Without it a run is shown
   * with the verdict it was given when it reached the store (one verdict everywhere).
   */
  judgeAgain?: boolean;
}

export async function checkRun(store: HistoryStore, records: TestRecord[], options: CheckRunOptions): Promise<RunCheck[]> {
  const gate = options.gate ?? DEFAULT_GATE;
  const measured = records.filter((r) => r.verdict === 'passed' || r.regression?.findings.some((f) => f.regression));
  if (measured.length === 0) return [];
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
  const gateOf = (record: TestRecord) => record.run?.gate ?? options.fallbackGate?.(record) ?? [];
  if (gate.rule === 'robust') {
    const recorded = !options.judgeAgain && !options.runKind && measured.every((r) => r.regression?.findings.some((f) => f.rule === 'robust'));
    if (recorded) return measured.map((r) => ({ testId: r.testId, findings: r.regression!.findings, ...(r.regression!.skipped ? { skipped: r.regression!.skipped } : {}) }));
    const judged = await judgeRecords(
      store,
      inputs.map((i) => ({ ...i, gate: gateOf(i.record) })),
      { runId: options.storedRunId ?? runIds[0] ?? '', runKind: kindOf(first), branch: first.run?.branch, gate, globalThresholdPercent: options.globalThresholdPercent, ...(options.storedRunId ? { storedRunId: options.storedRunId } : {}) },
    );
    return measured.map((r) => {
      const findings = judged.byTest.get(r.testId) ?? [];
      return { testId: r.testId, findings, ...(findings.length ? {} : { skipped: NO_HISTORY }) };
    });
  }
  const anchor = measured.reduce((min, r) => Math.min(min, Date.parse(r.timing.start)), Infinity);
  const baselines = await store.baselines({
    fromMs: lookbackStartMs(anchor),
    toMs: anchor,
    branch: baselineBranchOf(kindOf(first), first.run?.branch, gate.baselineBranch),
    excludeRunId: runIds.length === 1 ? runIds[0] : undefined,
    ...(options.storedRunId ? { storedRunId: options.storedRunId, points: [] } : { points: inputs.flatMap((input) => newPoints(input.record, input)) }),
  });
  return inputs.map((input) => ({
    testId: input.record.testId,
    ...checkRecord({ ...input, baselines, runKind: kindOf(input.record), rule: ruleOf(gate), gate: gateOf(input.record) }),
  }));
}

/** Why a test has no finding: nothing of its series in the window. */
export const NO_HISTORY = 'no earlier post-merge history of this test in the last 90 days';

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
