// The hardware's copy limits between the GPUs of one node, measured with plain CUDA from ONE
// process that drives every GPU (engine-limits.ts runs it on rank 0 before the engine's turn).
// Timed on the GPUs with events; per row, the median over `reps` samples (3 warm-up samples first):
// - one way i->j: a peer copy on GPU i's stream, its own events around it;
// - the exchange (every GPU sends S to every other at once, one stream per peer: 'both ways at
//   once' on 2 GPUs, 'all pairs at once' on more): each GPU times its own copies (events on its
//   first stream, the other streams forked from and joined to it), the longest GPU is the sample.
//   The GPUs' copies are queued one GPU after the other, a few microseconds apart;
// - the same exchange between two gates on the GPUs (cuda-gate.ts), timed as the engine's gated
//   all-to-all (CudaBackend.runGatedIterations): every sample queued back to back (start gate,
//   event, copies, end gate, event on every GPU), one synchronisation at the end; per sample the
//   longest GPU span, which covers the first GPU's start to the last GPU's end;
// - inside GPU 0: a device-local copy.
// Logical GPU g is device g mod the devices present: more GPUs than devices (a correctness check of
// the N-GPU code on fewer) makes some copies device-local, and every row says `sharedGpus`.
import { cudaDriver, cudart, type Cudart } from '../../runners/xfer/index.ts';
import { enqueueGate, gateAreaBytes, gateWords } from '../../runners/xfer/backends/cuda-gate.ts';
import { maxOf, median } from '../lib/stats.ts';
import { exchangeMode, gatedExchangeMode, INSIDE_GPU_0, oneWayMode } from './limit-modes.ts';

export interface LimitSize {
  label: string;
  /** Bytes of a one-way copy and of the copy inside GPU 0. */
  bytes: number;
  /** Bytes each GPU sends each peer in the exchange rows (default `bytes`). */
  perPeer?: number;
}

export interface LimitRow {
  kind: 'limit';
  mode: string;
  label: string;
  /** Bytes per copy (per peer in the exchange rows). */
  bytes: number;
  /** Bytes one GPU receives in the row (the exchange: bytes x (GPUs - 1)). */
  receivedBytes: number;
  reps: number;
  medianMs: number;
  /** receivedBytes / time: per direction on 2 GPUs. */
  gbps: number;
  sharedGpus: boolean;
}

interface Gpu {
  device: number;
  src: bigint;
  /** One slot of `largest` bytes per sender (peers in rank order). */
  dst: bigint;
  gate: bigint;
  /** One stream per peer (at least one); events are recorded on streams[0]. */
  streams: bigint[];
  start: bigint;
  end: bigint;
  joins: bigint[];
}

export function measureLimits(sizes: readonly LimitSize[], gpus: number, emit: (row: LimitRow) => void): void {
  const cuda = cudart();
  const driver = cudaDriver();
  const devices = cuda.deviceCount();
  const sharedGpus = gpus > devices;
  const largest = maxOf(sizes.flatMap((s) => [s.bytes, s.perPeer ?? s.bytes]));
  const all = Array.from({ length: gpus }, (_, g) => g);
  const peersOf = (g: number) => all.filter((p) => p !== g);
  const slot = (receiver: number, sender: number) => (sender < receiver ? sender : sender - 1);
  const on = (g: Gpu) => cuda.setDevice(g.device);
  const G: Gpu[] = all.map((g) => {
    const device = g % devices;
    cuda.setDevice(device);
    const src = cuda.malloc(largest);
    cuda.memset(src, 0x3c, largest); // never time copies of untouched memory
    const dst = cuda.malloc(Math.max(1, gpus - 1) * largest);
    const gate = cuda.malloc(gateAreaBytes(gpus));
    cuda.memset(gate, 0, gateAreaBytes(gpus));
    const streams = Array.from({ length: Math.max(1, gpus - 1) }, () => cuda.streamCreate());
    return { device, src, dst, gate, streams, start: cuda.eventCreate(true), end: cuda.eventCreate(true), joins: streams.slice(1).map(() => cuda.eventCreate()) };
  });
  for (const g of G) {
    on(g);
    // direct NVLink/PCIe copies and gate writes, as CUDA IPC mappings give the engine
    for (const p of peersOf(G.indexOf(g))) if (G[p].device !== g.device) cuda.enablePeerAccess(G[p].device);
  }
  const copy = (from: number, to: number, n: number, stream: bigint) =>
    cuda.memcpyPeerAsync(G[to].dst + BigInt(slot(to, from) * largest), G[to].device, G[from].src, G[from].device, n, stream);
  const gates = all.map((g) => ({
    start: gateWords(gpus, g, 'start', G[g].gate, (r) => G[r].gate),
    end: gateWords(gpus, g, 'end', G[g].gate, (r) => G[r].gate),
  }));
  let seq = 0;
  /** GPU g sends n to every peer, one stream each, between the events (and the gates when gated). */
  const exchangeOn = (g: number, n: number, gated: boolean, start = G[g].start, end = G[g].end) => {
    const x = G[g];
    on(x);
    if (gated) enqueueGate(driver, x.device, x.streams[0], gates[g].start, seq);
    cuda.eventRecord(start, x.streams[0]);
    x.streams.slice(1).forEach((s) => cuda.streamWaitEvent(s, start));
    peersOf(g).forEach((p, k) => copy(g, p, n, x.streams[k]));
    x.joins.forEach((e, k) => (cuda.eventRecord(e, x.streams[k + 1]), cuda.streamWaitEvent(x.streams[0], e)));
    if (gated) enqueueGate(driver, x.device, x.streams[0], gates[g].end, seq);
    cuda.eventRecord(end, x.streams[0]);
  };
  /** Per GPU, timing events for back-to-back samples: [start, end] of sample i at 2i, 2i + 1. */
  const sampleEvents: bigint[][] = G.map(() => []);
  /** The gated exchange, 3 + reps samples queued back to back on every GPU, then one synchronisation. */
  const timeGated = (n: number, reps: number): number => {
    const total = 3 + reps;
    G.forEach((x, g) => {
      on(x);
      while (sampleEvents[g].length < 2 * total) sampleEvents[g].push(cuda.eventCreate(true));
    });
    for (let i = 0; i < total; i++) {
      seq++;
      all.forEach((g) => exchangeOn(g, n, true, sampleEvents[g][2 * i], sampleEvents[g][2 * i + 1]));
    }
    for (const x of G) (on(x), cuda.streamSynchronize(x.streams[0]));
    const samples = Array.from({ length: reps }, (_, k) => maxOf(all.map((g) => cuda.eventElapsedMs(sampleEvents[g][2 * (k + 3)], sampleEvents[g][2 * (k + 3) + 1]))));
    return median(samples);
  };
  /** Median over reps of the longest events-timed span among `timed` after `body` queued it. */
  const time = (body: () => void, timed: readonly Gpu[], reps: number): number => {
    const samples: number[] = [];
    for (let i = -3; i < reps; i++) {
      seq++;
      body();
      for (const g of timed) (on(g), cuda.streamSynchronize(g.streams[0]));
      if (i >= 0) samples.push(maxOf(timed.map((g) => cuda.eventElapsedMs(g.start, g.end))));
    }
    return median(samples);
  };
  const oneWay = (from: number, to: number, n: number) => () => {
    const x = G[from];
    on(x);
    cuda.eventRecord(x.start, x.streams[0]);
    copy(from, to, n, x.streams[0]);
    cuda.eventRecord(x.end, x.streams[0]);
  };
  const inside = (n: number) => () => {
    const x = G[0];
    on(x);
    cuda.eventRecord(x.start, x.streams[0]);
    cuda.memcpyAsync(x.dst, x.src, n, 3, x.streams[0]);
    cuda.eventRecord(x.end, x.streams[0]);
  };
  for (const { label, bytes, perPeer = bytes } of sizes) {
    const reps = bytes >= 1 << 30 ? 10 : bytes >= 64 << 20 ? 20 : 50;
    const rows: { mode: string; ms: () => number; bytes: number; received: number }[] = [
      ...all.flatMap((from) => peersOf(from).map((to) => ({ mode: oneWayMode(from, to), ms: () => time(oneWay(from, to, bytes), [G[from]], reps), bytes, received: bytes }))),
      { mode: exchangeMode(gpus), ms: () => time(() => all.forEach((g) => exchangeOn(g, perPeer, false)), G, reps), bytes: perPeer, received: perPeer * (gpus - 1) },
      { mode: gatedExchangeMode(gpus), ms: () => timeGated(perPeer, reps), bytes: perPeer, received: perPeer * (gpus - 1) },
      { mode: INSIDE_GPU_0, ms: () => time(inside(bytes), [G[0]], reps), bytes, received: bytes },
    ];
    for (const row of rows) {
      const ms = row.ms();
      emit({ kind: 'limit', mode: row.mode, label, bytes: row.bytes, receivedBytes: row.received, reps, medianMs: ms, gbps: row.received / ms / 1e6, sharedGpus });
    }
  }
  G.forEach((x, g) => (on(x), sampleEvents[g].forEach((e) => cuda.eventDestroy(e))));
  release(cuda, G);
}

function release(cuda: Cudart, G: Gpu[]): void {
  for (const g of G) {
    cuda.setDevice(g.device);
    g.streams.forEach((s) => cuda.streamDestroy(s));
    [g.start, g.end, ...g.joins].forEach((e) => cuda.eventDestroy(e));
    [g.src, g.dst, g.gate].forEach((p) => cuda.free(p));
  }
}
