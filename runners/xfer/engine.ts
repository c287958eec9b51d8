// The transfer engine a benchmark uses: one backend, this rank's registered regions, the peers'
// regions (exchanged through the store at connect), prepared plans, posted plans in flight (as many
// at once as the caller posts, each completing on its own), and the control-plane times (init,
// connect, disconnect, reconnect, destroy) that the EP control-plane test reports.
import { monoNs } from './clock.ts';
import { XferError } from './errors.ts';
import { allocateGpu, allocateHost, regionView, type AllocationStyle, type MemoryKind, type Region, type RegionDescriptor } from './memory.ts';
import { allocateHugepageHost } from './memory-hugepages.ts';
import { allocateVmmGpu } from './memory-vmm.ts';
import { cudart } from './native/cudart.ts';
import { describeRankDevice, placeRank, ranksMayShareGpu } from './gpu-placement.ts';
import { rankDeviceLine } from '../common/rank-device-line.ts';
import type { RankInfo } from './rank.ts';
import type { Store } from './store.ts';
import { createBackend, type BackendOptions } from './backends/registry.ts';
import type { Backend, BackendName, PeerView, PreparedPlan, XferRequest, XferResult } from './backends/types.ts';
import { refuseUcxFlags } from './backends/ucx-options.ts';

export interface EngineOptions extends BackendOptions {
  backend: BackendName;
  rank: RankInfo;
  store: Store;
  /** CUDA device (GPU backends and GPU regions). Default: local rank modulo the device count. */
  device?: number;
  /** Default limit of one execute(). Default: the store's wait timeout. */
  timeoutMs?: number;
}

/** 'init': libraries and backend; 'register': one allocate() (buffer and its registration). */
export type ControlPhase = 'init' | 'register' | 'connect' | 'disconnect' | 'reconnect' | 'destroy';

/** A prepared plan of this engine; run it with execute() as often as needed. */
export interface Plan {
  readonly prepared: PreparedPlan;
  readonly participants: number[];
}

/** A posted plan (NIXL: a posted transfer request), in flight until `done` settles. */
export interface Posted {
  /** Order of posting among this engine's posts: 0, 1, ... */
  readonly postSeq: number;
  /** Order of completion among this engine's posts; undefined while in flight. */
  readonly doneSeq: number | undefined;
  /** This engine's posts in flight right after this one was posted, itself included. */
  readonly inFlightAtPost: number;
  readonly done: Promise<XferResult>;
}

/** What the engine recorded of its posts: the evidence that requests overlap and overtake. */
export interface InFlightRecord {
  posted: number;
  completed: number;
  /** Most posts in flight at once. */
  maxInFlight: number;
  /** Completions of a post while an earlier post was still in flight. */
  overtakes: number;
}

export class XferEngine {
  /** Milliseconds of every control-plane operation, in call order. */
  readonly controlTimes: Record<ControlPhase, number[]> = { init: [], register: [], connect: [], disconnect: [], reconnect: [], destroy: [] };
  readonly regions = new Map<string, Region>();
  private readonly extras = new Map<string, unknown>();
  private connectedPeers: number[] = [];
  private connects = 0;
  private destroyed = false;
  /** postSeq of every post in flight. */
  private readonly pending = new Set<number>();
  private readonly record: InFlightRecord = { posted: 0, completed: 0, maxInFlight: 0, overtakes: 0 };
  /** GPUs whose record line this rank printed (one line per device it uses). */
  private readonly recordedDevices = new Set<number>();

  private constructor(
    readonly backend: Backend,
    readonly rank: RankInfo,
    readonly store: Store,
    private gpu: number | undefined,
    private readonly timeoutMs: number,
  ) {}

  /** This rank's CUDA device: EngineOptions.device, else local rank modulo the device count. */
  get device(): number {
    this.gpu ??= defaultDevice(this.rank);
    return this.gpu;
  }

  /** Loads the backend's libraries and initialises it (timed as 'init'). */
  static async create(options: EngineOptions): Promise<XferEngine> {
    const t0 = monoNs();
    const { rank, store } = options;
    refuseUcxFlags(options.backend);
    const gpuBackend = options.backend === 'cuda' || options.backend === 'nccl';
    const device = options.device ?? (gpuBackend ? defaultDevice(rank) : undefined);
    const backend = createBackend(
      options.backend,
      // Host backends get no device: a GPU region picks it when it is allocated.
      { rank: rank.rank, worldSize: rank.worldSize, localRank: rank.localRank, localWorldSize: rank.localWorldSize, node: rank.node, store, device: device ?? -1 },
      options,
    );
    const engine = new XferEngine(backend, rank, store, device, options.timeoutMs ?? store.defaultTimeoutMs);
    engine.controlTimes.init.push(msSince(t0));
    if (device !== undefined) engine.recordDevice(device);
    return engine;
  }

  /**
   * Allocates a region and registers it with the backend. Kind default: what the backend moves
   * first. `device`: the GPU of a GPU region (default this rank's); `style`: huge pages for host
   * memory, CUDA VMM for GPU memory.
   */
  allocate(name: string, size: number, kind: MemoryKind = this.backend.memoryKinds[0], options: { device?: number; style?: AllocationStyle } = {}): Region {
    const t0 = monoNs();
    if (this.regions.has(name)) throw new XferError(`region '${name}' already exists on rank ${this.rank.rank}`);
    const owner = { job: this.rank.job, rank: this.rank.rank, node: this.rank.node };
    const device = () => options.device ?? this.device; // GPU regions only: this.device needs CUDA
    // Huge pages are the engine's own allocation, registered with the backend (as nixlbench
    // registers them with NIXL); otherwise a backend that allocates host memory itself (ucx) does.
    const region =
      kind === 'host'
        ? options.style?.hugepages
          ? allocateHugepageHost(name, size, owner)
          : (this.backend.allocateHost?.(name, size, owner) ?? allocateHost(name, size, owner))
        : options.style?.vmm
          ? allocateVmmGpu(name, size, device(), owner)
          : allocateGpu(name, size, device(), owner);
    if (region.kind === 'gpu') this.recordDevice(region.device!);
    try {
      this.extras.set(name, this.backend.register(region));
    } catch (err) {
      region.close();
      throw err;
    }
    this.regions.set(name, region);
    this.controlTimes.register.push(msSince(t0));
    return region;
  }

  /**
   * Registers [offset, offset + length) of a region with the backend once more, as its own
   * registration (nixlbench's --reregister_mem: the cost of registering memory per iteration);
   * release() deregisters it. Peers keep using the region's original registration.
   */
  registerSpan(name: string, offset: number, length: number): { release(): void } {
    const region = this.regions.get(name);
    if (!region) throw new XferError(`no region '${name}' on rank ${this.rank.rank}`);
    const view = regionView(region, offset, length);
    this.backend.register(view);
    let registered = true;
    return {
      release: () => {
        if (registered) this.backend.deregister(view);
        registered = false;
      },
    };
  }

  /** Deregisters and frees a region (after disconnect: peers may hold it open). */
  free(name: string): void {
    const region = this.regions.get(name);
    if (!region) return;
    this.backend.deregister(region);
    region.close();
    this.regions.delete(name);
    this.extras.delete(name);
  }

  /**
   * Collective over all ranks: publishes this rank's regions and backend info, then connects to
   * `peers` (default: every rank, this one included). Timed as 'connect'.
   */
  async connect(peers?: number[]): Promise<void> {
    const t0 = monoNs();
    await this.connectUntimed(peers);
    this.controlTimes.connect.push(msSince(t0));
  }

  /** Collective: a barrier (so no peer is still transferring), then closes peers. Timed as 'disconnect'. */
  async disconnect(): Promise<void> {
    const t0 = monoNs();
    await this.disconnectUntimed();
    this.controlTimes.disconnect.push(msSince(t0));
  }

  /** disconnect() then connect() to the same peers, timed together as 'reconnect'. */
  async reconnect(): Promise<void> {
    const t0 = monoNs();
    const peers = this.connectedPeers;
    await this.disconnectUntimed();
    await this.connectUntimed(peers);
    this.controlTimes.reconnect.push(msSince(t0));
  }

  /**
   * Resolves requests into a plan. For two-sided backends (nccl) this is collective over
   * `participants` (default: all ranks), which must all call it, in the same order.
   */
  async prepare(requests: readonly XferRequest[], participants?: number[]): Promise<Plan> {
    const who = participants ?? Array.from({ length: this.rank.worldSize }, (_, i) => i);
    return { prepared: await this.backend.prepare(requests, this.regions, who), participants: who };
  }

  /** Runs a plan to completion (collective over its participants for two-sided backends). */
  execute(plan: Plan, options: { timeoutMs?: number } = {}): Promise<XferResult> {
    if (this.destroyed) return Promise.reject(new XferError('engine already destroyed'));
    return this.post(plan, options).done;
  }

  /**
   * Posts a plan and returns at once: the backend has started every request (NIXL's
   * postXferReq). Post again before it completes to keep several in flight; each completes on its
   * own. Two-sided backends (nccl) need every participant to post the same plans in the same order.
   */
  post(plan: Plan, options: { timeoutMs?: number } = {}): Posted {
    if (this.destroyed) throw new XferError('engine already destroyed');
    const posted = new PostedTransfer(this.record.posted++);
    this.pending.add(posted.postSeq);
    posted.inFlightAtPost = this.pending.size;
    this.record.maxInFlight = Math.max(this.record.maxInFlight, this.pending.size);
    posted.done = this.track(posted, this.backend.execute(plan.prepared, { timeoutMs: options.timeoutMs ?? this.timeoutMs }));
    return posted;
  }

  // A method, not closures: a post costs ~1 us here, and 64 KiB copies take ~2 us.
  private async track(posted: PostedTransfer, started: Promise<XferResult>): Promise<XferResult> {
    try {
      return await started;
    } finally {
      this.pending.delete(posted.postSeq);
      posted.doneSeq = this.record.completed++;
      // Posts are added in order, so the first pending one is the oldest.
      const oldest = this.pending.values().next();
      if (!oldest.done && oldest.value < posted.postSeq) this.record.overtakes++;
    }
  }

  /** Posts, completions, the most in flight at once and completions that overtook earlier posts. */
  inFlightRecord(): InFlightRecord {
    return { ...this.record };
  }

  /** prepare() + execute() for a one-off list. */
  async transfer(requests: readonly XferRequest[], participants?: number[]): Promise<XferResult> {
    return this.execute(await this.prepare(requests, participants));
  }

  /** Prints, once per device, which GPU this rank uses (index, name, bus id, node): the results keep it. */
  private recordDevice(device: number): void {
    if (this.recordedDevices.has(device)) return;
    this.recordedDevices.add(device);
    console.log(rankDeviceLine(describeRankDevice(this.rank, device)));
  }

  /** Disconnects if connected, frees every region and releases the backend. Timed as 'destroy'. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    const t0 = monoNs();
    if (this.connectedPeers.length > 0) await this.backend.disconnect();
    this.connectedPeers = [];
    for (const name of [...this.regions.keys()]) this.free(name);
    await this.backend.destroy();
    this.destroyed = true;
    this.controlTimes.destroy.push(msSince(t0));
  }

  private async connectUntimed(peers?: number[]): Promise<void> {
    const published = {
      node: this.rank.node,
      info: this.backend.localInfo(),
      regions: [...this.regions.values()].map((r) => ({ descriptor: r.descriptor(), extras: this.extras.get(r.name) })),
    };
    type Published = typeof published;
    const all = await this.store.allGather<Published>(`xfer-connect#${this.connects++}`, published);
    const wanted = peers ?? all.map((_, r) => r);
    const views: PeerView[] = wanted.map((r) => ({
      rank: r,
      node: all[r].node,
      info: all[r].info,
      regions: new Map(all[r].regions.map((x) => [x.descriptor.name, x as { descriptor: RegionDescriptor; extras: unknown }])),
    }));
    await this.backend.connect(views);
    this.connectedPeers = wanted;
  }

  private async disconnectUntimed(): Promise<void> {
    await this.store.barrier(`xfer-disconnect#${this.connects}`);
    await this.backend.disconnect();
    this.connectedPeers = [];
  }
}

class PostedTransfer implements Posted {
  doneSeq: number | undefined = undefined;
  inFlightAtPost = 0;
  done!: Promise<XferResult>;
  constructor(readonly postSeq: number) {}
}

/** Local rank modulo the visible GPUs; more ranks than GPUs on the node only where sharing was allowed. */
function defaultDevice(rank: RankInfo): number {
  return placeRank(rank, cudart().deviceCount(), ranksMayShareGpu());
}

function msSince(t0: number): number {
  return (monoNs() - t0) / 1e6;
}
