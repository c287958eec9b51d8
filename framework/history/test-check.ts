// The history's part in one test of a run (framework/suite/suite.test.ts): the run context its
// record carries into the history at the run's end, and its check against the baselines of the
// history before it. The store being absent, empty or unreachable never touches the test's own
// result: the check is skipped with one sentence saying why.
import type { PlannedTest } from '../select/plan.ts';
import type { Settings } from '../settings.ts';
import type { RecordRegression, RecordRunContext, RegressionFinding, TestRecord } from '../results/json.ts';
import { testType } from '../types/registry.ts';
import { configuredThresholds } from '../metrics/regression-thresholds.ts';
import { isHistoryStoreError } from './errors.ts';
import { lookbackStartMs } from './baseline.ts';
import { checkRecord, newPoints, regressionMessages, unmeasuredLine, unmeasuredOf } from './regression.ts';
import { baselineBranchOf, NO_HISTORY, ruleOf } from './check-run.ts';
import { judgeRecords, runWideOf, type JudgeOptions } from './run-verdict.ts';
import type { RunWide } from './gate/judge-run.ts';
import { gatedMetrics, isGated } from './gate-metrics.ts';
import { headlineMetrics } from '../metrics/headline.ts';
import { runContext } from './run-context.ts';
import { withHistory, type HistoryStore } from './store.ts';
import { NOT_APPENDED, replayedRunContext } from './unappended.ts';

const failedStores = new Map<string, string>();
/** The run-wide estimates of each run, per store, in this process: computed at its first check. */
const runWides = new Map<string, Promise<RunWide | undefined>>();
const queues = new Map<string, Promise<unknown>>();

export interface TestHistory {
  run: RecordRunContext;
  regression?: RecordRegression;
  /** Regressions that fail the test (DISAGG_REGRESSION=fail). */
  failures: string[];
  /** Lines to show without failing (warn mode, or why the check was skipped on an error). */
  warnings: string[];
}

export interface HistoryForTestInput {
  settings: Settings;
  runId: string;
  test: PlannedTest;
  record: TestRecord;
  /** Tests the run's project runs: the gate's correction for many comparisons counts their figures. */
  runTests?: number;
  /** Their ids: the gate takes its run-wide estimates from their latest stored records (runWideOf). */
  runTestIds?: readonly string[];
}

/**
 * The run context of a test's record and, when it measured something and regressions are
 * checked, its findings. Every record carries its run, so that `history import` keeps it; a run
 * that keeps no history (DISAGG_HISTORY=off) or replays an earlier run's logs (DEBUG_MODE: its
 * numbers are no new measurement) checks nothing (unappended.ts says which records a run's end
 * leaves out).
 */
export async function historyForTest(input: HistoryForTestInput): Promise<TestHistory> {
  const { settings, record } = input;
  const history = settings.history;
  if (settings.debugMode) return { run: await replayedRunContext(settings, input.runId, record, () => ownRunContext(input)), failures: [], warnings: [] };
  const { run, raw, identity } = ownRunContext(input);
  if (history.target.kind === 'off') return { run: { ...run, notAppended: NOT_APPENDED.off }, failures: [], warnings: [] };
  const outcome: TestHistory = { run, failures: [], warnings: [] };
  if (history.regression === 'off' || record.verdict !== 'passed' || record.metrics.length === 0) return outcome;
  // One check at a time per store in this process, so that a store that failed once is not tried
  // again by every later test (an unreachable server would cost each one the connect timeout);
  // the first test said why.
  const key = JSON.stringify(history.target);
  const previous = queues.get(key) ?? Promise.resolve();
  const mine = previous.then(() => check(input, outcome, key, raw, identity));
  queues.set(key, mine.catch(() => undefined));
  await mine;
  return outcome;
}

/** This run's context for the test's record: identity, thresholds and gate from its config. */
function ownRunContext(input: HistoryForTestInput) {
  const { settings, test, record } = input;
  const history = settings.history;
  const config = test.resolved?.config ?? {};
  const type = testType(test.testType);
  const raw = type?.regression?.(config);
  const identity = type?.identity?.(config);
  const headline = type ? headlineMetrics(type, config, test.category ?? record.category, record.metrics) : [];
  const gate = gatedMetrics(record.metrics, headline, history.gate.metrics, raw);
  const run = runContext({ runId: input.runId, history, workDir: settings.workDir, identity, thresholds: configuredThresholds(raw, history.thresholdPercent), gate });
  return { run, raw, identity };
}

async function check(input: HistoryForTestInput, outcome: TestHistory, key: string, raw: unknown, identity: Record<string, string | number> | undefined): Promise<void> {
  const { settings, record } = input;
  const history = settings.history;
  const anchor = Date.parse(record.timing.start);
  const failed = failedStores.get(key);
  if (failed) {
    outcome.regression = { mode: history.regression, findings: [], skipped: failed };
    return;
  }
  try {
    const options = { thresholds: raw, globalThresholdPercent: history.thresholdPercent, identity };
    let checked: { findings: RegressionFinding[]; skipped?: string; unmeasured?: string[] };
    if (history.gate.rule === 'robust') {
      // The run is judged one test at a time, as each ends: against the noise prior, bad nights and
      // family of the whole run, from its tests' latest stored records (once per run in this
      // process); where the history has none, the correction counts this test's gating figures
      // times the run's tests.
      const gating = record.metrics.filter((m) => isGated(outcome.run.gate ?? [], m)).length;
      const judging = { runId: input.runId, runKind: history.runKind, branch: outcome.run.branch, gate: history.gate, globalThresholdPercent: history.thresholdPercent };
      const judged = await withHistory(history.target, async (store) => {
        const runWide = await runWideFor(store, key, input, { ...judging, anchorMs: Date.parse(record.timing.start) });
        return judgeRecords(store, [{ record, thresholds: raw, identity, gate: outcome.run.gate ?? [] }], { ...judging, ...(runWide ? { runWide } : { family: gating * Math.max(1, input.runTests ?? 1) }) });
      });
      const findings = judged.byTest.get(record.testId) ?? [];
      checked = { findings, ...(findings.length ? {} : { skipped: NO_HISTORY }), ...unmeasuredOf(record) };
    } else {
      const branch = baselineBranchOf(history.runKind, outcome.run.branch, history.gate.baselineBranch);
      const baselines = await withHistory(history.target, (store) =>
        store.baselines({ fromMs: lookbackStartMs(anchor), toMs: anchor, excludeRunId: input.runId, points: newPoints(record, options), branch }),
      );
      checked = checkRecord({ record, baselines, runKind: history.runKind, ...options, rule: ruleOf(history.gate), gate: outcome.run.gate });
    }
    outcome.regression = { mode: history.regression, findings: checked.findings, ...(checked.skipped ? { skipped: checked.skipped } : {}) };
    const messages = regressionMessages(record.testId, checked.findings);
    if (history.regression === 'fail') outcome.failures.push(...messages);
    else outcome.warnings.push(...messages.map((m) => `warning: ${m}`));
    const unmeasured = unmeasuredLine([{ testId: record.testId, unmeasured: checked.unmeasured }]);
    if (unmeasured) outcome.warnings.push(`regression check: ${unmeasured}`);
  } catch (error) {
    if (!isHistoryStoreError(error)) throw error;
    const why = error.empty ? 'no history yet' : `not checked against the history: ${error.message}`;
    outcome.regression = { mode: history.regression, findings: [], skipped: why };
    if (!error.empty) {
      failedStores.set(key, why);
      outcome.warnings.push(`${record.testId}: ${why} (the run's other tests are not checked either)`);
    }
  }
}

/** The whole run's estimates from its tests' latest stored records; undefined where there are none. */
function runWideFor(store: HistoryStore, storeKey: string, input: HistoryForTestInput, options: JudgeOptions): Promise<RunWide | undefined> {
  const ids = new Set(input.runTestIds ?? []);
  if (ids.size === 0) return Promise.resolve(undefined);
  const key = `${storeKey}\0${input.runId}`;
  let wide = runWides.get(key);
  if (!wide) {
    wide = store.latestRecords().then((records) =>
      runWideOf(
        store,
        records.filter((r) => ids.has(r.testId)).map((r) => ({ record: r, identity: r.run?.identity, gate: r.run?.gate ?? [] })),
        options,
      ),
    );
    runWides.set(key, wide);
    // a store that failed is tried afresh by the next check (it says why itself)
    wide.catch(() => runWides.delete(key));
  }
  return wide;
}
