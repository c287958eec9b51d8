// The run digest: what a perf engineer reads after a run, built from the run's records alone (plus
// the previous run's values, which the history layer looks up). One line per test: verdict,
// headline figure, its change against the previous run and against the baseline, the regression
// mark, the job's run and queue time; then totals, regressions with their baselines, skipped tests
// with their reasons, tests not run with how to continue, and where the report is. The same
// model is written as summary.json (SUMMARY_JSON_VERSION; schema in docs/run-digest.md) and
// rendered as summary.md and the terminal's last lines (digest-text.ts).
import { gateSensitivity, type GateSensitivity } from '../gate-sensitivity.ts';
import type { Metric } from '../../metrics/metric.ts';
import type { RegressionFinding, TestRecord } from '../json.ts';
import type { RunFacts } from '../run-facts.ts';
import { belowResolution } from '../../metrics/resolution.ts';
import type { EndState } from '../test-states.ts';

/** 2: a test that did not reach its end is `not run` (totals.notRun), the word the run uses; `run` holds the run's facts. */
export const SUMMARY_JSON_VERSION = 2;

/** A headline value's previous-run value, keyed by previousKey(). */
export type PreviousValues = ReadonlyMap<string, { value: number; runId: string }>;

export const labelsText = (labels: Metric['labels']) => Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');
export const previousKey = (testId: string, metric: string, labels: Metric['labels']) =>
  `${testId}\u0000${metric}\u0000${JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)))}`;

/** How a test ended, in the one vocabulary (test-states.ts). */
export type DigestVerdict = EndState;

export interface DigestHeadline {
  metric: string;
  labels: Metric['labels'];
  value: number;
  unit: string;
  higherIsBetter?: boolean;
  /** The step the value was printed rounded to (Metric.rounded); absent: exact. */
  rounded?: number;
  /** Printed rounded to zero: no measurement, so no change against anything is stated. */
  belowResolution?: boolean;
  /** The same figure in the run before this one (from the history). */
  previous?: { value: number; runId: string; changePercent: number };
  /**
   * The level the gate judged it against: the change in the metric's own terms (as `previous`:
   * TTFT +20 % is 20 % slower), upstream's diff beside it (positive = better), the gate's status
   * (robust rule: ok, improved, suspect, regression, still-regressed, recovered, unjudged) and why.
   */
  baseline?: { value: number; changePercent: number; diffPercent: number; thresholdPercent: number; days: number; status?: string; note?: string; alertId?: string };
  regression: boolean;
}

export interface DigestFigure {
  metric: string;
  labels: Metric['labels'];
  value: number;
  unit: string;
}

export interface DigestTest {
  testId: string;
  type: string;
  category: string;
  verdict: DigestVerdict;
  /** Any figure regressed against its baseline. */
  regressed: boolean;
  headline?: DigestHeadline;
  /** Every headline figure of the test (the headline column shows the first), for a test with more than one. */
  figures?: DigestFigure[];
  jobId: string | null;
  schedulerState?: string;
  queueSec?: number;
  runSec?: number;
  failures: string[];
  skipReason?: string;
  logDir?: string;
}

export interface DigestRegression extends RegressionFinding {
  testId: string;
  /** fail: the test failed for it; warn: reported only. */
  mode: 'fail' | 'warn' | 'off';
}

export interface Digest {
  version: typeof SUMMARY_JSON_VERSION;
  runId?: string;
  /** What the run is beside its tests: kind, label, commits of the configs and of disagg-bench, scheduler, GPU type, span. */
  run?: RunFacts;
  generated: string;
  start?: string;
  end?: string;
  totals: { tests: number; passed: number; failed: number; skipped: number; notRun: number; regressed: number };
  tests: DigestTest[];
  regressions: DigestRegression[];
  /** How to continue the tests not run (a command line). */
  resume?: string;
  files: { results: string; report?: string; index?: string; summaryMd: string; summaryJson: string };
  /** Lines the run wants said beside the table (the history's store, a report that failed). */
  notes: string[];
  /** Alerts still open in the history after this run, each in one line (history alerts). */
  openAlerts?: string[];
  /** The worsening the gate catches in this run's gating figures (robust rule, judged figures only). */
  gateSensitivity?: GateSensitivity;
}

export interface DigestInput {
  runId?: string;
  facts?: RunFacts;
  /** The run's tests, in the order run: each one's latest record, or none (it did not reach its end). */
  tests: { testId: string; record?: TestRecord; interrupted?: string }[];
  previous?: PreviousValues;
  files: Digest['files'];
  resume?: string;
  notes?: string[];
  openAlerts?: string[];
  now?: Date;
}

const percentChange = (value: number, from: number) => ((value - from) / Math.abs(from)) * 100;

function headlineOf(record: TestRecord, previous: PreviousValues | undefined): DigestHeadline | undefined {
  const findings = record.regression?.findings ?? [];
  const sameKey = (m: { labels: Metric['labels'] }, labels: Metric['labels']) => JSON.stringify(Object.entries(m.labels).sort()) === JSON.stringify(Object.entries(labels).sort());
  // A regressed figure outranks the headline: the digest shows what went wrong.
  const regressed = findings.find((f) => f.regression);
  const ref = regressed ? { name: regressed.metric, labels: regressed.labels } : record.headline?.[0];
  if (!ref) return undefined;
  const metric = record.metrics.find((m) => m.name === ref.name && sameKey(m, ref.labels));
  if (!metric) return undefined;
  const finding = findings.find((f) => f.metric === metric.name && sameKey(f, metric.labels));
  const below = belowResolution(metric);
  // no change from or to a figure rounded to zero: -100 % from a busy host's `0.00` is no news
  const earlier = previous?.get(previousKey(record.testId, metric.name, metric.labels));
  // ...nor from a zero (an older run's unmarked `0.00`): a change from nothing has no percent
  const before = below || earlier?.value === 0 || (earlier && belowResolution({ value: earlier.value, rounded: metric.rounded })) ? undefined : earlier;
  return {
    metric: metric.name,
    labels: metric.labels,
    value: metric.value,
    unit: metric.unit,
    higherIsBetter: metric.higherIsBetter,
    ...(metric.rounded !== undefined && { rounded: metric.rounded }),
    ...(below && { belowResolution: true }),
    ...(before && { previous: { ...before, changePercent: percentChange(metric.value, before.value) } }),
    ...(finding && {
      baseline: {
        value: finding.baseline,
        changePercent: finding.change !== undefined ? finding.change * 100 : finding.baseline ? percentChange(metric.value, finding.baseline) : 0,
        diffPercent: finding.diffPercent,
        thresholdPercent: finding.threshold * 100,
        days: finding.days,
        ...(finding.status && { status: finding.status }),
        ...(finding.note && { note: finding.note }),
        ...(finding.alertId && { alertId: finding.alertId }),
      },
    }),
    regression: !!finding?.regression,
  };
}

/** The record's headline figures with their values, when it has more than one. */
function figuresOf(record: TestRecord): DigestFigure[] | undefined {
  const refs = record.headline ?? [];
  if (refs.length < 2) return undefined;
  const same = (a: Metric['labels'], b: Metric['labels']) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
  return refs.flatMap((ref) => {
    const m = record.metrics.find((x) => x.name === ref.name && same(x.labels, ref.labels));
    return m ? [{ metric: m.name, labels: m.labels, value: m.value, unit: m.unit }] : [];
  });
}

function testOf(entry: DigestInput['tests'][number], previous: PreviousValues | undefined): DigestTest {
  const r = entry.record;
  if (!r || entry.interrupted) {
    return { testId: entry.testId, type: r?.type ?? '', category: r?.category ?? '', verdict: 'not run', regressed: false, jobId: r?.jobId ?? null, failures: entry.interrupted ? [entry.interrupted] : [] };
  }
  return {
    testId: r.testId,
    type: r.type,
    category: r.category,
    verdict: r.verdict,
    regressed: !!r.regression?.findings.some((f) => f.regression),
    headline: headlineOf(r, previous),
    ...(figuresOf(r) && { figures: figuresOf(r) }),
    jobId: r.jobId,
    ...(r.schedulerState && { schedulerState: r.schedulerState }),
    ...(r.job?.queueSec !== undefined && { queueSec: r.job.queueSec }),
    ...(r.job?.runSec !== undefined && { runSec: r.job.runSec }),
    failures: r.failures,
    ...(r.skipReason && { skipReason: r.skipReason }),
    ...(r.logDir && { logDir: r.logDir }),
  };
}

export function buildDigest(input: DigestInput): Digest {
  const tests = input.tests.map((t) => testOf(t, input.previous));
  const count = (v: DigestVerdict) => tests.filter((t) => t.verdict === v).length;
  const records = input.tests.map((t) => t.record).filter((r): r is TestRecord => !!r && r.verdict !== 'skipped');
  // per test, its headline figures first: what its users watch leads the list
  const isHeadline = (r: TestRecord, f: RegressionFinding) => !!r.headline?.some((h) => h.name === f.metric && JSON.stringify(Object.entries(h.labels).sort()) === JSON.stringify(Object.entries(f.labels).sort()));
  const regressions = records.flatMap((r) =>
    (r.regression?.findings ?? [])
      .filter((f) => f.regression)
      .sort((a, b) => Number(isHeadline(r, b)) - Number(isHeadline(r, a)))
      .map((f) => ({ testId: r.testId, mode: r.regression!.mode, ...f })),
  );
  const sensitivity = gateSensitivity(records.flatMap((r) => (r.regression?.findings ?? []).map((f) => ({ testId: r.testId, ...f }))));
  const starts = records.map((r) => r.timing.start).sort();
  const ends = records.map((r) => r.timing.end).sort();
  const gpuTypes = [...new Set(records.map((r) => r.gpuType).filter((g): g is string => !!g))].join(', ');
  const span = starts.length > 0 ? { start: starts[0], end: ends[ends.length - 1] } : {};
  const run: RunFacts | undefined = input.facts && { ...input.facts, ...(gpuTypes && !input.facts.gpuType && { gpuType: gpuTypes }), ...span };
  return {
    version: SUMMARY_JSON_VERSION,
    ...(input.runId && { runId: input.runId }),
    ...(run && { run }),
    generated: (input.now ?? new Date()).toISOString(),
    ...span,
    totals: { tests: tests.length, passed: count('passed'), failed: count('failed'), skipped: count('skipped'), notRun: count('not run'), regressed: tests.filter((t) => t.regressed).length },
    tests,
    regressions,
    ...(count('not run') > 0 && input.resume && { resume: input.resume }),
    files: input.files,
    notes: input.notes ?? [],
    ...(input.openAlerts?.length && { openAlerts: input.openAlerts }),
    ...(sensitivity && { gateSensitivity: sensitivity }),
  };
}
