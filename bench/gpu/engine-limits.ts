// The hardware's limits and the engine on 2 GPUs of one node, in the same run (issue 25). Rank 0
// first measures the limits with plain CUDA, driving both GPUs from one process and timing on the
// GPU with events: a peer copy one way (0->1, 1->0), both ways at once (the longer of the two
// copies, each timed on its own GPU), and a copy inside GPU 0,
// at --sizes and at the cross-GPU bytes of the EP shapes in --ep (each phase's bytes that one rank
// receives from the other GPU). Then both ranks run the engine's all-to-all, S per peer, for each
// variant of the cuda backend in --variants: each rank WRITEs S to the other (the CT perftest's
// matrix) and, in a second row, also its own chunk (all_to_all_single's bytes), timed as the CT
// perftest times an iteration (a barrier, then first start to last end on rank 0's clock) and
// verified byte for byte after the timed iterations. One JSON line per row goes to --out;
// summarize-limits.ts sets them against NCCL, EP and the KV pipe of the same run.
//   node --import tsx bench/gpu/engine-limits.ts --out limits.jsonl [--sizes 1M,16M,64M,256M,1G]
//     [--variants copy-engine,copy-engine:64M,kernel@1024/4/streaming,auto] [--ep 128x7168x8,4096x7168x8] [--iters 20]
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { parseSize } from '../../runners/common/size.ts';
import { cudart, monoNs, nvmlDeviceNames, openStore, rankFromEnv, XferEngine, type CudaOptions, type Store, type XferRequest } from '../../runners/xfer/index.ts';
import { parseCudaCopyPath } from '../../runners/xfer/device-copy/copy-path.ts';
import { parseKernelShape } from '../../runners/xfer/device-copy/kernel-source.ts';
import { patternBytes } from '../../runners/xfer/pattern.ts';
import { epLayout } from '../../runners/xfer/benches/ep/ep-routing.ts';
import { crossGpuBytes } from '../../runners/xfer/benches/ep/ep-data-plane.ts';
import { appendJsonLine, runAsLocalRanks } from '../lib/local-ranks.ts';
import { maxOf, mean, median, minOf } from '../lib/stats.ts';

const here = fileURLToPath(import.meta.url);
const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1M,16M,64M,256M,1G' },
    /** Peer-copy limits only (not the all-to-all), e.g. the KV pipe's commit. */
    'limit-sizes': { type: 'string', default: '4G' },
    'a2a-sizes': { type: 'string', default: '1M,16M,64M,256M' },
    variants: { type: 'string', default: 'copy-engine,kernel,auto' },
    /** EP shapes tokens x hidden x topk (36 experts per rank, seed 1, 2 ranks). */
    ep: { type: 'string', default: '128x7168x8,4096x7168x8' },
    iters: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    out: { type: 'string' },
  },
});
const iterations = Number(values.iters);
const warmup = Number(values.warmup);
const list = (raw: string) => raw.split(',').map((s) => s.trim()).filter(Boolean);
const EXPERTS_PER_RANK = 36;

interface Variant {
  name: string;
  cuda: CudaOptions;
}

/**
 * copy-engine | kernel | auto, then optionally :CHUNK (the copy-engine path's chunk size) and
 * @threads/unroll/streaming|cached (the copy kernel's shape): copy-engine:64M, kernel@1024/4/streaming.
 */
function parseVariant(raw: string): Variant {
  const m = /^([a-z-]+)(?::([^@]+))?(?:@(.+))?$/.exec(raw);
  if (!m) throw new Error(`--variants '${raw}': expected copy-engine|kernel|auto[:CHUNK][@threads/unroll/streaming|cached]`);
  const cuda: CudaOptions = { copy: parseCudaCopyPath(m[1], `--variants '${raw}'`) };
  if (m[2]) cuda.chunkBytes = parseSize(m[2]);
  if (m[3]) cuda.kernelShape = parseKernelShape(m[3], `--variants '${raw}'`);
  return { name: raw, cuda };
}

/** Each EP shape's cross-GPU bytes per rank (received from the other GPU; rank 0's), per phase. */
function epCrossBytes(): { shape: string; phase: string; bytes: number }[] {
  return list(values.ep).flatMap((shape) => {
    const [tokens, hidden, topk] = shape.split('x').map(Number);
    const layout = epLayout({ ranks: 2, tokens, hidden, expertsPerRank: EXPERTS_PER_RANK, topk, seed: 1 });
    return (['dispatch', 'combine', 'e2e'] as const).map((phase) => ({ shape, phase, bytes: crossGpuBytes(layout, phase, 0).received }));
  });
}

function emit(line: Record<string, unknown>): void {
  if (values.out) appendJsonLine(values.out, { date: new Date().toISOString(), ...line });
  else console.log(JSON.stringify(line));
}

/** Plain CUDA in one process: peer copies each way, both ways at once, and a copy inside GPU 0 (rank 0 only). */
function measureLimits(sizes: { bytes: number; label: string }[]): void {
  const cuda = cudart();
  const largest = maxOf(sizes.map((s) => s.bytes));
  const alloc = (device: number) => (cuda.setDevice(device), [cuda.malloc(largest), cuda.malloc(largest)]);
  const [[a0, b0], [a1, b1]] = [alloc(0), alloc(1)];
  for (const [device, peer] of [[0, 1], [1, 0]]) {
    cuda.setDevice(device);
    cuda.enablePeerAccess(peer); // direct NVLink/PCIe copies, as CUDA IPC mappings give the engine
    cuda.memset(device === 0 ? a0 : a1, 0x3c, largest); // never time copies of untouched memory
  }
  const on = (device: number) => {
    cuda.setDevice(device);
    return { stream: cuda.streamCreate(), start: cuda.eventCreate(true), end: cuda.eventCreate(true) };
  };
  const d0 = on(0);
  const d1 = on(1);
  const copy01 = (n: number) => cuda.memcpyPeerAsync(b1, 1, a0, 0, n, d0.stream);
  const copy10 = (n: number) => cuda.memcpyPeerAsync(b0, 0, a1, 1, n, d1.stream);
  /**
   * Median GPU milliseconds of the copies `body` queues, each GPU timing its own stream with its own
   * events: a copy's time on the GPU that runs it. With copies on both GPUs (both ways at once),
   * the longer of the two: they are queued within microseconds of each other, so each runs
   * against the other for nearly all of its time. (Joining the two streams with events instead
   * adds a cross-GPU wait of ~10-15 us to every sample, seen on 2 H100s.)
   */
  const time = (body: () => void, devices: readonly (typeof d0)[], reps: number): number => {
    const samples: number[] = [];
    for (let i = -3; i < reps; i++) {
      devices.forEach((d) => (cuda.setDevice(d === d0 ? 0 : 1), cuda.eventRecord(d.start, d.stream)));
      body();
      devices.forEach((d) => (cuda.setDevice(d === d0 ? 0 : 1), cuda.eventRecord(d.end, d.stream)));
      devices.forEach((d) => cuda.streamSynchronize(d.stream));
      if (i >= 0) samples.push(maxOf(devices.map((d) => cuda.eventElapsedMs(d.start, d.end))));
    }
    return median(samples);
  };
  for (const { bytes, label } of sizes) {
    const reps = bytes >= 1 << 30 ? 10 : bytes >= 64 << 20 ? 20 : 50;
    const rows: [string, () => void, (typeof d0)[]][] = [
      ['one way 0->1', () => (cuda.setDevice(0), copy01(bytes)), [d0]],
      ['one way 1->0', () => (cuda.setDevice(1), copy10(bytes)), [d1]],
      ['both ways at once', () => (cuda.setDevice(0), copy01(bytes), cuda.setDevice(1), copy10(bytes)), [d0, d1]],
      ['inside GPU 0', () => (cuda.setDevice(0), cuda.memcpyAsync(b0, a0, bytes, 3, d0.stream)), [d0]],
    ];
    for (const [mode, body, devices] of rows) {
      const ms = time(body, devices, reps);
      // GB/s per direction: the bytes one GPU sends over the time (both ways: each direction's)
      emit({ kind: 'limit', mode, label, bytes, reps, medianMs: ms, gbps: bytes / ms / 1e6 });
    }
  }
  for (const d of [d0, d1]) {
    cuda.streamDestroy(d.stream);
    cuda.eventDestroy(d.start);
    cuda.eventDestroy(d.end);
  }
  for (const [device, ptrs] of [[0, [a0, b0]], [1, [a1, b1]]] as const) {
    cuda.setDevice(device);
    ptrs.forEach((p) => cuda.free(p));
  }
}

/** The engine's 2-rank all-to-all for one backend variant, every size, without and with the self chunk. */
async function allToAll(store: Store, variant: Variant, sizes: number[]): Promise<void> {
  const info = rankFromEnv();
  const me = info.rank;
  const peer = 1 - me;
  const largest = maxOf(sizes);
  const engine = await XferEngine.create({ backend: 'cuda', rank: info, store, cuda: variant.cuda });
  try {
    // src: [chunk for rank 0 | chunk for rank 1]; dst: [from rank 0 | from rank 1] (all_to_all_single's layout)
    const src = engine.allocate('a2a-src', 2 * largest);
    const dst = engine.allocate('a2a-dst', 2 * largest);
    for (const to of [0, 1]) src.write(to * largest, patternBytes({ sender: me, receiver: to, iteration: 0 }, 0, largest));
    const expected = [0, 1].map((from) => Buffer.from(patternBytes({ sender: from, receiver: me, iteration: 0 }, 0, largest)));
    await engine.connect();
    for (const bytes of sizes) {
      for (const withSelf of [false, true]) {
        const to = withSelf ? [peer, me] : [peer];
        const requests: XferRequest[] = to.map((r) => ({ op: 'WRITE', peer: r, local: 'a2a-src', localOffset: r * largest, remote: 'a2a-dst', remoteOffset: me * largest, length: bytes }));
        const plan = await engine.prepare(requests);
        dst.fill(0xa5); // bytes never written do not match the pattern
        const spans: { first: number; last: number; own: number[]; skewUs: number; postUs: number[] }[] = [];
        for (let i = -warmup; i < iterations; i++) {
          await store.barrier('a2a-iteration');
          const r = await engine.execute(plan);
          const all = await store.allGather('a2a-span', [store.toRank0Ns(r.startNs), store.toRank0Ns(r.endNs), r.postedNs - r.startNs]);
          if (i < 0) continue;
          const starts = all.map((x) => x[0]);
          const ends = all.map((x) => x[1]);
          spans.push({ first: minOf(starts), last: maxOf(ends), own: all.map((x) => (x[1] - x[0]) / 1e6), skewUs: (maxOf(starts) - minOf(starts)) / 1e3, postUs: all.map((x) => x[2] / 1e3) });
        }
        await store.barrier('a2a-verify'); // every rank's writes are done
        const from = withSelf ? [peer, me] : [peer];
        const bad = from.filter((f) => Buffer.compare(expected[f].subarray(0, bytes), Buffer.from(dst.read(f * largest, bytes))) !== 0);
        const verdicts = await store.allGather('a2a-verified', bad.length === 0);
        if (me === 0) {
          const ms = spans.map((s) => (s.last - s.first) / 1e6);
          emit({
            kind: 'a2a',
            variant: variant.name,
            path: (plan.prepared as { path?: string }).path,
            withSelf,
            bytesPerPeer: bytes,
            iterations,
            medianMs: median(ms),
            meanMs: mean(ms),
            minMs: minOf(ms),
            ownMedianMs: [0, 1].map((r) => median(spans.map((s) => s.own[r]))),
            startSkewMedianUs: median(spans.map((s) => s.skewUs)),
            postMedianUs: [0, 1].map((r) => median(spans.map((s) => s.postUs[r]))),
            verified: verdicts.every(Boolean),
          });
        }
      }
    }
    await engine.disconnect();
  } finally {
    await engine.destroy();
  }
}

async function rankMain(): Promise<void> {
  const info = rankFromEnv();
  const store = await openStore(info);
  if (cudart().deviceCount() < 2) throw new Error('engine-limits needs 2 GPUs (one per rank): the limits are copies between them');
  if (info.rank === 0) {
    const sizes = [...list(values.sizes), ...list(values['limit-sizes'])].map((label) => ({ label, bytes: parseSize(label) }));
    const ep = epCrossBytes().map((e) => ({ label: `EP ${e.shape} ${e.phase} cross-GPU bytes`, bytes: e.bytes }));
    emit({ kind: 'machine', gpus: nvmlDeviceNames(), cudaRuntime: cudart().runtimeVersion(), node: process.version, iterations, warmup });
    const t0 = monoNs();
    measureLimits([...sizes, ...ep]);
    console.log(`limits measured in ${((monoNs() - t0) / 1e9).toFixed(1)} s`);
  }
  await store.barrier('limits-done');
  for (const raw of list(values.variants)) await allToAll(store, parseVariant(raw), list(values['a2a-sizes']).map(parseSize));
  await store.close();
}

await runAsLocalRanks(here, 2, rankMain);
