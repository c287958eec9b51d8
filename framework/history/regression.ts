// A record checked against its history (perf_regression_utils.py prepare_regressive_test_cases):
// per metric with a direction, the baseline of store.ts baselines (baseline.ts: upstream's
// algorithm over the history before the run, the judged value not part of it); its threshold from
// the config, else DISAGG_REGRESSION_THRESHOLD, else 10 % pre-merge, 5 % post-merge and local (a
// local run is judged as a post-merge run of its branch; it only feeds no baseline); the verdict
// from gate.ts (only gating metrics, beyond the threshold and the noise, enough days, for a
// pre-merge run not a regression the baseline branch already has). As upstream: a series with no history is not
// checked, a baseline <= 0 is skipped, and the change is _calculate_diff's percent (positive =
// better). The message names test, metric, value, baseline, threshold and change, in upstream's
// words (`value=... baseline=... threshold=5.00% diff=-12.34%`).
import type { RegressionFinding, TestRecord } from '../results/json.ts';
import { caughtText } from '../results/gate-sensitivity.ts';
import { metricThresholds } from '../metrics/regression-thresholds.ts';
import type { RunKind } from '../settings.ts';
import { REGRESSION_FAILURE_PREFIX } from './rows.ts';
import { casePrefix, labelsKey, seriesId } from './series-key.ts';
import type { NewPoint } from './store.ts';
import { judge, type GateRule, type SeriesStats } from './gate.ts';
import { DEFAULT_GATE } from '../settings.ts';
import { belowResolution } from '../metrics/resolution.ts';
import { isGated } from './gate-metrics.ts';

export interface CheckInput {
  record: TestRecord;
  /** Baselines by series id (store.baselines with this record's newPoints). */
  baselines: Map<number, SeriesStats>;
  runKind: RunKind;
  /** Minimum days and noise factor (default: DISAGG_GATE_MIN_DAYS 3, DISAGG_GATE_NOISE_K 3). */
  rule?: GateRule;
  /** The gating metrics' names; default the record's own (run.gate), else none gates. */
  gate?: readonly string[];
  /** The config's benchmark.regression (raw, schema-checked). */
  thresholds?: unknown;
  globalThresholdPercent?: number;
  identity?: Record<string, string | number>;
}

export interface CheckOutcome {
  findings: RegressionFinding[];
  /** Why nothing was compared, when nothing was. */
  skipped?: string;
  /** The metrics with a direction left unjudged as no measurement (printed rounded to zero): `NAME[labels]`. */
  unmeasured?: string[];
}

/** _calculate_diff: percent, positive when the new value is better. */
export function diffPercent(value: number, baseline: number, higherIsBetter: boolean): number {
  if (baseline === 0) return 0;
  return ((higherIsBetter ? value - baseline : baseline - value) / baseline) * 100;
}

/**
 * The metrics of a record that are checked: a direction, no `check: false` in its config, and a
 * measurement (a figure printed rounded to zero is none: metrics/resolution.ts).
 */
export function checkedMetrics(record: TestRecord, thresholds: unknown, globalPercent?: number) {
  return record.metrics.flatMap((metric) => {
    if (metric.higherIsBetter === undefined || belowResolution(metric)) return [];
    const t = metricThresholds(thresholds, metric.name, globalPercent);
    return t.check ? [{ metric, higherIsBetter: metric.higherIsBetter, thresholds: t }] : [];
  });
}

// Series ids of a record's metrics, computed once per record and identity (a run's check asks
// for each twice: its new points, then its findings).
const idCache = new WeakMap<TestRecord, { identity: CheckInput['identity']; prefix: string; ids: Map<TestRecord['metrics'][number], number> }>();

export function idOf(record: TestRecord, identity: CheckInput['identity'], metric: TestRecord['metrics'][number]): number {
  let cached = idCache.get(record);
  if (!cached || cached.identity !== identity) {
    cached = { identity, prefix: casePrefix(record.testId, record.gpuType, identity), ids: new Map() };
    idCache.set(record, cached);
  }
  let id = cached.ids.get(metric);
  if (id === undefined) cached.ids.set(metric, (id = seriesId(`${cached.prefix}${labelsKey(metric.labels)}]`, metric.name)));
  return id;
}

/** The values of a record that the baseline query adds to their days (upstream's new_data). */
export function newPoints(record: TestRecord, input: Pick<CheckInput, 'thresholds' | 'globalThresholdPercent' | 'identity'>): NewPoint[] {
  const tsMs = Date.parse(record.timing.end);
  return checkedMetrics(record, input.thresholds, input.globalThresholdPercent).map(({ metric }) => ({ seriesId: idOf(record, input.identity, metric), tsMs, value: metric.value }));
}

export function checkRecord(input: CheckInput): CheckOutcome {
  const { record } = input;
  const checked = checkedMetrics(record, input.thresholds, input.globalThresholdPercent);
  const gate = new Set(input.gate ?? record.run?.gate ?? []);
  const rule = input.rule ?? DEFAULT_GATE;
  const findings: RegressionFinding[] = [];
  for (const { metric, higherIsBetter, thresholds } of checked) {
    const stats = input.baselines.get(idOf(record, input.identity, metric));
    if (!stats) continue; // upstream: no history for this case, no check
    const threshold = input.runKind === 'pre-merge' ? thresholds.preMerge : thresholds.postMerge;
    const gated = isGated(gate, metric);
    const verdict = judge({ value: metric.value, higherIsBetter, stats, threshold, rule, gated, runKind: input.runKind, ...(metric.rounded !== undefined && { rounded: metric.rounded }) });
    if (!verdict) continue;
    findings.push({
      metric: metric.name,
      labels: metric.labels,
      unit: metric.unit,
      value: metric.value,
      baseline: verdict.baseline,
      threshold,
      diffPercent: diffPercent(metric.value, verdict.baseline, higherIsBetter),
      regression: verdict.regression,
      days: stats.days,
      gated,
      ...(verdict.note ? { note: verdict.note } : {}),
    });
  }
  const said = unmeasuredOf(record);
  const unmeasured = said.unmeasured ?? [];
  if (findings.length > 0) return { findings, ...said };
  const skipped = checked.length > 0 ? 'no earlier post-merge history of this test in the last 90 days' : unmeasured.length > 0 ? 'every metric with a direction was printed rounded to zero: no measurement' : 'no metric with a direction to check';
  return { findings, skipped, ...said };
}

/** The metrics with a direction a record printed rounded to zero: no measurement, not judged. */
export function unmeasuredOf(record: TestRecord): { unmeasured?: string[] } {
  const unmeasured = record.metrics.filter((m) => m.higherIsBetter !== undefined && belowResolution(m)).map((m) => `${m.name}${labelText(m.labels)}`);
  return unmeasured.length > 0 ? { unmeasured } : {};
}

/**
 * One line for the metrics a check left out as no measurement, or undefined: `N figure(s) printed
 * rounded to zero, not judged (no measurement): test METRIC[labels], ...` (the first five named).
 */
export function unmeasuredLine(checks: readonly { testId: string; unmeasured?: string[] }[]): string | undefined {
  const all = checks.flatMap((c) => (c.unmeasured ?? []).map((m) => `${c.testId} ${m}`));
  if (all.length === 0) return undefined;
  const named = all.slice(0, 5).join(', ') + (all.length > 5 ? `, and ${all.length - 5} more` : '');
  return `${all.length} figure(s) printed rounded to zero, not judged (no measurement): ${named}`;
}

const labelText = (labels: RegressionFinding['labels']) => {
  const entries = Object.entries(labels);
  return entries.length ? `[${entries.map(([k, v]) => `${k}=${v}`).join(',')}]` : '';
};

/** A relative change as a signed percentage in the metric's own terms (TTFT +20.0% = 20 % slower). */
export const signedPercent = (fraction: number) => `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(1)}%`;

/** The worsening the gate catches in this figure (gate/detectable.ts), as `history regressions --all` lists it. */
const caught = (f: RegressionFinding) => {
  if (!f.detectable) return '';
  return `, ${caughtText(f.detectable.oneRun, f.detectable.byTwoRuns)}`;
};

/**
 * One finding in words: the robust rule's (value, level, change in the metric's own terms, noise,
 * runs, and why), or upstream's (`value=... baseline=... threshold=5.00% diff=-12.34%`, labelled as
 * upstream's rule), then whether it gates and why a breach is not a regression.
 */
export function describeFinding(testId: string, f: RegressionFinding): string {
  const gate = f.gated === false ? ', shown, not gating' : '';
  if (f.rule === 'robust') {
    const what = `${testId} ${f.metric}${labelText(f.labels)}: ${f.value.toPrecision(6)} ${f.unit} against its level ${f.baseline.toPrecision(6)}`;
    if (f.status === 'unjudged') return `${what} (${f.runs ?? f.days} post-merge run(s)${gate}): ${f.note ?? 'not judged'}`;
    const change = f.change ?? 0;
    const direction = change === 0 ? '' : (f.diffPercent ?? 0) < 0 ? ' worse' : ' better';
    const range = f.firstRunId ? `, from run ${f.firstRunId}${f.lastGoodRunId ? ` (last good ${f.lastGoodRunId})` : ''}` : '';
    return `${what}: ${signedPercent(change)}${direction}, noise ${((f.scale ?? 0) * 100).toFixed(1)}%, ${f.runs ?? f.days} run(s)${caught(f)}${gate}${range}: ${f.note ?? ''}`;
  }
  return `${testId} ${f.metric}${labelText(f.labels)}: value=${f.value.toFixed(4)} baseline=${f.baseline.toFixed(4)} threshold=${(f.threshold * 100).toFixed(2)}% diff=${f.diffPercent >= 0 ? '+' : ''}${f.diffPercent.toFixed(2)}% (${f.unit}, ${f.days} day(s) of history${gate}, upstream's rule)${f.note && f.gated !== false ? `: ${f.note}` : ''}`;
}

/** The failure (or warning) line of each regression. */
export function regressionMessages(testId: string, findings: RegressionFinding[]): string[] {
  return findings.filter((f) => f.regression).map((f) => `${REGRESSION_FAILURE_PREFIX}${describeFinding(testId, f)}`);
}
