// How often the regression gate cries wolf and how often it catches a real slowdown, with every
// value carrying run-to-run noise (default 3 %, normal) and one post-merge run a day:
// 1. Monte Carlo on upstream's baseline functions (framework/history/baseline.ts: the daily mean,
//    the 3-day rolling mean, P95 / P5, over the history before the run) and the gate's rule
//    (framework/history/gate.ts judge): upstream's threshold alone (k = 0, every metric with a
//    direction gating, as this project did) against the noise-aware rule (k standard deviations
//    of the daily means, only the headline metrics gating);
// 2. the real implementation on generated histories: the same histories appended to a DuckDB
//    store, one test per trial, each run checked through the store's baseline query and checkRun.
// Per run: the share of runs in which any gating metric is flagged with no real change (goal
// <= 5 %), and the share in which a 15 % drop of one headline metric is flagged (goal >= 95 %);
// the 10 % drop is reported.
//   node --import tsx bench/gate-simulation.ts [--trials 20000] [--store-trials 400] [--noise 3] [--days 7,14,30]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { seriesBaseline } from '../framework/history/baseline.ts';
import { judge, type GateRule } from '../framework/history/gate.ts';
import { checkRun, ruleOf } from '../framework/history/check-run.ts';
import { DEFAULT_GATE } from '../framework/settings.ts';
import { withHistory } from '../framework/history/store.ts';
import type { Metric } from '../framework/metrics/metric.ts';
import type { TestRecord } from '../framework/results/json.ts';
import { appendResult, printGoals, printTable, type Goal } from './lib/report.ts';
import { minOf } from '../runners/common/stats.ts';
import { benchArgs } from './lib/smoke.ts';

const { values } = parseArgs({
  args: benchArgs(['--trials', '200', '--store-trials', '8', '--days', '7']),
  options: {
    trials: { type: 'string', default: '20000' },
    'store-trials': { type: 'string', default: '400' },
    noise: { type: 'string', default: '3' },
    days: { type: 'string', default: '7,14,30' },
    seed: { type: 'string', default: '1' },
  },
});
const TRIALS = Number(values.trials);
const STORE_TRIALS = Number(values['store-trials']);
const NOISE = Number(values.noise) / 100;
const DAYS = values.days.split(',').map(Number);
/** A serving test's metrics: 2 headline throughputs (upstream's perf-sanity gates these) and 10 others with a direction. */
const HEADLINE = 2;
const METRICS = 12;
const UPSTREAM: GateRule = { minDays: 1, noiseK: 0 };
const GATE: GateRule = { ...ruleOf(DEFAULT_GATE) };
const THRESHOLD = 0.05;

// A seeded generator (mulberry32) and normal deviates (Box-Muller): the same figures every time.
let state = Number(values.seed) >>> 0;
const uniform = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
const noisy = (level: number) => level * (1 + NOISE * normal());

/** One metric's history (one value a day) and the new value, judged; `up`: higher is better. */
function flagged(days: number, drop: number, up: boolean, rule: GateRule): boolean {
  const history = Array.from({ length: days }, () => noisy(100));
  const stats = seriesBaseline(0, { days: history.map((_, d) => d), sums: history, counts: history.map(() => 1) });
  const value = noisy(up ? 100 * (1 - drop) : 100 * (1 + drop));
  return judge({ value, higherIsBetter: up, stats, threshold: THRESHOLD, rule, gated: true, runKind: 'post-merge' })?.regression ?? false;
}

/** The share of runs in which any of `gating` metrics is flagged; the first metric dropped by `drop`. */
function monteCarlo(days: number, gating: number, drop: number, rule: GateRule): number {
  let runs = 0;
  for (let t = 0; t < TRIALS; t++) {
    let any = false;
    for (let m = 0; m < gating; m++) any = flagged(days, m === 0 ? drop : 0, m % 2 === 0, rule) || any;
    if (any) runs++;
  }
  return runs / TRIALS;
}

const DAY_MS = 86_400_000;
const START = Date.UTC(2026, 9, 1);
/** One record of test `t` on `day`: METRICS metrics around 100, the first `HEADLINE` gating; the first dropped by `drop`. */
function testRecord(runId: string, t: number, day: number, drop: number): TestRecord {
  const metrics: Metric[] = Array.from({ length: METRICS }, (_, m) => {
    const up = m % 2 === 0;
    return { name: `M${m}`, value: noisy(m === 0 ? (up ? 100 * (1 - drop) : 100 * (1 + drop)) : 100), unit: up ? 'tok/s' : 'ms', higherIsBetter: up, labels: {} };
  });
  const start = START + day * DAY_MS + 3_600_000;
  return {
    testId: `gate_sim_${t}`,
    type: 'disagg',
    category: 'perf',
    configPath: `sim/${t}.yaml`,
    jobId: `${runId}-${t}`,
    verdict: 'passed',
    failures: [],
    metrics,
    timing: { start: new Date(start).toISOString(), end: new Date(start + 60_000).toISOString(), durationSec: 60 },
    host: 'sim',
    gpuType: 'H100',
    run: { id: runId, kind: 'post-merge', gate: Array.from({ length: HEADLINE }, (_, m) => `M${m}`) },
  };
}

/** The real store and check: STORE_TRIALS tests with `days` of history; the share of tests flagged, per case. */
async function throughStore(days: number): Promise<Record<string, number>> {
  const scratch = mkdtempSync(path.join(tmpdir(), 'gate-sim-'));
  const target = { kind: 'duckdb' as const, file: path.join(scratch, 'h.duckdb') };
  try {
    const tests = Array.from({ length: STORE_TRIALS }, (_, t) => t);
    await withHistory(
      target,
      async (store) => {
        for (let d = 0; d < days; d++) {
          const records = tests.map((t) => testRecord(`day${d}`, t, d, 0));
          await store.append(records.map((record) => ({ record, run: record.run!, source: 'sim' })));
        }
      },
      { create: true },
    );
    const share = async (drop: number, rule: GateRule, gateAll: boolean) => {
      const records = tests.map((t) => testRecord(`check-${drop}`, t, days, drop));
      if (gateAll) for (const r of records) r.run!.gate = r.metrics.map((m) => m.name);
      const checks = await withHistory(target, (store) => checkRun(store, records, { rule }));
      return checks.filter((c) => c.findings.some((f) => f.regression)).length / checks.length;
    };
    return {
      upstreamAll12NoChange: await share(0, UPSTREAM, true),
      gateNoChange: await share(0, GATE, false),
      gateDrop15: await share(0.15, GATE, false),
      gateDrop10: await share(0.1, GATE, false),
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const rows: Array<Record<string, number>> = [];
for (const days of DAYS) {
  const mc = {
    days,
    upstreamPerMetric: monteCarlo(days, 1, 0, UPSTREAM),
    upstreamAll12: monteCarlo(days, METRICS, 0, UPSTREAM),
    gateNoChange: monteCarlo(days, HEADLINE, 0, GATE),
    gateDrop15: monteCarlo(days, HEADLINE, 0.15, GATE),
    gateDrop10: monteCarlo(days, HEADLINE, 0.1, GATE),
  };
  const store = await throughStore(days);
  rows.push({ ...mc, ...Object.fromEntries(Object.entries(store).map(([k, v]) => [`store_${k}`, v])) });
}
printTable(
  `gate simulation: ${NOISE * 100} % run-to-run noise, one run a day, threshold 5 %; Monte Carlo ${TRIALS} runs per cell, the store ${STORE_TRIALS} tests per cell`,
  ['days', 'upstream, 1 metric', 'upstream, 12 metrics', 'gate: no change', 'gate: -15 %', 'gate: -10 %', 'store upstream 12', 'store gate: no change', 'store gate: -15 %', 'store gate: -10 %'],
  rows.map((r) => [r.days, pct(r.upstreamPerMetric), pct(r.upstreamAll12), pct(r.gateNoChange), pct(r.gateDrop15), pct(r.gateDrop10), pct(r.store_upstreamAll12NoChange), pct(r.store_gateNoChange), pct(r.store_gateDrop15), pct(r.store_gateDrop10)]),
);
const seven = rows.find((r) => r.days === minOf(DAYS.filter((d) => d >= 7)))!;
const goals: Goal[] = [
  { what: `false alarms per run, no change, ${seven.days} days, Monte Carlo (%)`, value: Number((seven.gateNoChange * 100).toFixed(2)), limit: 5, atMost: true },
  { what: `a 15 % drop flagged, ${seven.days} days, Monte Carlo (%)`, value: Number((seven.gateDrop15 * 100).toFixed(2)), limit: 95, atMost: false },
  { what: `false alarms per run, no change, ${seven.days} days, the store (%)`, value: Number((seven.store_gateNoChange * 100).toFixed(2)), limit: 5, atMost: true },
  { what: `a 15 % drop flagged, ${seven.days} days, the store (%)`, value: Number((seven.store_gateDrop15 * 100).toFixed(2)), limit: 95, atMost: false },
];
printGoals(goals);
appendResult('gate-simulation', { noisePercent: NOISE * 100, trials: TRIALS, storeTrials: STORE_TRIALS, rule: GATE, headline: HEADLINE, metrics: METRICS, rows }, goals);
