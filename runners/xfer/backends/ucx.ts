// ucx: host memory on any node through libucp. Each endpoint's error-handling mode decides which
// transports UCX may use (ucx-options.ts: by default shared memory / CMA towards a peer on this
// node, the network towards other nodes). Host regions are allocated by UCX (or registered with
// ucp_mem_map); peers get their remote keys and this worker's address through the store.
// WRITE = ucp_put_nbx, READ = ucp_get_nbx, then a flush per endpoint so a WRITE is complete at
// the target when execute() returns. Several execute() calls may be in flight at once: each polls
// its own requests, and completes as soon as they are done, whatever the others do (with 'flush'
// completion it waits on its endpoints' flushes, which also cover the others' puts and gets). What each
// put/get is posted with, and whether every request or only the flush is polled, are the `post`
// and `completion` choices (ucx-options.ts).
import fs from 'node:fs';
import { monoNs, yieldToEventLoop } from '../clock.ts';
import { TransferError, XferError } from '../errors.ts';
import { hostRegion, type MemoryKind, type Region } from '../memory.ts';
import { ucp, type Ucp, type UcpErrorMode, type UcpRequest } from '../native/ucp.ts';
import { resolveRequests, type RemoteRegion, type ResolvedRequest } from './resolve.ts';
import type { Backend, BackendContext, ExecuteOptions, PeerView, PreparedPlan, RequestTiming, XferRequest, XferResult } from './types.ts';
import {
  endpointErrorMode,
  resolveUcxChoices,
  type UcxCompletion,
  type UcxErrorHandling,
  type UcxMemory,
  type UcxOptions,
  type UcxPost,
} from './ucx-options.ts';
import { UcxProgressDriver } from './ucx-progress.ts';
import { UcxProgressThread } from './ucx-progress-thread.ts';

export type { UcxOptions } from './ucx-options.ts';

interface UcxPlan extends PreparedPlan {
  /** `param`: the put/get's request parameters (the backend's `post` choice). */
  resolved: (ResolvedRequest & { ep: bigint; epIndex: number; rkey: bigint; param: Buffer })[];
  /** The plan's endpoints, each flushed once per execute(). */
  endpoints: { ep: bigint; peer: number }[];
}

interface Peer {
  ep: bigint;
  mode: UcpErrorMode;
  rkeys: Map<string, bigint>;
  regions: Map<string, RemoteRegion>;
  failure?: string;
}

const CLOSE_TIMEOUT_MS = 5_000;

export class UcxBackend implements Backend {
  readonly name = 'ucx' as const;
  readonly memoryKinds: readonly MemoryKind[];
  readonly twoSided = false;
  private readonly ucp: Ucp;
  private readonly context: bigint;
  private readonly worker: bigint;
  private readonly driver: UcxProgressDriver | UcxProgressThread;
  private readonly memhs = new Map<Region, bigint>();
  /** Regions UCX allocated (memory 'ucx'), with their memory handles. */
  private readonly allocated = new Map<Region, bigint>();
  private readonly peers = new Map<number, Peer>();
  readonly errorHandling: UcxErrorHandling;
  readonly memory: UcxMemory;
  readonly post: UcxPost;
  readonly completion: UcxCompletion;
  /** Each registered region's put/get request parameters (the `post` choice), made at registration. */
  private readonly params = new Map<Region, Buffer>();
  /** NIXL's UCX defaults this UCX does not know (skipped, as NIXL skips them). */
  readonly skippedDefaults: string[];
  /** The engine's UCX defaults that the environment (or options.config) replaced, as logged. */
  readonly userReplacedDefaults: string[];
  /** A progress thread progresses the worker (nixlbench --enable_pt), not the rank's thread. */
  private readonly progressThread: boolean;

  constructor(
    private readonly ctx: BackendContext,
    options: UcxOptions = {},
  ) {
    ({ errorHandling: this.errorHandling, memory: this.memory, post: this.post, completion: this.completion } = resolveUcxChoices(options));
    this.ucp = ucp();
    const config: Record<string, string> = { ...options.config };
    if (options.tls) config.TLS = options.tls;
    if (options.netDevices) config.NET_DEVICES = options.netDevices;
    const init = this.ucp.init(config);
    ({ context: this.context, skippedDefaults: this.skippedDefaults, userReplaced: this.userReplacedDefaults } = init);
    // A user's own value wins over the engine's defaults (native/ucx-defaults.ts); the log says so once.
    if (ctx.rank === 0 && this.userReplacedDefaults.length > 0) console.error(`ucx: kept the user's ${this.userReplacedDefaults.join(', ')}`);
    this.progressThread = options.progressThread ?? false;
    this.worker = this.ucp.workerCreate(this.context, this.progressThread ? 'multi' : 'single');
    const eventFd = this.ucp.workerEventFd(this.worker);
    this.driver = this.progressThread ? new UcxProgressThread(this.worker, eventFd) : new UcxProgressDriver(this.ucp, this.worker, eventFd, ctx.localWorldSize);
    this.driver.start();
    this.memoryKinds = ucxHasCudaSupport() ? ['host', 'gpu'] : ['host'];
  }

  /** The error-handling mode of each connected peer's endpoint. */
  endpointModes(): Map<number, UcpErrorMode> {
    return new Map([...this.peers].map(([rank, p]) => [rank, p.mode]));
  }

  /** With memory 'ucx': host memory that UCX allocates and registers; else the engine allocates. */
  allocateHost(name: string, size: number, owner: { rank: number; node: string }): Region | undefined {
    if (this.memory !== 'ucx') return undefined;
    const { memh, address } = this.ucp.memAllocate(this.context, Math.max(size, 1));
    const region = hostRegion(name, address, size, { shm: '', owner }, () => {
      // destroy() may have unmapped it already
      if (this.allocated.delete(region)) this.ucp.memUnmap(this.context, memh);
    });
    this.allocated.set(region, memh);
    // Touch every page now, as the engine's own allocations do (MAP_POPULATE): UCX's shared-memory
    // allocation faults pages in at first use, which would land in the first timed transfer.
    region.fill(0);
    return region;
  }

  /** With a progress thread: its progress calls that found work; undefined without one. */
  progressThreadCalls(): number | undefined {
    return this.driver instanceof UcxProgressThread ? this.driver.progressed : undefined;
  }

  localInfo(): unknown {
    return { address: this.ucp.workerAddress(this.worker), version: this.ucp.versionString() };
  }

  register(region: Region): unknown {
    if (!this.memoryKinds.includes(region.kind)) {
      throw new XferError(`ucx: region '${region.name}' is ${region.kind} memory, and this UCX (${this.ucp.versionString()}) has no CUDA transport`);
    }
    const memh = this.allocated.get(region) ?? this.ucp.memMap(this.context, region.address, Math.max(region.size, 1));
    this.memhs.set(region, memh);
    this.params.set(region, this.ucp.requestParam(this.post === 'plain' ? null : memh, this.post === 'nixl'));
    return { rkey: this.ucp.rkeyPack(this.context, memh) };
  }

  deregister(region: Region): void {
    const memh = this.memhs.get(region);
    if (memh === undefined) return;
    this.memhs.delete(region);
    this.params.delete(region);
    if (!this.allocated.has(region)) this.ucp.memUnmap(this.context, memh); // UCX's own: unmapped by close()
  }

  async connect(peers: PeerView[]): Promise<void> {
    for (const view of peers) {
      const { address } = view.info as { address: Buffer };
      const mode = endpointErrorMode(this.errorHandling, view.node === this.ctx.node);
      const peer: Peer = { ep: 0n, mode, rkeys: new Map(), regions: new Map() };
      // A progress thread would run the error handler on its own thread while holding the worker's
      // lock, and koffi runs a JS callback only on the rank's thread: that thread could then block
      // on the same lock (any put/get/flush), a deadlock. With a progress thread the endpoint keeps
      // its mode (its transports) without a handler; a failed peer still fails its requests and is
      // named through the store.
      const onError = this.progressThread ? undefined : (status: string) => (peer.failure = status);
      peer.ep = this.ucp.epCreate(this.worker, address, mode, onError);
      for (const [name, { descriptor, extras }] of view.regions) {
        peer.rkeys.set(name, this.ucp.rkeyUnpack(peer.ep, (extras as { rkey: Buffer }).rkey));
        peer.regions.set(name, { address: BigInt(descriptor.address), size: descriptor.size });
      }
      this.peers.set(view.rank, peer);
    }
  }

  async disconnect(): Promise<void> {
    const closing: { rank: number; request: bigint }[] = [];
    for (const [rank, peer] of this.peers) {
      for (const rkey of peer.rkeys.values()) this.ucp.rkeyDestroy(rkey);
      // Forced close needs peer error handling (UCX's rule); otherwise the close flushes.
      const request = this.ucp.epClose(peer.ep, peer.mode === 'peer' && peer.failure !== undefined);
      if (request !== null) closing.push({ rank, request });
    }
    this.peers.clear();
    const deadline = Date.now() + CLOSE_TIMEOUT_MS;
    for (const { request } of closing) {
      // A peer that already went away cannot acknowledge: closing is best effort, bounded in time.
      while (this.stateOrFailed(request) === 'pending' && Date.now() < deadline) {
        if (!this.driver.drain()) await yieldToEventLoop();
      }
      this.ucp.requestFree(request);
    }
  }

  async prepare(requests: readonly XferRequest[], locals: Map<string, Region>): Promise<UcxPlan> {
    const regions = new Map([...this.peers].map(([rank, p]) => [rank, p.regions]));
    const endpoints: UcxPlan['endpoints'] = [];
    const resolved = resolveRequests('ucx', requests, locals, regions).map((r) => {
      const peer = this.peers.get(r.request.peer)!;
      let epIndex = endpoints.findIndex((e) => e.ep === peer.ep);
      if (epIndex < 0) epIndex = endpoints.push({ ep: peer.ep, peer: r.request.peer }) - 1;
      return { ...r, ep: peer.ep, epIndex, rkey: peer.rkeys.get(r.request.remote)!, param: this.requestParam(locals.get(r.request.local)!) };
    });
    return { requests, resolved, endpoints, bytes: resolved.reduce((sum, r) => sum + r.length, 0) };
  }

  /** The request parameters of a put/get from `local` (the `post` choice). */
  private requestParam(local: Region): Buffer {
    const param = this.params.get(local);
    if (!param) throw new XferError(`ucx: local region '${local.name}' is not registered`);
    return param;
  }

  async execute(plan: PreparedPlan, options: ExecuteOptions): Promise<XferResult> {
    // The hot path of every benchmark: no closure or string per request unless it is pending.
    const { resolved, endpoints } = plan as UcxPlan;
    const u = this.ucp;
    const timings: RequestTiming[] = new Array(resolved.length);
    const flushDoneNs = new Array<number>(endpoints.length).fill(0);
    let open: UcxOp[] = [];
    const flushOnly = this.completion === 'flush';
    const startNs = monoNs();
    let postedNs = startNs;
    try {
      // A peer known dead is not written to: over shared memory the bytes would "arrive" anyway.
      for (const e of endpoints) this.throwIfPeerFailed(e.peer);
      for (let index = 0; index < resolved.length; index++) {
        const r = resolved[index];
        const postNs = monoNs();
        let request: UcpRequest;
        try {
          request = r.request.op === 'WRITE' ? u.put(r.ep, r.src, r.length, r.remote, r.rkey, r.param) : u.get(r.ep, r.dst, r.length, r.remote, r.rkey, r.param);
        } catch (err) {
          throw new PeerFailure(r.request.peer, (err as Error).message);
        }
        timings[index] = { postNs, doneNs: request === null ? monoNs() : 0 };
        if (request === null) continue;
        // 'flush': UCX completes a freed request internally; the endpoint's flush (below) covers it
        if (flushOnly) u.requestFree(request);
        else open.push({ index, peer: r.request.peer, epIndex: r.epIndex, request, what: `${r.request.op} of ${r.length} bytes` });
      }
      // A flush completes once every put/get on its endpoint is complete at the target.
      for (let e = 0; e < endpoints.length; e++) {
        let request: UcpRequest;
        try {
          request = u.epFlush(endpoints[e].ep);
        } catch (err) {
          throw new PeerFailure(endpoints[e].peer, (err as Error).message);
        }
        if (request === null) flushDoneNs[e] = monoNs();
        else open.push({ index: -1, peer: endpoints[e].peer, epIndex: e, request, what: 'flush' });
      }
      postedNs = monoNs();
      const posted = open;
      open = []; // complete() frees what it leaves open
      if (posted.length > 0) await this.complete(posted, timings, flushDoneNs, options.timeoutMs);
    } catch (err) {
      for (const o of open) u.requestFree(o.request); // UCX completes freed requests internally
      throw await this.explain(err);
    }
    // A WRITE is complete (visible at the target) when its endpoint's flush is, and so is an
    // operation freed unfinished ('flush' completion).
    for (let i = 0; i < resolved.length; i++) {
      if (resolved[i].request.op === 'WRITE' || timings[i].doneNs === 0) timings[i].doneNs = Math.max(timings[i].doneNs, flushDoneNs[resolved[i].epIndex]);
    }
    return { startNs, postedNs, endNs: monoNs(), bytes: plan.bytes, requests: timings };
  }

  /** Progresses until every operation is done; on failure frees those still open and throws. */
  private async complete(pending: UcxOp[], timings: RequestTiming[], flushDoneNs: number[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let open = pending;
    try {
      while (open.length > 0) {
        for (const o of open) this.throwIfPeerFailed(o.peer);
        if (Date.now() > deadline) {
          throw new TransferError(`ucx: ${open.length} operations (${open[0].what} with rank ${open[0].peer}, ...) not complete after ${timeoutMs} ms`, 'ucx');
        }
        const progressed = this.driver.drain();
        const still: UcxOp[] = [];
        for (const o of open) {
          let state: 'done' | 'pending';
          try {
            state = this.ucp.requestState(o.request, o.what);
          } catch (err) {
            throw new PeerFailure(o.peer, (err as Error).message);
          }
          if (state === 'pending') {
            still.push(o);
            continue;
          }
          this.ucp.requestFree(o.request);
          if (o.index >= 0) timings[o.index].doneNs = monoNs();
          else flushDoneNs[o.epIndex] = monoNs();
        }
        open = still;
        if (!progressed && open.length > 0) await yieldToEventLoop();
      }
    } catch (err) {
      for (const o of open) this.ucp.requestFree(o.request); // UCX completes freed requests internally
      throw err;
    }
  }

  async destroy(): Promise<void> {
    await this.disconnect();
    for (const region of [...this.memhs.keys()]) this.deregister(region);
    for (const region of [...this.allocated.keys()]) region.close();
    await this.driver.stop();
    this.ucp.workerDestroy(this.worker);
    this.ucp.cleanup(this.context);
  }

  private stateOrFailed(request: bigint): 'done' | 'pending' {
    try {
      return this.ucp.requestState(request, 'ucp_ep_close_nbx');
    } catch {
      return 'done';
    }
  }

  private throwIfPeerFailed(rank: number): void {
    const failure = this.peers.get(rank)?.failure;
    if (failure || this.ctx.store.deadRanks.has(rank)) throw new PeerFailure(rank, failure ?? 'no endpoint error yet');
  }

  /** The error for a failed transfer: which peer, and whether the store saw it die (given a moment to). */
  private async explain(err: unknown): Promise<unknown> {
    if (!(err instanceof PeerFailure)) return err;
    const { rank, detail } = err;
    const died = (await this.ctx.store.learnIfDead(rank)) ? `rank ${rank} died (its store connection was lost); ` : '';
    return new TransferError(`ucx: transfer with rank ${rank} failed: ${died}${detail}`, 'ucx', rank, [...this.ctx.store.deadRanks]);
  }
}

interface UcxOp {
  /** Request index in the plan, -1 for a flush. */
  index: number;
  peer: number;
  epIndex: number;
  request: bigint;
  what: string;
}

class PeerFailure extends XferError {
  constructor(
    readonly rank: number,
    readonly detail: string,
  ) {
    super(`rank ${rank}: ${detail}`);
  }
}

/** Whether the installed UCX loads a CUDA transport module (then it can move GPU memory). */
export function ucxHasCudaSupport(): boolean {
  const dirs = [process.env.UCX_MODULE_DIR, '/usr/lib/x86_64-linux-gnu/ucx', '/usr/lib/aarch64-linux-gnu/ucx', '/usr/lib64/ucx', '/usr/local/lib/ucx', '/opt/ucx/lib/ucx'];
  return dirs.some((dir) => {
    try {
      return !!dir && fs.readdirSync(dir).some((f) => f.startsWith('libuct_cuda'));
    } catch {
      return false;
    }
  });
}
