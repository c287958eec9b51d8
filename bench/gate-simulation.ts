// How often the regression gate raises an alert on noise alone, how fast it catches a real change,
// and whether an alert lives until it is dealt with: the figures a perf team decides its trust on.
// The suite is a real nixl quick-start run of this project (bench/fixtures/nixl-quickstart-results.json:
// 13 measured tests, 821 figures with a direction, 31 gating headline entries); one post-merge
// run a day, every value carrying run-to-run noise.
// 1. The gate's own code in-process (framework/history/run-verdict.ts judgeRecords over an
//    in-memory source: the same assembly and core the CLI runs), thousands of trials per case.
// 2. The real CLI and DuckDB (bin/disagg-bench.js history import / regressions / alerts / ack in
//    child processes): its verdicts agree with (1) on the same data, and an alert's life.
// Command line: USAGE below (--help prints it).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { Alert } from '../framework/history/alert-store.ts';
import { judgeRun, type GateFinding, type GateSeries, type OpenAlertState, type RunPoint } from '../framework/history/gate/judge-run.ts';
import type { DetectableChange } from '../framework/history/gate/detectable.ts';
import { idOf } from '../framework/history/regression.ts';
import { judgeRecords, runWideOf, type GateSource } from '../framework/history/run-verdict.ts';
import type { TestRecord } from '../framework/results/json.ts';
import { DEFAULT_GATE } from '../framework/settings.ts';
import { appendResult, benchDir, printGoals, printRunHeader, printTable, type Goal } from './lib/report.ts';
import { benchArgs, smoke } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';
import { median } from './lib/stats.ts';

const USAGE = `usage: node --import tsx bench/gate-simulation.ts [--trials 2000] [--cli-trials 6] [--noise 3] [--seed 1] [--smoke]
  --trials of the gate's own code per case, --cli-trials through the real CLI and DuckDB, at --noise
  percent of run-to-run noise, seeded. --smoke: 20 trials, none through the CLI, no figure kept.`;

const commandLine = benchOptions({
  args: benchArgs(['--trials', '20', '--cli-trials', '0']),
  options: { trials: { type: 'string', default: '2000' }, 'cli-trials': { type: 'string', default: '6' }, noise: { type: 'string', default: '3' }, seed: { type: 'string', default: '1' } },
}, USAGE);
const TRIALS = commandLine.wholeNumber('trials');
/** Trials of the cases that are shown, not goals. */
const SHOWN = Math.max(1, Math.round(TRIALS / 4));
const CLI_TRIALS = commandLine.wholeNumber('cli-trials', { min: 0 });
const NOISE = commandLine.number('noise') / 100;
const DAY_MS = 86_400_000;
const DAY0 = Date.UTC(2026, 9, 1);

// A seeded generator (mulberry32) and normal deviates (Box-Muller): the same figures every time.
let state = commandLine.wholeNumber('seed', {}) | 0;
const uniform = () => {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const normal = () => Math.sqrt(-2 * Math.log(uniform() || 1e-12)) * Math.cos(2 * Math.PI * uniform());
type Noise = () => number;
const gaussian: Noise = () => NOISE * normal();
/** 1 value in 20 off by +-20 %, the rest Gaussian. */
const heavy: Noise = () => (uniform() < 0.05 ? (uniform() < 0.5 ? 0.2 : -0.2) : NOISE * normal());

const shape: TestRecord[] = (JSON.parse(readFileSync(path.join(benchDir, 'fixtures/nixl-quickstart-results.json'), 'utf8')).records as TestRecord[]).filter((r) => r.verdict === 'passed' && r.metrics.length);
/** Each figure's series id (the store's), computed once: every run of the suite has the same. */
const shapeIds = shape.map((r) => r.metrics.map((m) => (m.higherIsBetter === undefined ? undefined : idOf(r, r.run!.identity, m))));
/** The gated figure a step is put on: the first test's first headline entry. */
const stepped = { testId: shape[0].testId, key: shape[0].run!.gate![0], gate: shape[0].run!.gate!.length };
/** A figure as a gate entry names it: the metric and its labels in name order. */
const figureKey = (metric: string, labels: object) => `${metric}${JSON.stringify(Object.fromEntries(Object.entries(labels).sort()))}`;
const isSteppedFigure = (testId: string, metric: string, labels: object) => testId === stepped.testId && figureKey(metric, labels) === stepped.key;
const isStepped = (r: TestRecord, m: TestRecord['metrics'][number]) => isSteppedFigure(r.testId, m.name, m.labels);

interface Day {
  noise: Noise;
  /** Fraction the stepped figure is worse by (its direction applied). */
  step?: number;
  /** Every figure worse by this fraction (a bad night). */
  offAll?: number;
}

/** One post-merge run of the suite on day `d`. */
function runOf(d: number, day: Day): TestRecord[] {
  const start = DAY0 + d * DAY_MS;
  return shape.map((r) => ({
    ...r,
    jobId: `job-${d}`,
    timing: { start: new Date(start).toISOString(), end: new Date(start + 60_000).toISOString(), durationSec: 60 },
    regression: undefined,
    metrics: r.metrics.map((m) => {
      const worse = (isStepped(r, m) ? (day.step ?? 0) : 0) + (day.offAll ?? 0);
      const factor = m.higherIsBetter === false ? 1 + worse : 1 - worse;
      return { ...m, value: m.value * (1 + day.noise()) * factor };
    }),
    run: { ...r.run!, id: `day${d}`, kind: 'post-merge', branch: 'main', commit: `c${String(d).padStart(4, '0')}` },
  }));
}

/** The history's runs in memory, by series, as the store returns them; no alerts. */
class MemorySource implements GateSource {
  readonly series = new Map<number, RunPoint[]>();
  /** The run added last: each test's latest stored record. */
  latest: TestRecord[] = [];
  add(run: TestRecord[]): void {
    this.latest = run;
    run.forEach((r, i) =>
      r.metrics.forEach((m, k) => {
        const id = shapeIds[i][k];
        if (id === undefined) return;
        if (!this.series.has(id)) this.series.set(id, []);
        this.series.get(id)!.push({ runId: r.run!.id, tsMs: Date.parse(r.timing.end), value: m.value });
      }),
    );
  }
  async runValues(filter: { points: { seriesId: number }[] }) {
    return new Map(filter.points.map((p) => [p.seriesId, this.series.get(p.seriesId) ?? []]));
  }
  readonly alerts = { list: async (): Promise<Alert[]> => [] };
}

const judge = (source: GateSource, run: TestRecord[]) =>
  judgeRecords(source, run.map((record) => ({ record, identity: record.run!.identity, gate: record.run!.gate ?? [] })), { runId: run[0].run!.id, runKind: 'post-merge', branch: 'main', gate: DEFAULT_GATE });

/**
 * As a run in progress judges each test when it ends (framework/history/test-check.ts): its record
 * alone, against the run-wide estimates from the tests' latest stored records. `only`: judge that
 * test alone.
 */
async function judgeAsTestsEnd(source: MemorySource, run: TestRecord[], only?: string) {
  const options = { runId: run[0].run!.id, runKind: 'post-merge' as const, branch: 'main', gate: DEFAULT_GATE };
  const stored = source.latest.map((record) => ({ record, identity: record.run!.identity, gate: record.run!.gate ?? [] }));
  const runWide = await runWideOf(source, stored, { ...options, anchorMs: Date.parse(run[0].timing.start) });
  const findings = [];
  for (const record of run.filter((r) => only === undefined || r.testId === only)) {
    const gate = record.run!.gate ?? [];
    const judged = await judgeRecords(source, [{ record, identity: record.run!.identity, gate }], { ...options, ...(runWide ? { runWide } : { family: gate.length * run.length }) });
    findings.push(...judged.verdict.findings);
  }
  return { verdict: { findings } };
}
const judgeAsItEnds = (source: MemorySource, run: TestRecord[]) => judgeAsTestsEnd(source, run, stepped.testId);

/** The sizes the gate stated for the stepped figure, one per trial that asked. */
const statedSizes: DetectableChange[] = [];

/**
 * A trial: `history` post-merge days, then the judged days; the judged run that first alerted
 * (0-based), or -1. `judged` as a function: of the smallest worsening the gate states it catches in
 * the stepped figure (a noise-only run judged first, and dropped, says it).
 */
async function trial(history: Day[], judged: Day[] | ((stated: DetectableChange) => Day[]), judgeRun: (source: MemorySource, run: TestRecord[]) => Promise<{ verdict: { findings: GateFinding[] } }> = judge): Promise<number> {
  const source = new MemorySource();
  history.forEach((day, d) => source.add(runOf(d, day)));
  if (typeof judged === 'function') {
    const probe = await judge(source, runOf(history.length, { noise: gaussian }));
    const stated = probe.verdict.findings.find((f) => isSteppedFigure(f.testId, f.metric, f.labels))?.detectable;
    if (!stated) throw new Error('the stepped figure was not judged: no stated size');
    statedSizes.push(stated);
    judged = judged(stated);
  }
  for (let k = 0; k < judged.length; k++) {
    const run = runOf(history.length + k, judged[k]);
    const verdict = await judgeRun(source, run);
    const alerted = verdict.verdict.findings.some((f) => f.regression && isSteppedFigure(f.testId, f.metric, f.labels));
    if (alerted) return k;
    source.add(run);
  }
  return -1;
}

/**
 * A noise-only night in a nightly stream: `nights` post-merge runs, then one judged run and the
 * counted run after it. Whether the counted run raises a new alert: a series whose alert the run
 * before opened is still open (the store judges it against that alert, not afresh).
 */
async function raisesNewAlert(nights: number, day: Day, judgeRun: (source: MemorySource, run: TestRecord[]) => Promise<{ verdict: { findings: GateFinding[] } }> = judge): Promise<boolean> {
  const source = new MemorySource();
  for (let d = 0; d < nights - 1; d++) source.add(runOf(d, day));
  const before = runOf(nights - 1, day);
  const open = new Set((await judgeRun(source, before)).verdict.findings.filter((f) => f.regression).map((f) => f.seriesId));
  source.add(before);
  const counted = await judgeRun(source, runOf(nights, day));
  return counted.verdict.findings.some((f) => f.regression && !open.has(f.seriesId));
}

const days = (n: number, day: Day) => Array.from({ length: n }, () => day);
async function share(trials: number, make: () => Promise<boolean>): Promise<number> {
  let hits = 0;
  for (let t = 0; t < trials; t++) if (await make()) hits++;
  return Number(((hits / trials) * 100).toFixed(1));
}

printRunHeader();
console.log(`suite: ${shape.length} tests, ${shape.reduce((a, r) => a + r.metrics.filter((m) => m.higherIsBetter !== undefined).length, 0)} figures with a direction, ${shape.reduce((a, r) => a + (r.run?.gate?.length ?? 0), 0)} gate entries; stepped: ${stepped.testId} ${stepped.key}`);
const g = { noise: gaussian };
/** The stated sizes are caught at least this often (they say 95 %, by normal approximations). */
const STATED_AT_LEAST = 93;
const rows: Array<[string, number]> = [];
const measure = async (what: string, trials: number, make: () => Promise<boolean>) => {
  const value = await share(trials, make);
  rows.push([what, value]);
  console.log(`${what}: ${value}%`);
  return value;
};
const noise14 = await measure('noise only, 3 % Gaussian, 14 days: runs raising a new alert (%)', TRIALS, () => raisesNewAlert(14, g));
await measure('noise only, 3 % Gaussian, 7 days (%)', SHOWN, () => raisesNewAlert(7, g));
await measure('noise only, 3 % Gaussian, 30 days (%)', SHOWN, () => raisesNewAlert(30, g));
const heavy14 = await measure('noise only, heavy-tailed (1 in 20 at +-20 %), 14 days (%)', TRIALS, () => raisesNewAlert(14, { noise: heavy }));
await measure('noise only, heavy-tailed, 30 days (%)', SHOWN, () => raisesNewAlert(30, { noise: heavy }));
const first15 = await measure('15 % step, alerted on its first run (%)', TRIALS, async () => (await trial(days(14, g), [{ ...g, step: 0.15 }])) === 0);
const by2nd10 = await measure('10 % step, alerted by its second run (%)', TRIALS, async () => (await trial(days(14, g), [{ ...g, step: 0.1 }, { ...g, step: 0.1 }])) >= 0);
await measure('10 % step, alerted on its first run (%)', SHOWN, async () => (await trial(days(14, g), [{ ...g, step: 0.1 }])) === 0);
// The sizes the gate states it catches (95 %), checked against its own code: a step of exactly that size.
const statedFirst = await measure('a step of the size the gate states for one run, alerted on its first run (%)', TRIALS, async () => (await trial(days(14, g), (s) => [{ ...g, step: s.oneRun }])) === 0);
const statedBy2nd = await measure('a step of the size the gate states for two runs, alerted by its second run (%)', TRIALS, async () => (await trial(days(14, g), (s) => [{ ...g, step: s.byTwoRuns }, { ...g, step: s.byTwoRuns }])) >= 0);
const outlierDay = await measure('15 % step after one bad day (all 20 % off) among 14, first run (%)', TRIALS, async () => {
  const bad = Math.floor(uniform() * 14);
  const history = days(14, g).map((day, d) => (d === bad ? { ...day, offAll: 0.2 } : day));
  return (await trial(history, [{ ...g, step: 0.15 }])) === 0;
});
// The same cases judged as a run in progress judges them: each test alone, as it ends.
await measure('noise only, 14 days, judged as each test ends: runs raising a new alert (%)', SHOWN, () => raisesNewAlert(14, g, judgeAsTestsEnd));
await measure('15 % step, first run, judged as its test ends (%)', SHOWN, async () => (await trial(days(14, g), [{ ...g, step: 0.15 }], judgeAsItEnds)) === 0);
await measure('10 % step, by its second run, judged as its test ends (%)', SHOWN, async () => (await trial(days(14, g), [{ ...g, step: 0.1 }, { ...g, step: 0.1 }], judgeAsItEnds)) >= 0);
// An open alert run by run, its state carried from each run to the next as the store carries it
// (judge-run.ts OpenAlertState; the store's own bookkeeping is the CLI's part below): opened for a
// step of `size` on the stepped figure at the run's noise, then `runs` runs still stepped, or fixed.
// Whether the alert is still open after them, and the first run it was closed after.
function alertAfter(size: number, fixed: boolean, runs: number): { open: boolean; closedAfter: number } {
  const open: OpenAlertState = { id: 'a1', level: 1, scale: NOISE, size, firstRunId: 'day14', previousBack: false };
  for (let k = 0; k < runs; k++) {
    const value = (1 + gaussian()) * (fixed ? 1 : 1 - size);
    const series: GateSeries = { seriesId: 0, testId: stepped.testId, metric: stepped.key, labels: {}, unit: '', higherIsBetter: true, gated: true, threshold: 0.05, value, history: [], openAlert: { ...open } };
    const finding = judgeRun([series], { alpha: DEFAULT_GATE.alpha, minRuns: DEFAULT_GATE.minRuns, runId: `day${15 + k}` }).findings[0];
    if (finding.status === 'recovered' && open.previousBack) return { open: false, closedAfter: k + 1 };
    open.previousBack = finding.status === 'recovered';
  }
  return { open: true, closedAfter: Infinity };
}
const fixedCloses = await measure('a 20 % step fixed, 3 % noise: its alert closed by the second run after the fix (%)', TRIALS, async () => alertAfter(0.2, true, 2).closedAfter <= 2);
await measure('a 12 % step fixed: its alert closed by the second run (%)', SHOWN, async () => alertAfter(0.12, true, 2).closedAfter <= 2);
const lastingOpen = await measure('a lasting 20 % step: its alert open through 20 runs (%)', TRIALS, async () => alertAfter(0.2, false, 20).open);
await measure('a lasting 10 % step: its alert open through 20 runs (%)', SHOWN, async () => alertAfter(0.1, false, 20).open);
const statedMedian = (pick: (s: DetectableChange) => number) => Number((median(statedSizes.map(pick)) * 100).toFixed(1));
console.log(`the stepped figure's stated sizes, median of ${statedSizes.length} trials: ${statedMedian((s) => s.oneRun)} % on one run, ${statedMedian((s) => s.byTwoRuns)} % by two`);
printTable('gate simulation (in-process, the CLI\'s own judging code)', ['case', '%'], rows);

// 2. Through the real CLI and DuckDB.
const cli = await cliChecks(CLI_TRIALS);

const goals: Goal[] = [
  { what: 'noise-only runs alerting, 3 % Gaussian, 14 days (%)', value: noise14, limit: 5, atMost: true },
  { what: 'noise-only runs alerting, heavy-tailed (%)', value: heavy14, limit: 10, atMost: true },
  { what: '10 % step alerted by the second run (%)', value: by2nd10, limit: 95, atMost: false },
  { what: '15 % step alerted on the first run (%)', value: first15, limit: 95, atMost: false },
  { what: "a step of the gate's stated one-run size alerted on its first run (%; stated: 95, normal approximations)", value: statedFirst, limit: STATED_AT_LEAST, atMost: false },
  { what: "a step of the gate's stated two-run size alerted by its second run (%)", value: statedBy2nd, limit: STATED_AT_LEAST, atMost: false },
  { what: 'detection change after one outlier day (points)', value: Number(Math.abs(first15 - outlierDay).toFixed(1)), limit: 5, atMost: true },
  { what: 'a lasting 20 % step: its alert open through 20 runs (%)', value: lastingOpen, limit: 100, atMost: false },
  { what: 'a fixed 20 % step: its alert closed by the second run after the fix (%)', value: fixedCloses, limit: 90, atMost: false },
  ...cli.goals,
];
const met = printGoals(goals);
appendResult('gate-simulation', { trials: TRIALS, noisePercent: NOISE * 100, cases: Object.fromEntries(rows), cli: cli.figures }, goals);
// --smoke's 20 trials say nothing of a goal (tests/bench/smoke.test.ts asks only that it runs)
process.exitCode = met || smoke ? 0 : 1;

/** The CLI in child processes on a DuckDB file: verdicts as in-process, and one alert's whole life. */
async function cliChecks(trials: number): Promise<{ goals: Goal[]; figures: Record<string, unknown> }> {
  if (trials === 0) return { goals: [], figures: {} };
  const root = path.dirname(benchDir);
  const scratch = mkdtempSync(path.join(tmpdir(), 'gate-sim-'));
  try {
    const history = (db: string, args: string[], env: Record<string, string> = {}) =>
      execa('node', [path.join(root, 'bin/disagg-bench.js'), 'history', ...args], { env: { DISAGG_HISTORY: db, WORK_DIR: root, OUTPUT_PATH: scratch, ...env }, reject: false, all: true });
    const file = (name: string, run: TestRecord[]) => {
      const f = path.join(scratch, name);
      writeFileSync(f, JSON.stringify({ version: 1, updated: new Date().toISOString(), records: run }));
      return f;
    };
    // Agreement: a trial's history and judged run, in memory and through the CLI.
    let agree = 0;
    for (let t = 0; t < trials; t++) {
      const db = path.join(scratch, `agree-${t}.duckdb`);
      const source = new MemorySource();
      const past = Array.from({ length: 14 }, (_, d) => runOf(d, g));
      for (const run of past) source.add(run);
      const judged = runOf(14, t % 2 ? { ...g, step: 0.12 } : g);
      await history(db, ['import', ...past.map((run, d) => file(`t${t}-d${d}.json`, run))]);
      await history(db, ['import', file(`t${t}-judged.json`, judged)]);
      const r = await history(db, ['regressions', '--json']);
      if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`history regressions exited ${r.exitCode}: ${r.all}`);
      // The store judged each past night as it was imported: a noise alert one of them opened is
      // still open (or closing) on the judged run there, and its series is judged against it; the
      // in-memory source keeps no alerts. Those series are left out of both sides.
      const cli = (JSON.parse(r.stdout) as { findings: { testId: string; metric: string; labels: object; status?: string; regression: boolean }[] }).findings;
      const key = (f: { testId: string; metric: string; labels: object }) => `${f.testId} ${figureKey(f.metric, f.labels)}`;
      const underPastAlert = new Set(cli.filter((f) => f.status === 'still-regressed' || f.status === 'recovered').map(key));
      const theirs = cli.filter((f) => f.regression && !underPastAlert.has(key(f))).map(key).sort();
      const mine = (await judge(source, judged)).verdict.findings.filter((f) => f.regression && !underPastAlert.has(key(f))).map(key).sort();
      if (JSON.stringify(theirs) === JSON.stringify(mine)) agree++;
      else console.log(`trial ${t}: in-process ${mine.join(', ') || 'no regression'}; CLI ${theirs.join(', ') || 'no regression'}`);
      if (underPastAlert.size) console.log(`trial ${t}: ${underPastAlert.size} figure(s) under an alert a past night opened, left out of the comparison`);
    }
    // An alert's life: a lasting 20 % step is shown by every later run until acknowledged; a fix
    // closes it. Judged on the stepped figure alone (a noise alert elsewhere is not its life).
    const steppedFinding = (findings: { testId: string; metric: string; labels: Record<string, unknown>; regression: boolean; alertId?: string }[]) =>
      findings.find((f) => isSteppedFigure(f.testId, f.metric, f.labels));
    // `nights` of history at `noise`, then `runs` runs of a `size` step (none from run `fixAfter` on);
    // acknowledged after run 4 when neither fixed nor `noAck`.
    const life = async (fixAfter: number | undefined, { size = 0.2, noise = 0.01, nights = 10, runs = 6, noAck = false } = {}) => {
      const name = `${fixAfter ?? 'ack'}-${size}-${noise}`;
      const db = path.join(scratch, `life-${name}.duckdb`);
      const quiet = { noise: () => noise * normal() };
      await history(db, ['import', ...Array.from({ length: nights }, (_, d) => file(`l${name}-d${d}.json`, runOf(d, quiet)))]);
      const shown: number[] = [];
      for (let k = 0; k < runs; k++) {
        const step = fixAfter !== undefined && k >= fixAfter ? 0 : size;
        await history(db, ['import', file(`l${name}-j${k}.json`, runOf(nights + k, { ...quiet, step }))]);
        const verdict = JSON.parse((await history(db, ['regressions', '--json'])).stdout) as { findings: Parameters<typeof steppedFinding>[0] };
        const mine = steppedFinding(verdict.findings);
        shown.push(mine?.regression ? 1 : 0);
        if (fixAfter === undefined && !noAck && k === 3 && mine?.alertId) await history(db, ['ack', mine.alertId, '--reason', 'accepted in the simulation']);
      }
      const all = (JSON.parse((await history(db, ['alerts', '--json'])).stdout) as { alerts: Alert[] }).alerts;
      const open = all.filter((a) => a.testId === stepped.testId && a.metric === stepped.key.replace(/\{.*$/, '')).length;
      return { shown, open };
    };
    const acked = await life(undefined);
    const fixed = await life(3);
    // The nightly case: 14 nights at the run's noise, then a lasting 15 % step nobody acts on.
    const nightly = await life(undefined, { size: 0.15, noise: NOISE, nights: 14, runs: 4, noAck: true });
    console.log(`CLI: ${agree} of ${trials} trials gave the in-process verdict; the stepped figure regressed (1) or not (0) run by run: a lasting step acknowledged after run 4: ${acked.shown.join(' ')}, ${acked.open} of its alerts open; fixed at run 4: ${fixed.shown.join(' ')}, ${fixed.open} open; a lasting 15 % step at ${NOISE * 100} % noise after 14 nights, not acknowledged: ${nightly.shown.join(' ')}, ${nightly.open} open`);
    return {
      figures: { agree, trials, ackedRegressed: acked.shown, fixedRegressed: fixed.shown, nightly15Regressed: nightly.shown },
      goals: [
        { what: 'CLI verdicts equal to the in-process ones (%)', value: Math.round((agree / trials) * 100), limit: 100, atMost: false },
        { what: 'runs showing a lasting step until acknowledged (of 4)', value: acked.shown.slice(0, 4).filter((c) => c === 1).length, limit: 4, atMost: false },
        { what: 'runs regressed after the acknowledgement (of 2)', value: acked.shown.slice(4).filter((c) => c !== 0).length, limit: 0, atMost: true },
        { what: 'open alerts once the fix held two runs', value: fixed.open, limit: 0, atMost: true },
      ],
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
