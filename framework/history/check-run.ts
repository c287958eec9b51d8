// `history regressions`: every record of one run checked against the baselines of the history
// before it (one query for all its tests), as the suite checks each test at the run's end
// (test-check.ts) and as upstream's prepare_regressive_test_cases checks a whole upload. The
// thresholds are those the records embed (their configs' benchmark.regression), else
// DISAGG_REGRESSION_THRESHOLD, else upstream's defaults for the run's kind.
import type { RegressionFinding, TestRecord } from '../results/json.ts';
import type { RunKind } from '../settings.ts';
import { lookbackStartMs } from './baseline.ts';
import { checkRecord, newPoints } from './regression.ts';
import type { HistoryStore } from './store.ts';
import type { ConfigIdentity } from './config-identity.ts';

export interface RunCheck {
  testId: string;
  findings: RegressionFinding[];
  skipped?: string;
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
  const baselines = await store.baselines({
    fromMs: lookbackStartMs(anchor),
    toMs: anchor,
    excludeRunId: runIds.length === 1 ? runIds[0] : undefined,
    ...(options.storedRunId ? { storedRunId: options.storedRunId, points: [] } : { points: inputs.flatMap((input) => newPoints(input.record, input)) }),
  });
  return inputs.map((input) => ({ testId: input.record.testId, ...checkRecord({ ...input, baselines, runKind: options.runKind ?? input.record.run?.kind ?? 'post-merge' }) }));
}
