// The limits run's goals from one GPU run of `.gpu-bundle/run.sh limits` (bench/gpu/run.sh): the folder
// holds run1/, run2/, ... each with limits.jsonl (engine-limits.ts: the peer-copy limits and the
// engine's all-to-all), nccl.jsonl (nccl_alltoall.py), the EP logs ep-{ll,normal}-{gpu,host}.log
// and kvpipe.log, all measured in that run. Prints, per run and as the median over runs, each
// figure against its limit in the same run, and appends one JSON line (the rows and the goals).
// All-to-all is set against the exchange limit twice: host-timed (the CT perftest's iteration,
// against the limit timed per GPU) and gated (both between gates on the GPUs, first start to last
// end: the same start and stop points); the goal is judged on the gated pair. N ranks: the
// machine line's `ranks` (engine-limits --ranks); NCCL's lines of that many ranks.
// Command line: USAGE below (--help prints it).
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { extractNixlEpMetrics } from '../../framework/metrics/extractors/nixl-ep.ts';
import { maxOf, median, minOf } from '../lib/stats.ts';
import { exchangeMode, gatedExchangeMode, ONE_WAY_PREFIX } from './limit-modes.ts';
import { benchOptions } from '../lib/options.ts';

const USAGE = `usage: npx tsx bench/gpu/summarize-limits.ts <folder with run1/, run2/, ...> [--out FILE]
  --out: the JSON lines file the summary is appended to (default <folder>/summary.jsonl).`;

const cli = benchOptions({ allowPositionals: true, options: { out: { type: 'string' } } }, USAGE);
const { values, positionals } = cli;
if (positionals.length !== 1) cli.refuse(`${positionals.length} folders given: expected one, holding run1/, run2/, ...`);
const dir = positionals[0];

interface LimitLine { kind: 'limit'; mode: string; label: string; bytes: number; medianMs: number; gbps: number }
interface A2aTiming { medianMs: number; verified: boolean }
interface A2aLine extends A2aTiming { kind: 'a2a'; variant: string; path?: string; withSelf: boolean; bytesPerPeer: number; gated?: A2aTiming }
interface NcclLine { ranks: number; bytes_per_peer: number; median_s: number; verified: boolean }

const MiB = 1 << 20;
const LL = '128x7168x8';
const NORMAL = '4096x7168x8';

const jsonl = <T>(file: string): T[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l.trim().startsWith('{')).map((l) => JSON.parse(l) as T) : []);

interface EpMode { latencyUs: number; crossGbpsMin: number; crossGbpsAvg: number; passed: boolean; dataUs?: number[]; waitUs?: number[] }

/** Per mode of an EP log: the test's mean latency (avg over ranks), the cross-GPU rate, verification, the kernel profile. */
function epLog(file: string): Record<string, EpMode> {
  if (!existsSync(file)) return {};
  const text = readFileSync(file, 'utf8');
  const { metrics } = extractNixlEpMetrics(text);
  const out: Record<string, EpMode> = {};
  for (const mode of ['dispatch', 'combine', 'e2e']) {
    const of = (name: string) => metrics.find((m) => m.name === name && m.labels.mode === mode)?.value;
    const latencyUs = of('LAT_US_AVG');
    if (latencyUs === undefined) continue;
    out[mode] = { latencyUs, crossGbpsMin: of('CROSS_GPU_GBPS_MIN') ?? NaN, crossGbpsAvg: of('CROSS_GPU_GBPS_AVG') ?? NaN, passed: of('RANKS_PASSED') === of('RANKS') };
  }
  // Kernel profile lines follow their mode's result: Kernel dispatch (μs per run): data avg=.., ...; flag wait avg=..
  let mode: string | undefined;
  for (const line of text.split('\n')) {
    const m = /Data Plane \((\w+)\)/.exec(line);
    if (m) mode = m[1];
    const k = /Kernel (\w+) \(μs per run\): data avg=([\d.]+).*flag wait avg=([\d.]+)/.exec(line);
    if (k && mode && out[mode]) {
      (out[mode].dataUs ??= []).push(Number(k[2]));
      (out[mode].waitUs ??= []).push(Number(k[3]));
    }
  }
  return out;
}

interface Goal { what: string; value: number; limit: number; atMost: boolean; met: boolean }
const goal = (what: string, value: number, limit: number, atMost = false): Goal => ({ what, value: Number(value.toFixed(3)), limit, atMost, met: atMost ? value <= limit : value >= limit });

/** One run's figures and goals. */
function summarizeRun(runDir: string): { rows: Record<string, number | string | boolean>[]; goals: Goal[]; sharedGpus: boolean } {
  const lines = jsonl<LimitLine | A2aLine | { kind: string; ranks?: number }>(path.join(runDir, 'limits.jsonl'));
  const ranks = (lines.find((l) => l.kind === 'machine') as { ranks?: number } | undefined)?.ranks ?? 2;
  const limits = lines.filter((l): l is LimitLine => l.kind === 'limit');
  const a2a = lines.filter((l): l is A2aLine => l.kind === 'a2a');
  const nccl = jsonl<NcclLine>(path.join(runDir, 'nccl.jsonl')).filter((l) => l.ranks === ranks);
  const limit = (mode: string, label: string) => limits.find((l) => l.mode === mode && l.label === label);
  /**
   * What EP's cross-GPU bytes are judged against: on 2 GPUs the better direction of a one-way peer
   * copy of them; on more, every GPU receiving its share from all the others at once (the exchange).
   */
  const oneWay = (label: string) => (ranks > 2 ? limit(exchangeMode(ranks), label) : pairOneWay(label));
  /** The best one-way peer copy between two GPUs, however many ranks ran: the KV pipe is always a pair. */
  const pairOneWay = (label: string) => {
    const rows = limits.filter((l) => l.label === label && l.mode.startsWith(ONE_WAY_PREFIX));
    return rows.length ? rows.reduce((a, b) => (a.gbps >= b.gbps ? a : b)) : undefined;
  };
  const bestOneWayGbps = maxOf(limits.filter((l) => l.mode.startsWith(ONE_WAY_PREFIX)).map((l) => l.gbps).concat([0]));
  const rows: Record<string, number | string | boolean>[] = [];
  const goals: Goal[] = [];

  // All-to-all: the automatic choice against the exchange limit (cross only) and against NCCL (with
  // the self chunk, NCCL's bytes); host-timed against the limit timed per GPU, gated against the gated limit.
  const sizes = [...new Set(a2a.map((l) => l.bytesPerPeer))].sort((a, b) => a - b);
  for (const bytes of sizes) {
    const label = `${bytes / MiB}M`;
    const both = limit(exchangeMode(ranks), label);
    const bothGated = limit(gatedExchangeMode(ranks), label);
    const ncclMs = nccl.find((n) => n.bytes_per_peer === bytes)?.median_s;
    const ncclOver = (ms: number | undefined) => (ncclMs !== undefined && ms !== undefined ? (ncclMs * 1000) / ms : NaN);
    for (const l of a2a.filter((x) => x.bytesPerPeer === bytes)) {
      rows.push({
        what: `all-to-all ${label}/peer ${l.variant}${l.withSelf ? ' +self' : ''} (${l.path})`,
        engineMs: l.medianMs,
        limitMs: l.withSelf ? NaN : both?.medianMs ?? NaN,
        limitOverEngine: l.withSelf || !both ? NaN : both.medianMs / l.medianMs,
        gatedEngineMs: l.gated?.medianMs ?? NaN,
        gatedLimitMs: l.withSelf ? NaN : bothGated?.medianMs ?? NaN,
        gatedLimitOverEngine: l.withSelf || !bothGated || !l.gated ? NaN : bothGated.medianMs / l.gated.medianMs,
        ncclMs: ncclMs !== undefined ? ncclMs * 1000 : NaN,
        ncclOverEngine: ncclOver(l.medianMs),
        ncclOverGated: ncclOver(l.gated?.medianMs),
        verified: l.verified && (l.gated?.verified ?? true),
      });
    }
    const auto = (withSelf: boolean) => a2a.find((x) => x.bytesPerPeer === bytes && x.variant === 'auto' && x.withSelf === withSelf);
    const cross = auto(false);
    const self = auto(true);
    const limitName = exchangeMode(ranks);
    if (bytes >= 64 * MiB && cross?.gated && bothGated) goals.push(goal(`all-to-all ${label}/peer auto, gated: ${limitName} limit / engine (same start and stop points)`, bothGated.medianMs / cross.gated.medianMs, 0.9));
    // Stricter: the gated engine against the exchange with no gates (their cost counted on the engine's side only).
    if (bytes >= 64 * MiB && cross?.gated && both) goals.push(goal(`all-to-all ${label}/peer auto, gated engine vs the ${limitName} limit timed per GPU without gates`, both.medianMs / cross.gated.medianMs, 0.9));
    if (bytes >= 64 * MiB && cross && both) goals.push(goal(`all-to-all ${label}/peer auto, host-timed: ${limitName} limit (per GPU) / engine (CT perftest's iteration)`, both.medianMs / cross.medianMs, 0.9));
    if (bytes <= 16 * MiB && self && ncclMs !== undefined) {
      goals.push(goal(`all-to-all ${label}/peer auto (+self, NCCL's bytes), host-timed: NCCL / engine`, ncclOver(self.medianMs), 1.0));
      if (self.gated) goals.push(goal(`all-to-all ${label}/peer auto (+self, NCCL's bytes), gated: NCCL / engine`, ncclOver(self.gated.medianMs), 1.0));
    }
    for (const l of [cross, self]) if (l && !(l.verified && (l.gated?.verified ?? true))) goals.push(goal(`all-to-all ${label}/peer auto${l.withSelf ? ' +self' : ''} verified`, 0, 1));
  }

  // EP: cross-GPU rate against the one-way peer copy of the same bytes; GPU-initiated vs host-posted.
  for (const [shape, name] of [[LL, 'll'], [NORMAL, 'normal']] as const) {
    const gpu = epLog(path.join(runDir, `ep-${name}-gpu.log`));
    const host = epLog(path.join(runDir, `ep-${name}-host.log`));
    for (const mode of ['dispatch', 'combine', 'e2e']) {
      const g = gpu[mode];
      const h = host[mode];
      if (!g) continue;
      const peer = oneWay(`EP ${shape} ${mode} cross-GPU bytes`);
      const crossBytes = peer?.bytes ?? NaN;
      rows.push({
        what: `EP ${shape} ${mode}`,
        gpuUs: g.latencyUs,
        hostUs: h?.latencyUs ?? NaN,
        hostOverGpu: h ? h.latencyUs / g.latencyUs : NaN,
        crossBytes,
        crossGbpsMin: g.crossGbpsMin,
        peerGbpsSameBytes: peer?.gbps ?? NaN,
        crossOverPeer: peer ? g.crossGbpsMin / peer.gbps : NaN,
        kernelDataUs: g.dataUs ? maxOf(g.dataUs) : NaN,
        kernelWaitUs: g.waitUs ? maxOf(g.waitUs) : NaN,
        verified: g.passed && (h?.passed ?? true),
      });
      if (!g.passed || (h && !h.passed)) goals.push(goal(`EP ${shape} ${mode} verified on every rank`, 0, 1));
      if (h) goals.push(goal(`EP ${shape} ${mode}: GPU-initiated never slower (host / GPU)`, h.latencyUs / g.latencyUs, shape === LL && mode === 'e2e' ? 2 : 1));
      if (shape === NORMAL && mode !== 'e2e' && peer) goals.push(goal(`EP ${shape} ${mode}: cross-GPU rate (slowest rank) / one-way peer copy of the same bytes`, g.crossGbpsMin / peer.gbps, 0.8));
      if (shape === LL && mode === 'e2e') {
        // The physical minimum: the cross-GPU bytes at the best one-way peer bandwidth measured (strict), and
        // as two peer copies of each phase's own bytes (what a copy of that size takes here).
        const strictUs = (crossBytes / bestOneWayGbps) * 1e-3;
        const parts = ['dispatch', 'combine'].map((p) => oneWay(`EP ${shape} ${p} cross-GPU bytes`));
        const sameSizeUs = parts.every(Boolean) ? parts.reduce((a, p) => a + p!.medianMs * 1000, 0) : NaN;
        rows.push({ what: `EP ${shape} e2e physical minimum`, strictUs, sameSizeUs, gpuUs: g.latencyUs, overStrict: g.latencyUs / strictUs, overSameSize: g.latencyUs / sameSizeUs });
        goals.push(goal(`EP ${shape} e2e GPU-initiated / physical minimum (bytes at the best one-way peer bandwidth)`, g.latencyUs / strictUs, 1.5, true));
        goals.push(goal(`EP ${shape} e2e GPU-initiated / physical minimum (peer copies of each phase's bytes)`, g.latencyUs / sameSizeUs, 1.5, true));
      }
    }
  }

  // KV pipe: the pure transfer of each commit against a one-way peer copy of a commit's bytes (4 GiB).
  const kv = path.join(runDir, 'kvpipe.log');
  if (existsSync(kv)) {
    const text = readFileSync(kv, 'utf8');
    const pure = [...text.matchAll(/Pure transfer throughput: ([\d.]+) GB\/s/g)].map((m) => Number(m[1]));
    // A pair of GPUs whatever RANKS was: judged against one GPU copying to one other. (The exchange
    // limit oneWay() gives for more ranks is every GPU copying to all others at once, about half.)
    const commit = pairOneWay('4G');
    if (pure.length && commit) {
      rows.push({ what: 'KV pipe pure transfer (median of commits)', engineGbps: median(pure), minGbps: minOf(pure), peerGbps: commit.gbps, ratio: median(pure) / commit.gbps, verified: text.includes('All data verified successfully!') });
    }
  }
  return { rows, goals, sharedGpus: lines.some((l) => (l as { sharedGpus?: boolean }).sharedGpus === true) };
}

const runs = readdirSync(dir).filter((d) => /^run\d+$/.test(d)).sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)));
if (runs.length === 0) {
  console.error(`no run1/, run2/, ... in ${dir}`);
  process.exit(2);
}
const results = runs.map((r) => ({ run: r, ...summarizeRun(path.join(dir, r)) }));
const fmt = (v: unknown) => (typeof v === 'number' ? (Number.isNaN(v) ? '-' : Math.abs(v) >= 1e6 ? v.toExponential(3) : v.toFixed(3)) : String(v));
for (const r of results) {
  console.log(`\n## ${r.run}`);
  if (r.sharedGpus) console.log('NOTE: ranks share GPUs in this run (a check of the N-rank code paths): no figure here is a limit or a goal');
  for (const row of r.rows) console.log(Object.entries(row).map(([k, v]) => (k === 'what' ? String(v).padEnd(58) : `${k}=${fmt(v)}`)).join('  '));
}
// Per goal: every run's value, the median over runs, met on the median and in every run.
const whats = [...new Set(results.flatMap((r) => r.goals.map((g) => g.what)))];
const overall = whats.map((what) => {
  const per = results.map((r) => r.goals.find((g) => g.what === what)).filter((g): g is Goal => g !== undefined);
  const m = median(per.map((g) => g.value));
  const { limit, atMost } = per[0];
  return { what, values: per.map((g) => g.value), median: Number(m.toFixed(3)), limit, atMost, metOnMedian: atMost ? m <= limit : m >= limit, metInEveryRun: per.every((g) => g.met) };
});
console.log(`\n## goals over ${results.length} run(s): median (each run) vs limit`);
for (const g of overall) {
  console.log(`${g.metOnMedian ? 'met   ' : 'MISSED'} ${g.what}: ${g.median} (${g.values.join(', ')}) ${g.atMost ? '<=' : '>='} ${g.limit}${g.metInEveryRun ? '' : ' [not in every run]'}`);
}
const out = values.out ?? path.join(dir, 'summary.jsonl');
appendFileSync(out, JSON.stringify({ date: new Date().toISOString(), source: dir, runs: results, goals: overall }) + '\n');
console.log(`appended to ${out}`);
