// libfabric: host (and, where the provider has FI_HMEM, GPU) memory on any node through OFI's
// reliable datagram endpoints (FI_EP_RDM), as NIXL's LIBFABRIC backend and NIXL's EFA benchmarking suite use it.
// One fabric/domain/endpoint/CQ/AV per rank; the endpoint's address goes to the peers through the
// store and into their address vectors. Regions are registered honouring the provider's FI_MR_*
// mode bits (see register()). WRITE = fi_write, READ = fi_read, posted one after the other without
// waiting (the provider's queue and the context pool are the only limits), completed out of order
// from the CQ; every operation asks FI_DELIVERY_COMPLETE, so a WRITE is complete at the target when
// its completion arrives. Provider: LibfabricOptions.provider, else FI_PROVIDER (libfabric's own
// filter), else libfabric's first that offers RMA on RDM endpoints (efa or verbs where present).
import { monoNs, yieldToEventLoop } from '../clock.ts';
import { describeRanks, NativeCallError, TransferError, XferError } from '../errors.ts';
import type { MemoryKind, Region } from '../memory.ts';
import { cudart } from '../native/cudart.ts';
import { libc } from '../native/libc.ts';
import * as A from '../native/libfabric-abi.ts';
import { libfabric, type FabricInfo, type Fid, type Libfabric } from '../native/libfabric.ts';
import { requireMemoryKind, requireSameNode } from './guards.ts';
import { FabricContexts, type FabricRun } from './libfabric-contexts.ts';
import { openFabricEndpoint, type FabricEndpoint, type ProviderChoice } from './libfabric-endpoint.ts';
import { LibfabricProgressDriver } from './libfabric-progress.ts';
import { resolveRequests, type RemoteRegion, type ResolvedRequest } from './resolve.ts';
import type { Backend, BackendContext, ExecuteOptions, PeerView, PreparedPlan, XferRequest, XferResult } from './types.ts';

/** Which provider and domain (default: FI_PROVIDER's choice, the provider's first domain). */
export type LibfabricOptions = ProviderChoice;

/** Reads of the CQ in a row that completed nothing before execute() waits on the wait fd, and how long at most. */
const IDLE_READS_BEFORE_WAIT = 16;
const IDLE_WAIT_MS = 1;

const ACCESS = A.FI_READ | A.FI_WRITE | A.FI_REMOTE_READ | A.FI_REMOTE_WRITE;

interface Registration {
  mr: Fid;
  desc: bigint | null;
}

interface Peer {
  fiAddr: bigint;
  regions: Map<string, RemoteRegion & { key: bigint }>;
}

interface FabricPlan extends PreparedPlan {
  resolved: (ResolvedRequest & { fiAddr: bigint; key: bigint; desc: bigint | null })[];
}

export class LibfabricBackend implements Backend {
  readonly name = 'libfabric' as const;
  readonly memoryKinds: readonly MemoryKind[];
  readonly twoSided = false;
  /** Set for the shm provider: it reaches the ranks of one node only. */
  readonly nodeLocal?: { means: string; instead: string };
  private readonly lf: Libfabric;
  private readonly fabric: FabricEndpoint;
  private readonly info: FabricInfo;
  private readonly contexts: FabricContexts;
  private readonly driver: LibfabricProgressDriver;
  private readonly registrations = new Map<Region, Registration>();
  private readonly peers = new Map<number, Peer>();
  /** fi_addr of every address inserted so far (reconnects reuse them). */
  private readonly addresses = new Map<string, bigint>();
  private nextKey = 1n;

  constructor(
    private readonly ctx: BackendContext,
    options: LibfabricOptions = {},
  ) {
    const lf = (this.lf = libfabric());
    const shm = (provider: string) => provider.split(';')[0] === 'shm';
    this.fabric = openFabricEndpoint(lf, options, {
      gpu: (probeValue(() => cudart().deviceCount()) ?? 0) > 0,
      peers: ctx.worldSize,
      // shm's fast RMA (one process_vm_writev/readv by the initiator, complete when it returns)
      // is off under FI_DELIVERY_COMPLETE, which would make every operation wait for the target
      // to progress. Without CMA (FI_SHM_DISABLE_CMA) completions need the flag again.
      deliveryComplete: (provider) => !shm(provider) || truthy(process.env.FI_SHM_DISABLE_CMA),
    });
    const { info, fabric, cq, waitFd } = this.fabric;
    this.info = info;
    this.memoryKinds = (info.caps & A.FI_HMEM) !== 0n ? ['host', 'gpu'] : ['host'];
    if (shm(info.provider)) this.nodeLocal = { means: "libfabric's shm provider", instead: 'libfabric with FI_PROVIDER=tcp, efa or verbs' };
    this.contexts = new FabricContexts(Math.min(Math.max(info.txSize, 16), 1024));
    this.driver = new LibfabricProgressDriver(() => this.drain(), waitFd === undefined ? undefined : { fd: waitFd, armed: () => lf.tryWait(fabric, cq) });
    this.driver.start();
  }

  localInfo(): unknown {
    return { address: this.lf.getName(this.fabric.ep), provider: this.info.provider };
  }

  /**
   * fi_mr_reg with every access; the provider's modes decide the rest: FI_MR_PROV_KEY (else keys
   * are chosen here, unique in the domain), FI_MR_VIRT_ADDR (peers address the target by virtual
   * address, else by offset in the region), FI_MR_ENDPOINT (bound to the endpoint and enabled),
   * FI_MR_LOCAL (local buffers carry their descriptor: always passed), FI_MR_ALLOCATED (regions
   * are mapped before they are registered), FI_MR_HMEM (GPU regions through fi_mr_regattr).
   */
  register(region: Region): unknown {
    requireMemoryKind('libfabric', this.memoryKinds, region);
    const mode = this.info.mrMode;
    const requestedKey = mode & A.FI_MR_PROV_KEY ? 0n : this.nextKey++;
    const gpuDevice = region.kind === 'gpu' ? region.device ?? this.ctx.device : undefined;
    const mr = this.registerMemory(region, requestedKey, gpuDevice);
    try {
      if (mode & A.FI_MR_ENDPOINT) {
        this.lf.bind(mr, this.fabric.ep, 0n, 'fi_mr_bind(ep)');
        this.lf.enable(mr, 'fi_mr_enable');
      }
    } catch (err) {
      this.lf.close(mr, 'mr');
      throw err;
    }
    this.registrations.set(region, { mr, desc: this.lf.mrDesc(mr) });
    return { key: this.lf.mrKey(mr).toString(), virtAddr: (mode & A.FI_MR_VIRT_ADDR) !== 0 };
  }

  /** fi_mr_reg(attr); a provider that offers FI_HMEM yet has no CUDA support built in is named as such. */
  private registerMemory(region: Region, requestedKey: bigint, gpuDevice: number | undefined): Fid {
    try {
      return this.lf.mrReg(this.fabric.domain, region.address, Math.max(region.size, 1), ACCESS, requestedKey, gpuDevice);
    } catch (err) {
      if (gpuDevice !== undefined && err instanceof NativeCallError && err.code === -A.FI_ENOSYS) {
        throw new XferError(
          `libfabric: provider '${this.info.provider}' offers FI_HMEM but cannot register CUDA memory (fi_mr_regattr: ${err.detail}): ` +
            'this libfabric was built without CUDA support or did not find libcuda; use host memory (DRAM), or a libfabric built with CUDA',
        );
      }
      throw err;
    }
  }

  deregister(region: Region): void {
    const registration = this.registrations.get(region);
    if (!registration) return;
    this.registrations.delete(region);
    this.lf.close(registration.mr, `mr of region '${region.name}'`);
  }

  async connect(peers: PeerView[]): Promise<void> {
    for (const view of peers) {
      const { address, provider } = view.info as { address: Buffer; provider: string };
      if (provider !== this.info.provider) {
        throw new TransferError(
          `libfabric: rank ${view.rank} uses provider '${provider}', rank ${this.ctx.rank} '${this.info.provider}': give every rank the same FI_PROVIDER`,
          'libfabric',
          view.rank,
        );
      }
      if (this.nodeLocal) requireSameNode('libfabric', this.ctx, view, this.nodeLocal.means, this.nodeLocal.instead);
      const hex = address.toString('hex');
      let fiAddr = this.addresses.get(hex);
      if (fiAddr === undefined) {
        try {
          fiAddr = this.lf.avInsert(this.fabric.av, address);
        } catch (err) {
          throw new TransferError(`libfabric: cannot add rank ${view.rank}'s address (${hex}) to the address vector: ${(err as Error).message}`, 'libfabric', view.rank);
        }
        this.addresses.set(hex, fiAddr);
      }
      const regions = new Map<string, RemoteRegion & { key: bigint }>();
      for (const [name, { descriptor, extras }] of view.regions) {
        const { key, virtAddr } = extras as { key: string; virtAddr: boolean };
        // Without FI_MR_VIRT_ADDR a target is addressed by its offset in the region.
        regions.set(name, { address: virtAddr ? BigInt(descriptor.address) : 0n, size: descriptor.size, key: BigInt(key) });
      }
      this.peers.set(view.rank, { fiAddr, regions });
    }
  }

  async disconnect(): Promise<void> {
    // Reliable datagram endpoints hold no connection per peer; the address vector keeps the
    // addresses for a reconnect.
    this.peers.clear();
  }

  async prepare(requests: readonly XferRequest[], locals: Map<string, Region>): Promise<FabricPlan> {
    const regions = new Map([...this.peers].map(([rank, p]) => [rank, p.regions as Map<string, RemoteRegion>]));
    const resolved = resolveRequests('libfabric', requests, locals, regions).map((r) => {
      const peer = this.peers.get(r.request.peer)!;
      const desc = this.registrations.get(locals.get(r.request.local)!)?.desc ?? null;
      if (BigInt(r.length) > this.info.maxMsgSize) {
        throw new XferError(`libfabric: a request of ${r.length} bytes exceeds ${this.info.provider}'s largest message (${this.info.maxMsgSize} bytes)`);
      }
      return { ...r, fiAddr: peer.fiAddr, key: peer.regions.get(r.request.remote)!.key, desc };
    });
    return { requests, resolved, bytes: resolved.reduce((sum, r) => sum + r.length, 0) };
  }

  async execute(plan: PreparedPlan, options: ExecuteOptions): Promise<XferResult> {
    const { resolved } = plan as FabricPlan;
    const run = this.contexts.begin(resolved.length);
    const startNs = monoNs();
    const deadline = Date.now() + options.timeoutMs;
    try {
      for (let i = 0; i < resolved.length; i++) {
        const r = resolved[i];
        for (;;) {
          const context = run.acquire(i);
          if (context !== undefined) {
            run.timings[i].postNs = monoNs();
            const posted =
              r.request.op === 'WRITE'
                ? this.fabric.rma.write(r.local, r.length, r.desc, r.fiAddr, r.remote, r.key, context)
                : this.fabric.rma.read(r.local, r.length, r.desc, r.fiAddr, r.remote, r.key, context);
            if (posted) break;
            run.release(context);
          }
          // The provider's queue or the context pool is full (or the peer is not reachable yet).
          await this.waitForProgress(run, deadline, options.timeoutMs, resolved, r.request.peer);
        }
      }
      const postedNs = monoNs();
      while (run.open > 0 || run.failure) await this.waitForProgress(run, deadline, options.timeoutMs, resolved);
      return { startNs, postedNs, endNs: monoNs(), bytes: plan.bytes, requests: run.timings };
    } catch (err) {
      throw await this.explain(err, resolved);
    } finally {
      run.end();
    }
  }

  async destroy(): Promise<void> {
    await this.driver.stop();
    this.peers.clear();
    // The endpoint goes first (no operation refers to a region after), then the regions, then the rest.
    const endpoint = this.fabric.ep;
    this.lf.close(endpoint, 'endpoint');
    for (const region of [...this.registrations.keys()]) this.deregister(region);
    this.fabric.close((fid) => fid !== endpoint);
  }

  /** Reads the CQ and completes what it holds; true when anything completed. Throws a failed operation's error. */
  private drain(): boolean {
    return this.contexts.drain(this.fabric.cqOps);
  }

  /** Reads the CQ once; when nothing completed, fails on a dead peer or the deadline, else yields. `posting`: the peer of a request not posted yet. */
  private async waitForProgress(run: FabricRun, deadline: number, timeoutMs: number, resolved: FabricPlan['resolved'], posting?: number): Promise<void> {
    this.driver.check();
    const progressed = this.drain();
    if (run.failure) throw Object.assign(new Error(run.failure.message), { requestIndex: run.failure.requestIndex });
    if (progressed) {
      run.idle = 0;
      return;
    }
    const waiting = [...(posting === undefined ? [] : [posting]), ...run.openRequests().map((i) => resolved[i].request.peer)];
    const dead = waiting.find((peer) => this.ctx.store.deadRanks.has(peer));
    if (dead !== undefined) throw new TransferError(`libfabric: transfer with rank ${dead} failed: rank ${dead} died (its store connection was lost)`, 'libfabric', dead, [dead]);
    if (Date.now() > deadline) {
      const open = [...new Set(run.openRequests().map((i) => resolved[i].request.peer))].sort((a, b) => a - b);
      const inFlight = run.open > 0 ? `${run.open} operation(s) with ${describeRanks(open)} not complete` : '';
      const stuck = posting === undefined ? '' : `rank ${posting} not reachable (${this.info.provider} kept refusing a post: FI_EAGAIN, or no local address free to connect)`;
      throw new TransferError(`libfabric: after ${timeoutMs} ms: ${[stuck, inFlight].filter(Boolean).join('; ')}`, 'libfabric', posting ?? open[0]);
    }
    // Nothing for a while: sleep on the CQ's wait fd (tcp) rather than spin. On 2 CPUs the spinning
    // initiator took the CPU the kernel's TCP and the target needed: 64 MiB WRITEs between two
    // network namespaces went from 0.48-1.29 to 0.68-3.17 GB/s (bench/netns-link.ts).
    if (this.fabric.waitFd !== undefined && ++run.idle > IDLE_READS_BEFORE_WAIT && this.lf.tryWait(this.fabric.fabric, this.fabric.cq)) {
      await libc().pollReadable(this.fabric.waitFd, IDLE_WAIT_MS);
    } else {
      await yieldToEventLoop();
    }
  }

  /** An operation that completed in error names its peer (and whether the store saw it die). */
  private async explain(err: unknown, resolved: FabricPlan['resolved']): Promise<unknown> {
    const failed = (err as { requestIndex?: number }).requestIndex;
    if (failed === undefined) return err;
    const { peer, op, length } = resolved[failed].request;
    const died = (await this.ctx.store.learnIfDead(peer)) ? `rank ${peer} died (its store connection was lost); ` : '';
    const dead = this.ctx.store.deadRanks;
    // A peer that gave up because a third rank died closes its endpoint: name the root cause too.
    const others = [...dead].filter((r) => r !== peer);
    const meanwhile = others.length > 0 ? ` (meanwhile ${describeRanks(others)} died: store connection lost)` : '';
    return new TransferError(`libfabric: ${op} of ${length} bytes with rank ${peer} failed: ${died}${(err as Error).message}${meanwhile}`, 'libfabric', peer, [...dead]);
  }
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|on|true|yes)$/i.test(value.trim());
}

function probeValue<T>(get: () => T): T | undefined {
  try {
    return get();
  } catch {
    return undefined;
  }
}
