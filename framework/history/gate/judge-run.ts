// The gate's verdict on one run: every series the run measured, judged together against the
// runs before it. Pure: series in, findings out (the store reads the series, the CLI, the suite,
// the digest and the report show the findings), so a simulation drives exactly what a run does.
//
// Per series, the baseline is the segment of post-merge runs since its last accepted change (an
// acknowledged alert), without the runs of a regression still open or since fixed, and without
// whole runs that were off together (a bad night: most of the run's series far from their levels
// at once). Its level is the 10 %-trimmed mean of one value per run; its noise the MAD of the runs around it,
// moderated toward the scale the run's other series share (scalePrior), so 14 runs of one series
// and hundreds of the others decide its noise together.
//
// A run raises an alert on a gating series when the change is worse than the series' threshold
// (upstream's fraction: the size that matters) and significant for the whole run at once:
// DISAGG_GATE_ALPHA, the share of unchanged runs allowed to raise a new alert, is split over the
// run's G gating series (Šidák), and each series' share between two rules (gate/thresholds.ts):
//  - one run: z >= c1, when the test's history shows no wild single values;
//  - two runs: the previous run and this one both worse (each by half its noise or more, or where
//    single values run wild each beyond a threshold of its own, so one outlier never raises an
//    alert by itself), their mean z >= c2, c2 set by the exact chance of that event on noise. The
//    alert starts at the previous run, unless the previous run was barely worse (then at this one).
// An open alert stays a finding of every later run until the series is back at its old level for
// two runs running (it closes by itself: isBack) or someone acknowledges it (the new level becomes the baseline).
import { leaveOneOutTrimmedResiduals, madDegreesOfFreedom, madScale, median, moderatedScale, scalePrior, sortedCopy, sortedTrimmedMean, tQuantile, trimmedMean, trimmedMeanVarianceShare, type OwnScale, type ScalePrior } from './robust.ts';
import { ruleThresholds } from './thresholds.ts';
import { detectableChange, type DetectableChange } from './detectable.ts';
import { effectiveFamily, type SeriesFloors } from './family.ts';

/** One run's value of a series (the mean, when the run measured it more than once). */
export interface RunPoint {
  runId: string;
  tsMs: number;
  value: number;
}

/** An alert on a series that is still open: what its later values are judged back against. */
export interface OpenAlertState {
  id: string;
  /** The series' level before the change, and its noise (a fraction of the level). */
  level: number;
  scale: number;
  /** How much worse the series was when the alert opened, a fraction of that level. */
  size: number;
  firstRunId: string;
  /** The previous run was already back at the old level. */
  previousBack: boolean;
}

/** Which figure a series is: the gate's series, its findings and the alerts they open all name it so. */
export interface SeriesIdentity {
  seriesId: number;
  testId: string;
  metric: string;
  labels: Record<string, string | number>;
  unit: string;
  higherIsBetter: boolean;
}

export interface GateSeries extends SeriesIdentity {
  /** It can fail the gate (a headline figure or opted in); others are judged and shown only. */
  gated: boolean;
  /** Fraction: a change smaller than this never alerts, however significant (upstream's threshold). */
  threshold: number;
  /** The step the value was printed to (Metric.rounded): a breach half a step undoes is none. */
  rounded?: number;
  value: number;
  /** Baseline runs, oldest first: post-merge, this segment, the judged run not among them. */
  history: RunPoint[];
  /** The run just before the judged one, when it measured this series (inside or outside the history). */
  previous?: RunPoint;
  openAlert?: OpenAlertState;
  /**
   * A pre-merge run's series whose baseline branch has an open alert: the history is the runs
   * since the change (the branch's current level), and the noise is the alert's, measured before
   * it, so even one run at the new level is a level to judge against.
   */
  currentLevel?: { alertId: string; scale: number };
}

export interface GateOptions {
  /** Share of unchanged runs allowed to raise a new alert (DISAGG_GATE_ALPHA, default 0.05). */
  alpha: number;
  /** Runs a series' baseline needs before it is judged (DISAGG_GATE_MIN_RUNS, default 5). */
  minRuns: number;
  /** The judged run's id: the first run of an alert the one-run rule raises. */
  runId: string;
  /**
   * The family size when these series are part of a larger run judged as it goes (a test of a run
   * in progress): the correction uses the larger of this and the gating series given.
   */
  family?: number;
  /**
   * The run-wide estimates from the whole run's series, when these are only part of it (a test of
   * a run in progress, judged against estimates from its other tests' latest series): the noise
   * prior, the bad nights and the family then come from there.
   */
  runWide?: RunWide;
}

/** What the gate estimates from all of a run's series at once. */
export interface RunWide {
  /** The scale the run's series share (robust.ts scalePrior), or none with fewer than three. */
  prior: ScalePrior | undefined;
  /** Runs left out of every baseline as off together (bad nights). */
  outlierRuns: ReadonlySet<string>;
  /** Gating series with enough history (the correction's family size). */
  family: number;
}

export type GateStatus =
  /** Within the noise or the threshold. */
  | 'ok'
  /** Better than its level beyond the noise and the threshold (shown). */
  | 'improved'
  /** Worse, not (yet) significant for the run: the next run confirms or clears it. */
  | 'suspect'
  /** A new regression: an alert is opened. */
  | 'regression'
  /** An open alert whose series is still away from its old level. */
  | 'still-regressed'
  /** An open alert whose series is back at its old level: closed after two such runs. */
  | 'recovered'
  /** Not judged: too little history, or no usable level. */
  | 'unjudged';

export interface GateFinding extends SeriesIdentity {
  gated: boolean;
  value: number;
  /** The level the value is judged against (the trimmed mean of the baseline runs). */
  level: number;
  /** Relative change, in the metric's own terms: (value - level) / level (TTFT +0.2 = 20 % slower). */
  change: number;
  /** The noise as a fraction of the level, and how far the value is, in that noise. */
  scale: number;
  z: number;
  threshold: number;
  status: GateStatus;
  /** A regression (new or still open) that fails the gate: a gated series with an alert. */
  regression: boolean;
  /** Baseline runs the level came from. */
  runs: number;
  /** For a regression: the first bad run, and the last good one before it (an alert's commit range). */
  firstRunId?: string;
  lastGoodRunId?: string;
  /** The one-sided tail probability of the run's evidence, corrected for the run's gating series. */
  pValue?: number;
  alertId?: string;
  /** Why a change is not a regression, or how it was confirmed. */
  note: string;
  /** A judged series: the smallest worsening the gate catches on its first run and by its second (gate/detectable.ts). */
  detectable?: DetectableChange;
}

/** The run's verdict: every finding, and the numbers the correction used. */
export interface RunVerdict {
  findings: GateFinding[];
  /** Gating series judged (the correction's family size). */
  family: number;
  /** Runs left out of every baseline as off together (bad nights). */
  outlierRuns: string[];
  /** Tests whose history shows wild single values: they alert on two runs only. */
  heavyTailed: string[];
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
/** A distance in noise as read: beyond 1,000 it only says so (a series without noise). */
const zText = (z: number) => (z > 1000 ? '> 1000' : z.toFixed(1));

/** Worse as a positive fraction of the level, whatever the metric's direction. */
const worseness = (value: number, level: number, up: boolean) => ((up ? level - value : value - level) / Math.abs(level));

interface Prepared {
  series: GateSeries;
  baseline: RunPoint[];
  level: number;
  own: OwnScale;
  residuals: number[];
}

/**
 * Whether a run under an open alert is back at the level before the change: nearer that level than
 * the regressed one (less than half the alert's size worse), unless it is still measurably off, beyond
 * both the threshold and 2 of the old noise (a partial fix keeps the alert); two such runs running
 * close it. At 3 % noise a fixed 12 % regression reads back in 98 % of runs, and in 2 % while it
 * lasts. An alert of d noise reads back with chance normalTail(d / 2) per run while the regression
 * lasts: two runs running, about 0.2 % at the smallest change the gate alerts on (10 % at 3 %).
 * (Half the threshold and 1.5 noise, the rule before, kept a fixed series at 3 % noise red one
 * run in five until two runs happened to fall within 2.5 %.)
 */
const isBack = (worse: number, z: number, size: number, threshold: number) => worse < size / 2 && (worse < threshold || z < 2);

/** Two-sided normal tail of |z| >= 4 happens once in 16,000 values: a test whose history has it twice or more (and in 0.5 % of values) has wild values. */
const WILD_Z = 4;

/** Levels and own scales, then the runs that were off together, then again without them; the prior of what is left. */
function estimate(input: readonly GateSeries[], minRuns: number) {
  let prepared = input.map((s) => prepare(s, new Set()));
  const outlierRuns = offTogether(prepared);
  if (outlierRuns.size > 0) prepared = input.map((s) => prepare(s, outlierRuns));
  const prior = priorOf(prepared.filter((p) => p.baseline.length >= minRuns));
  return { prepared, outlierRuns, prior };
}

/**
 * A prepared series ready to judge: its noise moderated toward the run's prior, the scale it is
 * judged in (judgedScale) and its two runs' shared level (levelCorrelation).
 */
type Judged = Prepared & { moderated: OwnScale; scale: number; step: number; correlation: LevelCorrelation };

function judgedOf(prepared: readonly Prepared[], prior: ScalePrior | undefined, minRuns: number): Judged[] {
  return prepared.map((p) => {
    const moderated = moderatedScale(p.own, prior);
    return { ...p, moderated, ...judgedScale(p, moderated), correlation: levelCorrelation(p, minRuns) };
  });
}

/** A gating series the correction counts: enough history, a level, a noise. */
const judgeable = (j: Judged, minRuns: number) =>
  j.series.gated && !j.series.openAlert && j.baseline.length >= (j.series.currentLevel ? 1 : minRuns) && j.level !== 0 && Number.isFinite(j.moderated.scale);

/** The run-wide estimates of a whole run's series (for judging its tests one at a time against them). */
export function runWideEstimates(input: readonly GateSeries[], options: Pick<GateOptions, 'alpha' | 'minRuns'>): RunWide {
  const { prepared, outlierRuns, prior } = estimate(input, options.minRuns);
  const judged = judgedOf(prepared, prior, options.minRuns);
  return { prior, outlierRuns, family: familyOf(judged, heavyTailedTests(judged), options) };
}

/**
 * Tests whose history shows wild single values: each series' residuals in its own moderated noise,
 * two or more beyond WILD_Z and at least 0.5 % of the test's residuals.
 */
function heavyTailedTests(judged: readonly Judged[]): Set<string> {
  const byTest = new Map<string, { wild: number; all: number }>();
  for (const j of judged) {
    const t = byTest.get(j.series.testId) ?? { wild: 0, all: 0 };
    // a series without noise has no wild values (its residuals are rounding errors of zero)
    const wildAbove = j.moderated.scale > 0 ? WILD_Z * j.moderated.scale : Infinity;
    for (const r of j.residuals) {
      t.all++;
      if (Math.abs(r) > wildAbove) t.wild++;
    }
    byTest.set(j.series.testId, t);
  }
  return new Set([...byTest].filter(([, t]) => t.wild >= 2 && t.wild > 0.005 * t.all).map(([testId]) => testId));
}

/** The correction's family: the judgeable gating series, each by its chance to alarm on noise (family.ts). */
function familyOf(judged: readonly Judged[], heavy: ReadonlySet<string>, options: Pick<GateOptions, 'alpha' | 'minRuns'>): number {
  const members = judged
    .filter((j) => judgeable(j, options.minRuns))
    .map((j): SeriesFloors => {
      const noise = Math.max(j.moderated.scale, 1e-9);
      return { lift: j.scale / noise, floor: (j.series.threshold + j.step / 2 / Math.abs(j.level)) / noise, rho: j.correlation.rho, heavy: heavy.has(j.series.testId) };
    });
  return effectiveFamily(members, options.alpha);
}

export function judgeRun(input: readonly GateSeries[], options: GateOptions): RunVerdict {
  // 1. Levels and own scales, the bad nights and the noise prior: this run's, or the whole run's.
  const wide = options.runWide;
  const dropped = wide && new Set(wide.outlierRuns);
  const { prepared, outlierRuns, prior } = wide ? { prepared: input.map((s) => prepare(s, dropped!)), outlierRuns: wide.outlierRuns, prior: wide.prior } : estimate(input, options.minRuns);
  const judged = judgedOf(prepared, prior, options.minRuns);
  // 2. Wild single values, per test.
  const heavy = heavyTailedTests(judged);
  // 3. The family: gating series with enough history, each by its chance to alarm on noise.
  const family = Math.max(familyOf(judged, heavy, options), options.family ?? 0, wide?.family ?? 0);
  const findings = judged.map((j) => decide(j, family, heavy.has(j.series.testId), options));
  return { findings, family, outlierRuns: [...outlierRuns], heavyTailed: [...heavy] };
}

function prepare(series: GateSeries, dropped: Set<string>): Prepared {
  const kept = (p: RunPoint) => Number.isFinite(p.value) && !(dropped.size && dropped.has(p.runId));
  const baseline = series.history.every(kept) ? series.history : series.history.filter(kept);
  const values = new Array<number>(baseline.length);
  for (let k = 0; k < baseline.length; k++) values[k] = baseline[k].value;
  const sorted = sortedCopy(values);
  const level = sortedTrimmedMean(sorted);
  // Relative residuals, each against the level of the others (robust.ts leaveOneOutTrimmedResiduals).
  const residuals = level ? leaveOneOutTrimmedResiduals(values, sorted) : [];
  for (let k = 0; k < residuals.length; k++) residuals[k] /= Math.abs(level);
  const measured = { scale: madScale(residuals, 0), df: madDegreesOfFreedom(residuals.length) };
  // Few runs since a change on the baseline branch: the noise its alert measured before it.
  const known = series.currentLevel && !(residuals.length >= 5) ? { scale: series.currentLevel.scale, df: madDegreesOfFreedom(5) } : undefined;
  return { series, baseline, level, own: known ?? measured, residuals };
}

/**
 * The run-wide estimates (the noise prior, the bad nights) from at most this many series, spread
 * evenly over the run: 2,000 series of 20 runs pin them as well as 50,000 do, at a 25th of the cost.
 */
const POOLED_SERIES = 2000;
const spread = <T>(xs: T[]) => (xs.length <= POOLED_SERIES ? xs : xs.filter((_, k) => k % Math.ceil(xs.length / POOLED_SERIES) === 0));

const priorOf = (prepared: Prepared[]) => {
  const sample = spread(prepared);
  return scalePrior(
    sample.map((p) => p.own),
    sample.flatMap((p) => p.residuals),
  );
};

/**
 * Runs in which at least 3 series sit, and most of them more than 3 of their own noise, worse at
 * once (worse in each figure's own direction: a bad night lowers bandwidths and raises latencies).
 */
function offTogether(prepared: Prepared[]): Set<string> {
  const sample = spread(prepared);
  const prior = priorOf(sample.filter((p) => p.baseline.length >= 3));
  const byRun = new Map<string, number[]>();
  for (const p of sample) {
    const scale = moderatedScale(p.own, prior).scale;
    if (!(scale > 0) || !p.level) continue;
    for (const point of p.baseline) {
      const z = worseness(point.value, p.level, p.series.higherIsBetter) / scale;
      if (!byRun.has(point.runId)) byRun.set(point.runId, []);
      byRun.get(point.runId)!.push(z);
    }
  }
  const off = new Set<string>();
  for (const [runId, zs] of byRun) if (zs.length >= 3 && Math.abs(median(zs)) > 3) off.add(runId);
  return off;
}

/** The one-sided p-value of z under Student's t with df degrees of freedom (by bisection on tQuantile). */
function tailOf(z: number, df: number): number {
  if (!(z > 0)) return 1;
  let lo = 1e-300;
  let hi = 0.5;
  for (let k = 0; k < 80; k++) {
    const mid = Math.sqrt(lo * hi);
    if (tQuantile(1 - mid, df) > z) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * The scale a series is judged in, a fraction of its level: its noise, or half the print's step
 * where that is coarser (the value may lie anywhere within it).
 */
function judgedScale(j: Prepared, noise: OwnScale): { scale: number; step: number } {
  const step = j.series.rounded ?? 0;
  return { scale: Math.max(noise.scale, step / 2 / Math.abs(j.level), 1e-9), step };
}

/**
 * The two-run rule's runs against the level of the runs before them (the previous run is no
 * baseline of itself). Both are judged against the same estimated level, so their z share its
 * error (its variance a share of one run's: robust.ts trimmedMeanVarianceShare), a correlation rho.
 * previousJudged: the previous run was judged against the runs before it, as its pair is now (had
 * it crossed the one-run bound, its alert would be open and the series judged against it).
 */
interface LevelCorrelation {
  rho: number;
  beforeRuns: number;
  previousJudged: boolean;
}

function levelCorrelation(j: Prepared, minRuns: number): LevelCorrelation {
  const prev = j.series.previous;
  const prevInBaseline = prev !== undefined && j.baseline.some((p) => p.runId === prev.runId);
  const beforeRuns = prevInBaseline ? j.baseline.length - 1 : j.baseline.length;
  const levelShare = trimmedMeanVarianceShare(beforeRuns);
  return { rho: levelShare / (1 + levelShare), beforeRuns, previousJudged: prevInBaseline && beforeRuns >= minRuns };
}

function decide(j: Judged, family: number, heavy: boolean, options: GateOptions): GateFinding {
  const s = j.series;
  const noise = j.moderated;
  const up = s.higherIsBetter;
  const base = { seriesId: s.seriesId, testId: s.testId, metric: s.metric, labels: s.labels, unit: s.unit, higherIsBetter: up, gated: s.gated, value: s.value, threshold: s.threshold, runs: j.baseline.length };
  // An open alert: the value is judged back against the level the series had before the change.
  if (s.openAlert) {
    const a = s.openAlert;
    const worse = worseness(s.value, a.level, up);
    const z = a.scale > 0 ? worse / a.scale : worse > 0 ? Infinity : 0;
    const back = isBack(worse, z, a.size, s.threshold);
    const change = (s.value - a.level) / Math.abs(a.level);
    const common = { ...base, level: a.level, change, scale: a.scale, z, alertId: a.id, firstRunId: a.firstRunId };
    if (back && a.previousBack) return { ...common, status: 'recovered', regression: false, note: `back at its level before the change for two runs: alert ${a.id} closes` };
    if (back) return { ...common, status: 'recovered', regression: false, note: `back at its level before the change (${pct(change)}): alert ${a.id} closes if the next run is too` };
    return { ...common, status: 'still-regressed', regression: s.gated, note: `alert ${a.id} open since run ${a.firstRunId}: ${pct(change)} against the level before it; \`disagg-bench history ack ${a.id} --reason ...\` accepts the new level` };
  }
  const minRuns = s.currentLevel ? 1 : options.minRuns;
  if (j.baseline.length < minRuns || !j.level || !Number.isFinite(noise.scale)) {
    const why = !j.level && j.baseline.length ? 'its level is 0: no relative change' : `${j.baseline.length} of ${minRuns} baseline run(s): not judged yet`;
    const level = Number.isFinite(j.level) ? j.level : Number.NaN;
    return { ...base, level, change: level ? (s.value - level) / Math.abs(level) : 0, scale: noise.scale, z: 0, status: 'unjudged', regression: false, note: why };
  }
  // The print's rounding: the value may lie half a step in the better direction.
  const { scale, step } = j;
  const best = s.value + (up ? step / 2 : -step / 2);
  const worse = worseness(s.value, j.level, up);
  const worseAtBest = worseness(best, j.level, up);
  const z = worse / scale;
  const change = (s.value - j.level) / Math.abs(j.level);
  const n = Math.max(family, 1);
  // The two-run rule: the previous run and this one, both worse, judged together against the
  // level of the runs before them.
  const prev = s.previous;
  const { rho, beforeRuns, previousJudged } = j.correlation;
  const rules = ruleThresholds(options.alpha, n, rho, noise.df, heavy, previousJudged);
  const oneRun = heavy ? ruleThresholds(options.alpha, n, rho, noise.df, false).oneRun : rules.oneRun;
  const detectable = detectableChange({ rules, scale, threshold: s.threshold, rho, higherIsBetter: up, heavy });
  const common = { ...base, level: j.level, change, scale, z, detectable };
  if (-worse > s.threshold && -z >= oneRun) return { ...common, status: 'improved', regression: false, note: `better than its level beyond the noise (${pct(-worse)})` };
  if (worse <= 0) return { ...common, status: 'ok', regression: false, note: 'at or better than its level' };
  const beyondThreshold = worseAtBest > s.threshold;
  const each = rules.each;
  let twoRuns = false;
  let meanZ = Number.NaN;
  let beganBefore = false;
  if (prev && z >= each && worseness(prev.value, j.level, up) / scale >= each) {
    const before = j.baseline.filter((p) => p.runId !== prev.runId);
    const level = trimmedMean(before.map((p) => p.value));
    const zNow = worseness(s.value, level, up) / scale;
    const zPrev = worseness(prev.value, level, up) / scale;
    meanZ = (zNow + zPrev) / Math.sqrt(2 + 2 * rho);
    // Where the change began, by least squares over the two runs: at the previous run (one step
    // of their mean) when that fits better than at this run alone (the previous run at the level):
    // (zNow - zPrev)^2 / 2 <= zPrev^2, i.e. zNow <= (1 + sqrt 2) zPrev.
    beganBefore = zNow <= (1 + Math.SQRT2) * zPrev;
    const meanWorse = (worseness(best, level, up) + worseness(prev.value, level, up)) / 2;
    twoRuns = beforeRuns >= options.minRuns - 1 && Math.min(zNow, zPrev) >= each && meanZ >= rules.twoRun && meanWorse > s.threshold;
  }
  const oneRunHit = !heavy && z >= oneRun && beyondThreshold;
  if ((oneRunHit || twoRuns) && s.gated) {
    // This run alone is evidence enough: the change begins here (the previous run's share of the
    // two-run mean is no sign it began there). Only two runs together: where they say it began.
    const confirmed = oneRunHit ? 'one run' : 'two runs';
    const atPrevious = !oneRunHit && beganBefore;
    const firstRunId = atPrevious ? prev!.runId : options.runId;
    const goodRun = atPrevious ? j.baseline.findLast((p) => p.runId !== prev?.runId)?.runId : (prev?.runId ?? j.baseline.at(-1)?.runId);
    // Šidák, as the thresholds: the chance that any of the run's n gating series goes this far on noise.
    const pValue = -Math.expm1(n * Math.log1p(-(oneRunHit ? tailOf(z, noise.df) : tailOf(meanZ, noise.df))));
    return { ...common, status: 'regression', regression: true, firstRunId, ...(goodRun ? { lastGoodRunId: goodRun } : {}), pValue, note: `confirmed by ${confirmed} (z ${zText(oneRunHit ? z : meanZ)}, p ${pValue.toPrecision(2)} for the run)${heavy ? '; its test has wild single values: two runs needed' : ''}` };
  }
  if (oneRunHit || twoRuns) return { ...common, status: 'suspect', regression: false, note: `${pct(worse)} worse beyond the noise; not a gating figure (headline figures gate; a config or DISAGG_GATE_METRICS opts others in)` };
  if (!beyondThreshold) return { ...common, status: 'ok', regression: false, note: step && worse > s.threshold ? `within the print's rounding: printed to ${step}, not beyond the threshold` : `${pct(worse)} worse, within the threshold (${pct(s.threshold)})` };
  if (z >= each) return { ...common, status: 'suspect', regression: false, note: `${pct(worse)} worse (z ${zText(z)}), not significant for a run of ${n} gating figure(s)${heavy ? '' : ` (one run needs z ${oneRun.toFixed(1)})`}: the next run confirms or clears it` };
  return { ...common, status: 'ok', regression: false, note: `${pct(worse)} worse, within the noise (${pct(scale)})` };
}
