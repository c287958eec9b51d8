// The robust gate's verdict on a set of records judged together (a run, or a test of it while the
// run goes on): reads each series' post-merge runs and its alerts from the store, cuts the baseline
// segment (since the last acknowledged change; without the runs of an alert still open or since
// closed; for a pre-merge run, the baseline branch's current level), and hands the series to the
// pure core (gate/judge-run.ts). Findings come back in the record's shape (RegressionFinding).
import { DETECTION_POWER } from './gate/detectable.ts';
import type { RegressionFinding, TestRecord } from '../results/json.ts';
import type { GateSettings, RunKind } from '../settings.ts';
import { alertIdOf, type Alert, type AlertStore } from './alert-store.ts';
import { lookbackStartMs } from './baseline.ts';
import { isGated } from './gate-metrics.ts';
import { judgeRun, runWideEstimates, type GateFinding, type GateSeries, type RunPoint, type RunVerdict, type RunWide } from './gate/judge-run.ts';
import { checkedMetrics, diffPercent, idOf } from './regression.ts';
import type { HistoryStore } from './store.ts';

export interface RecordToJudge {
  record: TestRecord;
  /** The config's benchmark.regression (raw) or the record's embedded thresholds in that shape. */
  thresholds?: unknown;
  identity?: Record<string, string | number>;
  /** The gate entries of the record (run.gate, or the fallback for older records). */
  gate: readonly string[];
}

export interface JudgeOptions {
  runId: string;
  runKind: RunKind;
  /** The branch the run's records belong to; undefined: every branch. */
  branch?: string;
  gate: GateSettings;
  globalThresholdPercent?: number;
  /** The family size when the records are part of a larger run still going on (a test of it). */
  family?: number;
  /** The whole run's estimates, when the records are part of a run still going on (runWideOf). */
  runWide?: RunWide;
  /** Judge as of this time (ms; default: the records' earliest start): their history is what came before it. */
  anchorMs?: number;
  /** The records are this stored run's: their series are read where they are. */
  storedRunId?: string;
}

export interface JudgedRun {
  verdict: RunVerdict;
  /** Findings per test id, in the record's shape. */
  byTest: Map<string, RegressionFinding[]>;
  /** The gate's findings with the GPU type and branch of their series (what an alert keeps). */
  findings: (GateFinding & { gpuType?: string; branch?: string })[];
}

/** The branch whose history a run is judged against (check-run.ts says why). */
const judgedBranch = (kind: RunKind, branch: string | undefined, baseline: string) => (kind === 'pre-merge' ? baseline : branch);

/** What judging reads: each series' runs and its alerts (a HistoryStore; a simulation's own in memory). */
export interface GateSource {
  runValues: HistoryStore['runValues'];
  readonly alerts: Pick<AlertStore, 'list'>;
}

export async function judgeRecords(store: GateSource, inputs: readonly RecordToJudge[], options: JudgeOptions): Promise<JudgedRun> {
  const empty: JudgedRun = { verdict: { findings: [], family: 0, outlierRuns: [], heavyTailed: [] }, byTest: new Map(), findings: [] };
  if (inputs.length === 0) return empty;
  const series = await gateSeriesOf(store, inputs, options);
  const verdict = judgeRun(series, { alpha: options.gate.alpha, minRuns: options.gate.minRuns, runId: options.runId, ...(options.family ? { family: options.family } : {}), ...(options.runWide ? { runWide: options.runWide } : {}) });
  const byTest = new Map<string, RegressionFinding[]>();
  const recordOf = new Map(inputs.map((i) => [i.record.testId, i.record]));
  // A post-merge run's new regression opens its alert at the run's end under this id (alert-store.ts).
  const opens = options.runKind === 'post-merge';
  for (const f of verdict.findings) {
    const named = opens && f.status === 'regression' && f.firstRunId ? { ...f, alertId: alertIdOf(f.seriesId, f.firstRunId) } : f;
    const list = byTest.get(f.testId);
    if (list) list.push(asRecordFinding(named));
    else byTest.set(f.testId, [asRecordFinding(named)]);
  }
  const findings = verdict.findings.map((f) => ({ ...f, gpuType: recordOf.get(f.testId)?.gpuType, branch: options.branch }));
  return { verdict, byTest, findings };
}

/**
 * The run-wide estimates (noise prior, bad nights, family) of a whole run whose records are given,
 * for judging its tests one at a time as they end: a run in progress passes its tests' latest
 * stored records, which stand in for the values it has not measured yet.
 */
export async function runWideOf(store: GateSource, inputs: readonly RecordToJudge[], options: JudgeOptions): Promise<RunWide | undefined> {
  if (inputs.length === 0) return undefined;
  return runWideEstimates(await gateSeriesOf(store, inputs, options), options.gate);
}

/** Each checked metric of the records as the gate's series: its history (segmented by its alerts), its value, whether it gates. */
async function gateSeriesOf(store: GateSource, inputs: readonly RecordToJudge[], options: JudgeOptions): Promise<GateSeries[]> {
  const anchor = options.anchorMs ?? inputs.reduce((min, i) => Math.min(min, Date.parse(i.record.timing.start)), Infinity);
  const items = inputs.flatMap((input) =>
    checkedMetrics(input.record, input.thresholds, options.globalThresholdPercent).map((c) => ({
      input,
      metric: c.metric,
      higherIsBetter: c.higherIsBetter,
      threshold: options.runKind === 'pre-merge' ? c.thresholds.preMerge : c.thresholds.postMerge,
      seriesId: idOf(input.record, input.identity, c.metric),
    })),
  );
  const preMerge = options.runKind === 'pre-merge';
  const values = await store.runValues({
    fromMs: lookbackStartMs(anchor),
    toMs: anchor,
    branch: judgedBranch(options.runKind, options.branch, options.gate.baselineBranch),
    excludeRunId: options.runId,
    ...(options.storedRunId ? { storedRunId: options.storedRunId, points: [] } : { points: items.map((i) => ({ seriesId: i.seriesId, tsMs: Date.parse(i.input.record.timing.end), value: i.metric.value })) }),
  });
  const alerts = await store.alerts.list({ seriesIds: [...new Set(items.map((i) => i.seriesId))] });
  const alertsOf = new Map<number, Alert[]>();
  for (const a of alerts) alertsOf.set(a.seriesId, [...(alertsOf.get(a.seriesId) ?? []), a]);
  const series: GateSeries[] = [];
  for (const item of items) {
    const all = values.get(item.seriesId) ?? [];
    const { history, openAlert, currentLevel } = segment(all, alertsOf.get(item.seriesId) ?? [], preMerge);
    if (all.length === 0) continue; // upstream: no history for this case, no check
    const { record } = item.input;
    series.push({
      seriesId: item.seriesId,
      testId: record.testId,
      metric: item.metric.name,
      labels: item.metric.labels,
      unit: item.metric.unit,
      higherIsBetter: item.higherIsBetter,
      gated: isGated(item.input.gate, item.metric),
      threshold: item.threshold,
      ...(item.metric.rounded !== undefined ? { rounded: item.metric.rounded } : {}),
      value: item.metric.value,
      history,
      // A pre-merge run's previous run is another change's: it judges on its own value alone.
      ...(!preMerge && !openAlert && history.length ? { previous: history[history.length - 1] } : {}),
      ...(openAlert ? { openAlert } : {}),
      ...(currentLevel ? { currentLevel } : {}),
    });
  }
  return series;
}

/**
 * The runs a series is judged against. Since its last acknowledged alert (the new level accepted,
 * judged with the noise measured before the change until it has runs enough of its own);
 * without the runs of an alert that closed by itself (they were the regression); an open alert:
 * the runs before it, and the alert's state, for a post-merge or local run; for a pre-merge run
 * the runs since it (the baseline branch's current level: a change that makes an open regression
 * worse is still caught).
 */
export function segment(points: readonly RunPoint[], alerts: readonly Alert[], preMerge: boolean): Pick<GateSeries, 'history' | 'openAlert' | 'currentLevel'> {
  if (alerts.length === 0) return { history: [...points] };
  const lastAck = alerts.filter((a) => a.status === 'acked').sort((a, b) => b.firstTsMs - a.firstTsMs)[0];
  const acked = lastAck?.firstTsMs ?? -Infinity;
  let history = points.filter((p) => p.tsMs >= acked);
  for (const a of alerts) if (a.status === 'closed' && a.closedTsMs !== undefined) history = history.filter((p) => p.tsMs < a.firstTsMs || p.tsMs >= a.closedTsMs!);
  const open = alerts.find((a) => a.status === 'open' && a.firstTsMs >= acked);
  // An accepted level is judged from its first run on, with the noise measured before the change.
  if (!open) return { history, ...(lastAck ? { currentLevel: { alertId: lastAck.id, scale: lastAck.scaleBefore } } : {}) };
  if (preMerge) return { history: history.filter((p) => p.tsMs >= open.firstTsMs), currentLevel: { alertId: open.id, scale: open.scaleBefore } };
  return {
    history: history.filter((p) => p.tsMs < open.firstTsMs),
    openAlert: { id: open.id, level: open.levelBefore, scale: open.scaleBefore, size: alertSize(open.change), firstRunId: open.firstRunId, previousBack: open.backRuns >= 1 },
  };
}

/** An alert's size as its closing rule reads it; an alert stored without one closes on the threshold and the noise alone. */
const alertSize = (change: number) => (Math.abs(change) > 0 ? Math.abs(change) : Infinity);

const finiteOrNull = (x: number) => (Number.isFinite(x) ? x : null);

/** A gate finding as results.json keeps it: upstream's fields (baseline, diffPercent) and the robust rule's. */
export function asRecordFinding(f: GateFinding): RegressionFinding {
  const level = Number.isFinite(f.level) ? f.level : 0;
  return {
    metric: f.metric,
    labels: f.labels,
    unit: f.unit,
    value: f.value,
    baseline: level,
    threshold: f.threshold,
    diffPercent: diffPercent(f.value, level, f.higherIsBetter),
    regression: f.regression,
    days: f.runs,
    gated: f.gated,
    note: f.note,
    rule: 'robust',
    status: f.status,
    change: f.change,
    scale: f.scale,
    z: f.z,
    runs: f.runs,
    ...(f.alertId ? { alertId: f.alertId } : {}),
    ...(f.firstRunId ? { firstRunId: f.firstRunId } : {}),
    ...(f.lastGoodRunId ? { lastGoodRunId: f.lastGoodRunId } : {}),
    ...(f.pValue !== undefined ? { pValue: f.pValue } : {}),
    ...(f.detectable ? { detectable: { power: DETECTION_POWER, oneRun: finiteOrNull(f.detectable.oneRun), byTwoRuns: finiteOrNull(f.detectable.byTwoRuns) } } : {}),
  };
}
