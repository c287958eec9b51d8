// shm: same-node host memory. Peers' POSIX shared-memory regions are mapped into this process and
// transfers are memcpy. Large requests are split into chunks copied on koffi's worker threads in
// parallel (one memcpy thread rarely saturates memory bandwidth); small ones are copied inline.
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

interface ShmPlan extends PreparedPlan {
  resolved: ResolvedRequest[];
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
    return { requests, resolved, bytes: resolved.reduce((sum, r) => sum + r.length, 0) };
  }

  async execute(plan: PreparedPlan, options: ExecuteOptions): Promise<XferResult> {
    const { resolved } = plan as ShmPlan;
    const c = libc();
    const timings = resolved.map(() => ({ postNs: 0, doneNs: 0 }));
    const chunks: { request: number; dst: bigint; src: bigint; length: number }[] = [];
    const chunksLeft = new Array<number>(resolved.length).fill(0);
    const startNs = monoNs();
    resolved.forEach((r, i) => {
      if (r.length < this.inlineBelow || this.threads === 1) return;
      const chunkBytes = Math.max(this.inlineBelow / 2, Math.ceil(r.length / this.threads / 4096) * 4096);
      for (let done = 0; done < r.length; done += chunkBytes) {
        const n = Math.min(chunkBytes, r.length - done);
        chunks.push({ request: i, dst: r.dst + BigInt(done), src: r.src + BigInt(done), length: n });
        chunksLeft[i]++;
      }
      timings[i].postNs = startNs;
    });
    // Worker-thread copies first, so they run while the main thread does the small ones.
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        const chunk = chunks[next++];
        await c.memcpyAsync(chunk.dst, chunk.src, chunk.length);
        if (--chunksLeft[chunk.request] === 0) timings[chunk.request].doneNs = monoNs();
      }
    };
    const workers = Array.from({ length: Math.min(this.threads, chunks.length) }, worker);
    resolved.forEach((r, i) => {
      if (chunksLeft[i] > 0) return;
      timings[i].postNs = monoNs();
      c.memcpy(r.dst, r.src, r.length);
      timings[i].doneNs = monoNs();
    });
    const postedNs = monoNs(); // copies are posted by doing them (inline) or queuing them (threads)
    await withTimeout(Promise.all(workers), options.timeoutMs, plan.requests.length);
    return { startNs, postedNs, endNs: monoNs(), bytes: plan.bytes, requests: timings };
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
