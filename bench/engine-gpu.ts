// GPU benchmark of the transfer engine on two GPUs of one node: `cuda` WRITE and READ of 256 MiB
// between 2 ranks (one GPU each), one way each direction and both ways at once, against plain
// cudaMemcpyPeerAsync of the same size in the same run; plus `nccl` one way when NCCL is there.
// Goal: cuda >= 95% of the plain peer copy. Prints a table and appends one JSON line to
// bench/results/engine-gpu.jsonl.
// Command line: USAGE below (--help prints it).
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { maxOf } from './lib/stats.ts';
import {
  backendAvailability,
  cudart,
  monoNs,
  nvmlDeviceNames,
  openStore,
  rankFromEnv,
  XferEngine,
  type BackendName,
  type Store,
  type XferRequest,
} from '../runners/xfer/index.ts';
import { appendJsonLine, runAsLocalRanks } from './lib/local-ranks.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/engine-gpu.ts [--mib 256] [--iters 20] [--out FILE] [--smoke]
  --mib MiB per direction, median of --iters timed iterations; --out: the JSON lines file (default
  bench/results/engine-gpu.jsonl). --smoke: 1 MiB, 2 iterations, no figure kept.`;

const here = fileURLToPath(import.meta.url);
const cli = benchOptions({ args: benchArgs(['--mib', '1', '--iters', '2']), options: { mib: { type: 'string', default: '256' }, iters: { type: 'string', default: '20' }, out: { type: 'string' } } }, USAGE);
const { values } = cli;
const mib = cli.wholeNumber('mib');
const bytes = mib * 1024 * 1024;
const iterations = cli.wholeNumber('iters');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Row {
  name: string;
  /** Aggregate GB/s of each timed iteration. */
  gbps: number[];
  baseline?: string;
}

/** Plain peer copies in one process: 0->1, 1->0, and both at once (rank 0 only). */
function peerCopyBaseline(): Row[] {
  const cuda = cudart();
  const buf = (device: number) => (cuda.setDevice(device), cuda.malloc(bytes));
  const [a0, b0, a1, b1] = [buf(0), buf(0), buf(1), buf(1)];
  // Direct NVLink/PCIe peer copies, not staged through the host (as PyTorch and the IPC path have).
  for (const [device, peer] of [[0, 1], [1, 0]]) {
    cuda.setDevice(device);
    cuda.enablePeerAccess(peer);
  }
  cuda.setDevice(0);
  const s0 = cuda.streamCreate();
  cuda.setDevice(1);
  const s1 = cuda.streamCreate();
  const rows: Row[] = [
    { name: 'cudaMemcpyPeerAsync 0->1', gbps: [] },
    { name: 'cudaMemcpyPeerAsync 1->0', gbps: [] },
    { name: 'cudaMemcpyPeerAsync both ways at once', gbps: [] },
  ];
  const copies: [number, () => void][] = [
    [0, () => cuda.memcpyPeerAsync(b1, 1, a0, 0, bytes, s0)],
    [1, () => cuda.memcpyPeerAsync(b0, 0, a1, 1, bytes, s1)],
    [2, () => (cuda.memcpyPeerAsync(b1, 1, a0, 0, bytes, s0), cuda.memcpyPeerAsync(b0, 0, a1, 1, bytes, s1))],
  ];
  for (const [row, copy] of copies) {
    for (let i = -2; i < iterations; i++) {
      const t0 = monoNs();
      copy();
      cuda.streamSynchronize(s0);
      cuda.streamSynchronize(s1);
      if (i >= 0) rows[row].gbps.push(((row === 2 ? 2 : 1) * bytes) / (monoNs() - t0));
    }
  }
  for (const p of [a0, b0, a1, b1]) cuda.free(p);
  cuda.streamDestroy(s0);
  cuda.streamDestroy(s1);
  return rows;
}

/** One engine phase: `senders` each run their request once per iteration, together after a barrier. */
async function phase(engine: XferEngine, store: Store, name: string, requests: XferRequest[], senders: number[]): Promise<Row> {
  const plan = await engine.prepare(requests);
  const row: Row = { name, gbps: [] };
  for (let i = -2; i < iterations; i++) {
    await store.barrier(`gpu-bench`);
    const r = await engine.execute(plan);
    const spans = await store.allGather('gpu-bench-span', r.requests.length > 0 ? r.endNs - r.startNs : 0);
    // Each sender's own time; both-ways = total bytes over the slower direction.
    if (i >= 0) row.gbps.push((senders.length * bytes) / maxOf(senders.map((s) => spans[s])));
  }
  return row;
}

async function engineRows(backend: BackendName, store: Store): Promise<Row[]> {
  const info = rankFromEnv();
  const engine = await XferEngine.create({ backend, rank: info, store, device: info.localRank });
  engine.allocate('src', bytes);
  engine.allocate('dst', bytes);
  await engine.connect();
  const me = info.rank;
  const peer = 1 - me;
  const write: XferRequest = { op: 'WRITE', peer, local: 'src', localOffset: 0, remote: 'dst', remoteOffset: 0, length: bytes };
  const read: XferRequest = { ...write, op: 'READ', local: 'dst', remote: 'src' };
  const rows = [
    await phase(engine, store, `${backend} WRITE 0->1`, me === 0 ? [write] : [], [0]),
    await phase(engine, store, `${backend} WRITE 1->0`, me === 1 ? [write] : [], [1]),
    await phase(engine, store, `${backend} WRITE both ways at once`, [write], [0, 1]),
    await phase(engine, store, `${backend} READ 0<-1 (rank 0 reads)`, me === 0 ? [read] : [], [0]),
  ];
  await engine.disconnect();
  await engine.destroy();
  return rows;
}

async function rankMain(): Promise<void> {
  const info = rankFromEnv();
  const store = await openStore(info);
  const baseline = info.rank === 0 ? peerCopyBaseline() : [];
  await store.barrier('baseline-done');
  const rows = [...baseline, ...(await engineRows('cuda', store))];
  const nccl = backendAvailability('nccl');
  if (nccl.available) rows.push(...(await engineRows('nccl', store)));
  if (info.rank === 0) report(rows, nccl.available ? nccl.detail : `nccl skipped: ${nccl.reason}`);
  await store.close();
}

function report(rows: Row[], ncclNote: string): void {
  const base = (name: string) => median(rows.find((r) => r.name === name)!.gbps);
  const baselineOf = (name: string) =>
    name.includes('both') ? 'cudaMemcpyPeerAsync both ways at once' : name.includes('1->0') ? 'cudaMemcpyPeerAsync 1->0' : 'cudaMemcpyPeerAsync 0->1';
  const gpus = nvmlDeviceNames();
  console.log(`\n${mib} MiB per direction, 2 ranks on ${gpus.slice(0, 2).join(' + ')}; ${ncclNote}`);
  console.log(`${'transfer'.padEnd(44)} ${'median GB/s'.padStart(12)} ${'best GB/s'.padStart(10)} ${'vs peer copy'.padStart(13)}`);
  for (const r of rows) {
    const m = median(r.gbps);
    const ratio = r.name.startsWith('cudaMemcpyPeerAsync') ? '' : `${((m / base(baselineOf(r.name))) * 100).toFixed(1)}%`;
    console.log(`${r.name.padEnd(44)} ${m.toFixed(1).padStart(12)} ${maxOf(r.gbps).toFixed(1).padStart(10)} ${ratio.padStart(13)}`);
  }
  const cudaRatios = rows.filter((r) => r.name.startsWith('cuda WRITE')).map((r) => median(r.gbps) / base(baselineOf(r.name)));
  const verdict = cudaRatios.every((x) => x >= 0.95) ? 'PASS' : 'FAIL';
  console.log(`goal: cuda WRITE >= 95% of the plain peer copy in every direction: ${verdict}`);
  const line = {
    date: new Date().toISOString(),
    host: os.hostname(),
    gpus,
    node: process.version,
    cudaRuntime: cudart().runtimeVersion(),
    nccl: ncclNote,
    bytes,
    iterations,
    medianGBps: Object.fromEntries(rows.map((r) => [r.name, Number(median(r.gbps).toFixed(2))])),
    cudaVsPeerCopy: cudaRatios.map((x) => Number(x.toFixed(3))),
    goal: 0.95,
    verdict,
  };
  const out = values.out ?? path.join(path.dirname(here), 'results', 'engine-gpu.jsonl');
  appendJsonLine(out, line);
}

await runAsLocalRanks(here, 2, rankMain);
