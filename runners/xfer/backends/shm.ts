// shm: same-node host memory. Peers' POSIX shared-memory regions are mapped into this process and
// transfers are memcpy. Large requests are split into chunks copied on koffi's worker threads in
// parallel (one memcpy thread rarely saturates memory bandwidth); small ones are copied inline, at
// the post. Several execute() calls may be in flight: a later one whose copies are inline
// completes before an earlier one still copying on worker threads.
import os from 'node:os';
import { monoNs } from '../clock.ts';
import { TransferError } from '../errors.ts';
import { mapPeerHost, type MappedRegion, type Region } from '../memory.ts';
import { libc } from '../native/libc.ts';
import { requireMemoryKind, requireSameNode } from './guards.ts';
import { resolveRequests, type ResolvedRequest } from './resolve.ts';
import type { Backend, BackendContext, ExecuteOptions, PeerView, PreparedPlan, XferRequest, XferResult } from './types.ts';

export interface ShmOptions {
  /** Copies in flight at once on worker threads. Default: min(4, CPUs). 1 = plain memcpy. */
  threads?: number;
  /** Requests below this size are copied inline on the main thread. Default 1 MiB. */
  inlineBelow?: number;
}

interface Chunk {
  request: number;
  dst: bigint;
  src: bigint;
  length: number;
}

interface ShmPlan extends PreparedPlan {
  resolved: ResolvedRequest[];
  /** Requests copied inline on the main thread, in order. */
  inline: number[];
  /** Pieces of the large requests, copied on worker threads. */
  chunks: Chunk[];
  /** Chunks per request (0 for inline ones). */
  chunksPerRequest: number[];
}

export class ShmBackend implements Backend {
  readonly name = 'shm' as const;
  readonly memoryKinds = ['host'] as const;
  readonly twoSided = false;
  readonly nodeLocal = { means: 'shared memory', instead: 'ucx' };
  private readonly peerRegions = new Map<number, Map<string, { address: bigint; size: number }>>();
  private readonly mappings: MappedRegion[] = [];
  private readonly threads: number;
  private readonly inlineBelow: number;

  constructor(
    private readonly ctx: BackendContext,
    options: ShmOptions = {},
  ) {
    libc(); // fail here, not at the first transfer, if libc cannot be bound
    this.threads = Math.max(1, options.threads ?? Math.min(4, os.availableParallelism()));
    this.inlineBelow = options.inlineBelow ?? 1 << 20;
  }

  localInfo(): unknown {
    return null;
  }

  register(region: Region): unknown {
    requireMemoryKind('shm', this.memoryKinds, region);
    return null;
  }

  deregister(): void {}

  async connect(peers: PeerView[]): Promise<void> {
    for (const peer of peers) {
      requireSameNode('shm', this.ctx, peer, this.nodeLocal.means, this.nodeLocal.instead);
      const regions = new Map<string, { address: bigint; size: number }>();
      for (const [name, { descriptor }] of peer.regions) {
        if (descriptor.kind !== 'host') continue;
        if (peer.rank === this.ctx.rank) {
          regions.set(name, { address: BigInt(descriptor.address), size: descriptor.size });
        } else {
          const mapping = mapPeerHost(descriptor);
          this.mappings.push(mapping);
          regions.set(name, { address: mapping.address, size: mapping.size });
        }
      }
      this.peerRegions.set(peer.rank, regions);
    }
  }

  async disconnect(): Promise<void> {
    for (const m of this.mappings.splice(0)) m.close();
    this.peerRegions.clear();
  }

  async prepare(requests: readonly XferRequest[], locals: Map<string, Region>): Promise<ShmPlan> {
    const resolved = resolveRequests('shm', requests, locals, this.peerRegions);
    const inline: number[] = [];
    const chunks: Chunk[] = [];
    const chunksPerRequest = resolved.map((r, i) => {
      if (r.length < this.inlineBelow || this.threads === 1) {
        inline.push(i);
        return 0;
      }
      const chunkBytes = Math.max(this.inlineBelow / 2, Math.ceil(r.length / this.threads / 4096) * 4096);
      let n = 0;
      for (let done = 0; done < r.length; done += chunkBytes, n++) {
        chunks.push({ request: i, dst: r.dst + BigInt(done), src: r.src + BigInt(done), length: Math.min(chunkBytes, r.length - done) });
      }
      return n;
    });
    return { requests, resolved, inline, chunks, chunksPerRequest, bytes: resolved.reduce((sum, r) => sum + r.length, 0) };
  }

  async execute(plan: PreparedPlan, options: ExecuteOptions): Promise<XferResult> {
    const { resolved, inline, chunks, chunksPerRequest } = plan as ShmPlan;
    const c = libc();
    const timings = resolved.map(() => ({ postNs: 0, doneNs: 0 }));
    const startNs = monoNs();
    let workers: Promise<void>[] = [];
    if (chunks.length > 0) {
      // Worker-thread copies first, so they run while the main thread does the small ones.
      const chunksLeft = [...chunksPerRequest];
      let next = 0;
      const worker = async () => {
        while (next < chunks.length) {
          const chunk = chunks[next++];
          await c.memcpyAsync(chunk.dst, chunk.src, chunk.length);
          if (--chunksLeft[chunk.request] === 0) timings[chunk.request].doneNs = monoNs();
        }
      };
      for (const chunk of chunks) timings[chunk.request].postNs = startNs;
      workers = Array.from({ length: Math.min(this.threads, chunks.length) }, worker);
    }
    // Inline copies one after the other: each is posted when the one before it is done (one clock
    // read per request: at 64 KiB the copy itself takes ~2 us).
    let now = monoNs();
    for (const i of inline) {
      const r = resolved[i];
      timings[i].postNs = now;
      c.memcpy(r.dst, r.src, r.length);
      now = monoNs();
      timings[i].doneNs = now;
    }
    const postedNs = now; // copies are posted by doing them (inline) or queuing them (threads)
    if (workers.length > 0) await withTimeout(Promise.all(workers), options.timeoutMs, plan.requests.length);
    return { startNs, postedNs, endNs: workers.length > 0 ? monoNs() : now, bytes: plan.bytes, requests: timings };
  }

  async destroy(): Promise<void> {
    await this.disconnect();
  }
}

async function withTimeout(work: Promise<unknown>, timeoutMs: number, count: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TransferError(`shm: ${count} requests not done within ${timeoutMs} ms`, 'shm')), timeoutMs);
  });
  try {
    await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
