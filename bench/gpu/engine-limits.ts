// The hardware's limits and the engine on the GPUs of one node, in the same run, for N
// ranks (--ranks, default 2; one GPU each). Rank 0 first measures the limits with plain CUDA
// (peer-copy-limits.ts: one way for every pair, the exchange of every GPU with every other at once
// timed per GPU and between gates on the GPUs, a copy inside GPU 0), at --sizes and at the
// cross-GPU bytes of the EP shapes in --ep (what rank 0 receives from the other GPUs per phase; on
// more than 2 GPUs the exchange rows send each peer an equal share of them). Then every rank runs
// the engine's all-to-all, S per peer, for each variant of the cuda backend in --variants: each
// rank WRITEs S to every other (the CT perftest's matrix) and, in a second row, also its own chunk
// (all_to_all_single's bytes). Each row is timed two ways, each verified byte for byte after its
// timed iterations:
// - host: as the CT perftest times an iteration (a store barrier, then the first rank's start to
//   the last rank's end on rank 0's clock: posting, the barrier's skew and completion polling in);
// - gated: the iterations back to back on the GPUs, each between a start and an end gate
//   (CudaBackend.runGatedIterations), the longest rank's GPU span: from the first rank's start to
//   the last rank's end, as the gated exchange limit is timed (same start and stop points).
// One JSON line per row goes to --out; summarize-limits.ts sets them against NCCL, EP and the KV
// pipe of the same run. More ranks than GPUs (XFER_RANKS_MAY_SHARE_GPU=1) checks the code only:
// ranks share GPUs and the rows say so.
// Command line: USAGE below (--help prints it).
import { fileURLToPath } from 'node:url';
import { parseSize } from '../../runners/common/size.ts';
import { cudart, monoNs, nvmlDeviceNames, openStore, rankFromEnv, XferEngine, type CudaOptions, type Store, type XferRequest } from '../../runners/xfer/index.ts';
import { CudaBackend } from '../../runners/xfer/backends/cuda.ts';
import { gateAreaBytes } from '../../runners/xfer/backends/cuda-gate.ts';
import { parseCudaCopyPath } from '../../runners/xfer/device-copy/copy-path.ts';
import { parseKernelShape } from '../../runners/xfer/device-copy/kernel-source.ts';
import { patternBytes } from '../../runners/xfer/pattern.ts';
import { epLayout } from '../../runners/xfer/benches/ep/ep-routing.ts';
import { crossGpuBytes } from '../../runners/xfer/benches/ep/ep-data-plane.ts';
import { appendJsonLine, runAsLocalRanks } from '../lib/local-ranks.ts';
import { maxOf, mean, median, minOf } from '../lib/stats.ts';
import { measureLimits, type LimitSize } from './peer-copy-limits.ts';
import { benchOptions } from '../lib/options.ts';

const USAGE = `usage: node --import tsx bench/gpu/engine-limits.ts [--out limits.jsonl] [--ranks 2] [--sizes 1M,16M,64M,256M,1G]
    [--limit-sizes 4G] [--a2a-sizes 1M,16M,64M,256M] [--variants copy-engine,kernel,auto]
    [--ep 128x7168x8,4096x7168x8] [--iters 20] [--warmup 5]
  --sizes: the limits' and --limit-sizes the limits' only (e.g. the KV pipe's commit); --a2a-sizes:
  the all-to-all's bytes per peer; a variant is copy-engine|kernel|auto[:CHUNK][@threads/unroll/
  streaming|cached], e.g. copy-engine:64M, kernel@1024/4/streaming; --ep: EP shapes tokens x hidden
  x topk (36 experts per rank, seed 1); --out: the JSON lines file (none if not given).`;

const here = fileURLToPath(import.meta.url);
const cli = benchOptions({
  options: {
    ranks: { type: 'string', default: '2' },
    sizes: { type: 'string', default: '1M,16M,64M,256M,1G' },
    /** Peer-copy limits only (not the all-to-all), e.g. the KV pipe's commit. */
    'limit-sizes': { type: 'string', default: '4G' },
    'a2a-sizes': { type: 'string', default: '1M,16M,64M,256M' },
    variants: { type: 'string', default: 'copy-engine,kernel,auto' },
    /** EP shapes tokens x hidden x topk (36 experts per rank, seed 1, --ranks ranks). */
    ep: { type: 'string', default: '128x7168x8,4096x7168x8' },
    iters: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    out: { type: 'string' },
  },
}, USAGE);
const { values } = cli;
const ranks = cli.wholeNumber('ranks', { min: 2 });
const iterations = cli.wholeNumber('iters');
const warmup = cli.wholeNumber('warmup', { min: 0 });
const limitSizes: LimitSize[] = [...cli.labelledSizes('sizes'), ...cli.labelledSizes('limit-sizes')];
const a2aSizes = cli.sizes('a2a-sizes', { min: 1 });
const epShapes = cli.listOf('ep', (shape) => (/^\d+x\d+x\d+$/.test(shape) ? shape : undefined), 'an EP shape tokens x hidden x topk, e.g. 128x7168x8');
const variants = cli.parsedList('variants', parseVariant);
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
  if (!m) throw new Error('expected copy-engine|kernel|auto[:CHUNK][@threads/unroll/streaming|cached]');
  const cuda: CudaOptions = { copy: parseCudaCopyPath(m[1], `--variants '${raw}'`) };
  if (m[2]) cuda.chunkBytes = parseSize(m[2]);
  if (m[3]) cuda.kernelShape = parseKernelShape(m[3], `--variants '${raw}'`);
  return { name: raw, cuda };
}

/**
 * Each EP shape's cross-GPU bytes per phase, as rank 0 receives them from the other GPUs: one-way
 * copies of those bytes; in the exchange rows each GPU sends each peer an equal share (16-byte
 * rounded), so every GPU receives them at once from all the others.
 */
function epLimitSizes(): LimitSize[] {
  return epShapes.flatMap((shape) => {
    const [tokens, hidden, topk] = shape.split('x').map(Number);
    const layout = epLayout({ ranks, tokens, hidden, expertsPerRank: EXPERTS_PER_RANK, topk, seed: 1 });
    return (['dispatch', 'combine', 'e2e'] as const).map((phase) => {
      const bytes = crossGpuBytes(layout, phase, 0).received;
      return { label: `EP ${shape} ${phase} cross-GPU bytes`, bytes, perPeer: Math.ceil(bytes / (ranks - 1) / 16) * 16 };
    });
  });
}

function emit(line: Record<string, unknown>): void {
  if (values.out) appendJsonLine(values.out, { date: new Date().toISOString(), ...line });
  else console.log(JSON.stringify(line));
}

interface Timed {
  /** Per iteration: the exchange's milliseconds (host: first start to last end; gated: longest rank's span). */
  ms: number[];
  /** Per rank: median of its own part (host: its execute(); gated: its GPU span). */
  ownMedianMs: number[];
  extra: Record<string, unknown>;
}

/** The engine's all-to-all for one backend variant, every size, without and with the self chunk, timed by the host and gated. */
async function allToAll(store: Store, variant: Variant, sizes: number[], gateSeq: { next: number }): Promise<void> {
  const info = rankFromEnv();
  const me = info.rank;
  const everyone = Array.from({ length: ranks }, (_, r) => r);
  const largest = maxOf(sizes);
  const engine = await XferEngine.create({ backend: 'cuda', rank: info, store, cuda: variant.cuda });
  try {
    const backend = engine.backend;
    if (!(backend instanceof CudaBackend)) throw new Error('engine-limits: the cuda backend is needed');
    // src: [chunk for rank 0 | chunk for rank 1 | ...]; dst: [from rank 0 | from rank 1 | ...] (all_to_all_single's layout)
    const src = engine.allocate('a2a-src', ranks * largest);
    const dst = engine.allocate('a2a-dst', ranks * largest);
    const gateArea = engine.allocate('a2a-gate', gateAreaBytes(ranks));
    gateArea.fill(0);
    for (const to of everyone) src.write(to * largest, patternBytes({ sender: me, receiver: to, iteration: 0 }, 0, largest));
    const expected = everyone.map((from) => Buffer.from(patternBytes({ sender: from, receiver: me, iteration: 0 }, 0, largest)));
    await engine.connect();
    const gate = backend.prepareGate({ region: 'a2a-gate', offset: 0 }, engine.regions);
    for (const bytes of sizes) {
      for (const withSelf of [false, true]) {
        const to = everyone.filter((r) => withSelf || r !== me);
        const requests: XferRequest[] = to.map((r) => ({ op: 'WRITE', peer: r, local: 'a2a-src', localOffset: r * largest, remote: 'a2a-dst', remoteOffset: me * largest, length: bytes }));
        const plan = await engine.prepare(requests);
        /** Runs `timed` with dst poisoned first (bytes never written do not match the pattern), then checks every chunk on every rank. */
        const verified = async (timed: () => Promise<Timed>): Promise<Timed & { verified: boolean }> => {
          dst.fill(0xa5);
          await store.barrier('a2a-poisoned');
          const t = await timed();
          await store.barrier('a2a-verify'); // every rank's writes are done
          const bad = to.filter((f) => Buffer.compare(expected[f].subarray(0, bytes), Buffer.from(dst.read(f * largest, bytes))) !== 0);
          const verdicts = await store.allGather('a2a-verified', bad.length === 0);
          return { ...t, verified: verdicts.every(Boolean) };
        };
        const host = await verified(async () => {
          const spans: { first: number; last: number; own: number[]; skewUs: number; postUs: number[] }[] = [];
          for (let i = -warmup; i < iterations; i++) {
            await store.barrier('a2a-iteration');
            const r = await engine.execute(plan);
            const all = await store.allGather('a2a-span', [store.toRank0Ns(r.startNs), store.toRank0Ns(r.endNs), r.postedNs - r.startNs]);
            if (i < 0) continue;
            const starts = all.map((x) => x[0]);
            spans.push({ first: minOf(starts), last: maxOf(all.map((x) => x[1])), own: all.map((x) => (x[1] - x[0]) / 1e6), skewUs: (maxOf(starts) - minOf(starts)) / 1e3, postUs: all.map((x) => x[2] / 1e3) });
          }
          return {
            ms: spans.map((s) => (s.last - s.first) / 1e6),
            ownMedianMs: everyone.map((r) => median(spans.map((s) => s.own[r]))),
            extra: { startSkewMedianUs: median(spans.map((s) => s.skewUs)), postMedianUs: everyone.map((r) => median(spans.map((s) => s.postUs[r]))) },
          };
        });
        const gated = await verified(async () => {
          const first = gateSeq.next;
          gateSeq.next += warmup + iterations;
          const t = await backend.runGatedIterations(plan.prepared, gate, first, warmup + iterations, store.defaultTimeoutMs);
          const all = await store.allGather('a2a-gated', [t.spanMs.slice(warmup), t.startWaitMs.slice(warmup)]);
          return {
            ms: Array.from({ length: iterations }, (_, i) => maxOf(all.map((r) => r[0][i]))),
            ownMedianMs: all.map((r) => median(r[0])),
            extra: { startGateWaitMedianUs: all.map((r) => median(r[1]) * 1000) },
          };
        });
        if (me === 0) {
          const summary = (t: Timed & { verified: boolean }) => ({ medianMs: median(t.ms), meanMs: mean(t.ms), minMs: minOf(t.ms), ownMedianMs: t.ownMedianMs, ...t.extra, verified: t.verified });
          emit({
            kind: 'a2a',
            ranks,
            variant: variant.name,
            path: (plan.prepared as { path?: string }).path,
            withSelf,
            bytesPerPeer: bytes,
            iterations,
            sharedGpus: ranks > cudart().deviceCount(),
            ...summary(host),
            gated: summary(gated),
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
  if (cudart().deviceCount() < 2) throw new Error('engine-limits needs 2 GPUs at least: the limits are copies between them');
  if (info.rank === 0) {
    emit({ kind: 'machine', gpus: nvmlDeviceNames(), ranks, cudaRuntime: cudart().runtimeVersion(), node: process.version, iterations, warmup });
    const t0 = monoNs();
    measureLimits([...limitSizes, ...epLimitSizes()], ranks, (row) => emit({ ...row }));
    console.log(`limits measured in ${((monoNs() - t0) / 1e9).toFixed(1)} s`);
  }
  await store.barrier('limits-done');
  const gateSeq = { next: 1 };
  for (const variant of variants) await allToAll(store, variant, a2aSizes, gateSeq);
  await store.close();
}

await runAsLocalRanks(here, ranks, rankMain);
