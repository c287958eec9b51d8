// cuda: same-node GPU memory. Peers' buffers are opened through CUDA IPC handles. A plan's bytes
// move on one of two paths (device-copy/copy-path.ts picks per plan, or --cuda-copy says):
// - copy engines: cudaMemcpyAsync per request, contiguous large requests merged (cuda-copies.ts;
//   direction from unified addressing: NVLink/PCIe peer copies), spread over several streams so
//   several copy engines work at once;
// - kernel: ONE launch of the copy kernel (device-copy/) for the whole plan, the GPU's own
//   threads reading and writing through the IPC-mapped pointers.
// Completion is polled with cudaEventQuery between turns of the event loop: waiting never blocks it.
// Each execute() in flight records its own events, and the copy engines' plans start on the next
// stream each time, so several complete independently (those on other streams may overtake).
// Signalled phases (GPU-initiated EP dispatch/combine) are kernel plans that also write flags into
// peers' memory and wait for theirs, all inside the one launch; they can run once (the host waits)
// or many times back to back with timing events between runs (runSignalledIterations).
// Gated runs (runGatedIterations) run any plan back to back between two gates on the GPUs
// (cuda-gate.ts): every rank's copies start together and each run is timed on the GPU from the
// first rank's start to the last rank's end, the host's posting and skew left outside.
import { parseSize } from '../../common/size.ts';
import { monoNs, pollUntil } from '../clock.ts';
import { TransferError, XferError } from '../errors.ts';
import type { Region } from '../memory.ts';
import { openPeerVmm } from '../memory-vmm.ts';
import { cudart, cudaMemcpyDefault, type Cudart } from '../native/cudart.ts';
import { cudaDriver } from '../native/cuda-driver.ts';
import { enqueueGate, gateAreaBytes, gateWords, gateWordOffset, type GateWords } from './cuda-gate.ts';
import { chooseCopyPath, parseCudaCopyPath, type CudaCopyPath } from '../device-copy/copy-path.ts';
import { alignCopies } from '../device-copy/copy-table.ts';
import type { PhaseState } from '../device-copy/copy-table.ts';
import { DeviceCopier, type DevicePhase } from '../device-copy/device-copier.ts';
import type { KernelShape } from '../device-copy/kernel-source.ts';
import { copyEngineCopies, type EngineCopy } from './cuda-copies.ts';
import { requireMemoryKind, requireSameNode } from './guards.ts';
import { checkSpan, resolveRequests, type RemoteRegion, type ResolvedRequest } from './resolve.ts';
import type { Backend, BackendContext, ExecuteOptions, PeerView, PreparedPlan, XferRequest, XferResult } from './types.ts';

export interface CudaOptions {
  /** Streams the copy-engine path spreads requests over (round robin). Default 4. */
  streams?: number;
  /** Copy-engine path: split requests larger than this into chunks on different streams. Default from XFER_CUDA_CHUNK (a size, e.g. 64M), else no split. */
  chunkBytes?: number;
  /**
   * Copy-engine path. 'parallel' (default): every request at once, over the streams. 'staggered':
   * requests in order of peer distance ((peer - rank) mod world) on ONE stream, so with every rank
   * starting together each GPU sends to one peer and receives from one peer at a time.
   * Default from XFER_CUDA_SCHEDULE.
   */
  schedule?: 'parallel' | 'staggered';
  /** Which path moves a plan: 'auto' (default, per plan), 'copy-engine' or 'kernel'. Default from XFER_CUDA_COPY. */
  copy?: CudaCopyPath;
  /** The copy kernel's shape (tuning). Default from XFER_CUDA_KERNEL, else device-copy's default. */
  kernelShape?: KernelShape;
}

/** Where a signalled phase writes its flag: a 64-bit word of a peer's region. */
export interface SignalTarget {
  peer: number;
  remote: string;
  remoteOffset: number;
}

/** A kernel plan that also signals peers and waits: word i of `wait` is the flag rank i writes. */
export interface SignalledPhaseSpec {
  requests: readonly XferRequest[];
  signals: readonly SignalTarget[];
  wait: { local: string; offset: number; count: number };
}

interface CopyEnginePlan extends PreparedPlan {
  path: 'copy-engine';
  /** Per copy: which requests it completes and which stream runs it (cuda-copies.ts). */
  copies: EngineCopy[];
  resolved: ResolvedRequest[];
}

interface KernelPlan extends PreparedPlan {
  path: 'kernel';
  phase: DevicePhase;
  resolved: ResolvedRequest[];
}

export interface SignalledPhase extends KernelPlan {
  wait: { region: Region; offset: number; count: number };
}

type CudaPlan = CopyEnginePlan | KernelPlan;

/** A rank's gate area (cuda-gate.ts): a local region of that name at every rank, `offset` into it, zeroed before first use. */
export interface GateSpec {
  region: string;
  offset: number;
}

export interface PreparedGate {
  start: GateWords;
  end: GateWords;
  area: { region: Region; offset: number };
}

/** Per gated run: GPU milliseconds from the start gate's end to the end gate's end, and the wait at the start gate. */
export interface GatedTimes {
  spanMs: number[];
  startWaitMs: number[];
}

export class CudaBackend implements Backend {
  readonly name = 'cuda' as const;
  readonly memoryKinds = ['gpu'] as const;
  readonly twoSided = false;
  readonly nodeLocal = { means: 'CUDA IPC', instead: 'nccl' };
  private readonly cuda: Cudart;
  private readonly streams: bigint[];
  /** Every event created (destroyed at the end), and those not recording for an execute() now. */
  private readonly events: bigint[] = [];
  private readonly freeEvents: bigint[] = [];
  /** Events with timing, for runSignalledIterations (created as needed, reused). */
  private readonly timingEvents: bigint[] = [];
  private executes = 0;
  private readonly chunkBytes: number;
  private readonly schedule: 'parallel' | 'staggered';
  private readonly copy: CudaCopyPath;
  private copier?: DeviceCopier;
  private readonly kernelShape?: KernelShape;
  private readonly peerRegions = new Map<number, Map<string, RemoteRegion>>();
  /** Closes what connect() opened of peers' memory (IPC handles, VMM mappings). */
  private readonly opened: (() => void)[] = [];

  constructor(
    private readonly ctx: BackendContext,
    options: CudaOptions = {},
  ) {
    const schedule = options.schedule ?? process.env.XFER_CUDA_SCHEDULE ?? 'parallel';
    if (schedule !== 'parallel' && schedule !== 'staggered') {
      throw new TransferError(`cuda: schedule '${schedule}' is not parallel or staggered (XFER_CUDA_SCHEDULE)`, 'cuda');
    }
    this.schedule = schedule;
    try {
      this.copy = options.copy ?? parseCudaCopyPath(process.env.XFER_CUDA_COPY ?? 'auto', 'XFER_CUDA_COPY');
    } catch (err) {
      throw new TransferError(`cuda: ${(err as Error).message}`, 'cuda');
    }
    this.cuda = cudart();
    this.cuda.setDevice(ctx.device);
    this.streams = Array.from({ length: Math.max(1, options.streams ?? 4) }, () => this.cuda.streamCreate());
    this.chunkBytes = options.chunkBytes ?? envChunkBytes();
    this.kernelShape = options.kernelShape;
  }

  localInfo(): unknown {
    return { device: this.ctx.device };
  }

  register(region: Region): unknown {
    requireMemoryKind('cuda', this.memoryKinds, region);
    return null;
  }

  deregister(): void {}

  async connect(peers: PeerView[]): Promise<void> {
    this.cuda.setDevice(this.ctx.device);
    for (const peer of peers) {
      requireSameNode('cuda', this.ctx, peer, this.nodeLocal.means, this.nodeLocal.instead);
      const regions = new Map<string, RemoteRegion>();
      for (const [name, { descriptor }] of peer.regions) {
        if (descriptor.kind !== 'gpu') continue;
        // A process cannot open its own IPC handle: its own regions are used directly.
        let address = BigInt(descriptor.address);
        if (peer.rank !== this.ctx.rank && descriptor.vmm) {
          const mapping = openPeerVmm(descriptor, this.ctx.device);
          this.opened.push(() => mapping.close());
          address = mapping.address;
        } else if (peer.rank !== this.ctx.rank) {
          const opened = this.cuda.ipcOpenMemHandle(descriptor.ipc);
          this.opened.push(() => this.cuda.ipcCloseMemHandle(opened));
          address = opened;
        }
        regions.set(name, { address, size: descriptor.size });
      }
      this.peerRegions.set(peer.rank, regions);
    }
  }

  async disconnect(): Promise<void> {
    for (const close of this.opened.splice(0)) close();
    this.peerRegions.clear();
  }

  async prepare(requests: readonly XferRequest[], locals: Map<string, Region>): Promise<CudaPlan> {
    const resolved = resolveRequests('cuda', requests, locals, this.peerRegions);
    const bytes = resolved.reduce((sum, r) => sum + r.length, 0);
    const { unalignedBytes } = alignCopies(resolved.map((r) => ({ src: r.src, dst: r.dst, bytes: r.length })));
    const { path } = chooseCopyPath(this.copy, { requests: resolved.map((r) => ({ peer: r.request.peer, length: r.length })), self: this.ctx.rank, unalignedBytes });
    if (path === 'kernel') return { path, requests, resolved, bytes, phase: this.kernelPhase(resolved, [], undefined) };
    return { path, requests, resolved, bytes, copies: this.copyEngineCopies(resolved) };
  }

  /** A kernel plan that writes its flags into `signals` after the data and waits for its own (EP). */
  async prepareSignalledPhase(spec: SignalledPhaseSpec, locals: Map<string, Region>): Promise<SignalledPhase> {
    const resolved = resolveRequests('cuda', spec.requests, locals, this.peerRegions);
    const signals = spec.signals.map((s, i) => {
      const where = `cuda: signal ${i} (to rank ${s.peer})`;
      const region = this.peerRegions.get(s.peer)?.get(s.remote);
      if (!region) throw new XferError(`${where}: rank ${s.peer} is not connected or has no region '${s.remote}'`);
      checkSpan(where, `region '${s.remote}' of rank ${s.peer}`, region.size, s.remoteOffset, 8);
      return region.address + BigInt(s.remoteOffset);
    });
    const region = locals.get(spec.wait.local);
    if (!region) throw new XferError(`cuda: no local region '${spec.wait.local}' to wait on`);
    checkSpan('cuda: wait words', `local region '${spec.wait.local}'`, region.size, spec.wait.offset, spec.wait.count * 8);
    const phase = this.kernelPhase(resolved, signals, { address: region.address + BigInt(spec.wait.offset), count: spec.wait.count });
    const bytes = resolved.reduce((sum, r) => sum + r.length, 0);
    return { path: 'kernel', requests: spec.requests, resolved, bytes, phase, wait: { region, offset: spec.wait.offset, count: spec.wait.count } };
  }

  /**
   * Launches the phases in order on one stream (one launch each), `seq` their flag value, and
   * waits for the last. A phase whose flags did not all arrive in time fails naming the ranks.
   */
  async runSignalledPhases(phases: readonly SignalledPhase[], seq: number, timeoutMs: number): Promise<void> {
    this.cuda.setDevice(this.ctx.device);
    for (const p of phases) this.kernels().launch(p.phase, seq, this.streams[0]);
    await this.waitStream(0, timeoutMs, `${phases.length} signalled phase(s)`);
    this.checkSignalledPhases(phases, seq, timeoutMs);
  }

  /**
   * Runs the phases `iterations` times back to back on one stream (flag values firstSeq,
   * firstSeq + 1, ...), a timing event recorded before and after each run and nothing between
   * runs: the GPU goes from one run to the next as soon as the peers' flags allow, as NIXL EP's
   * data-plane test times its iterations with CUDA events. Returns each run's GPU milliseconds.
   */
  async runSignalledIterations(phases: readonly SignalledPhase[], firstSeq: number, iterations: number, timeoutMs: number): Promise<number[]> {
    this.cuda.setDevice(this.ctx.device);
    while (this.timingEvents.length < 2 * iterations) this.timingEvents.push(this.cuda.eventCreate(true));
    const stream = this.streams[0];
    for (let i = 0; i < iterations; i++) {
      this.cuda.eventRecord(this.timingEvents[2 * i], stream);
      for (const p of phases) this.kernels().launch(p.phase, firstSeq + i, stream);
      this.cuda.eventRecord(this.timingEvents[2 * i + 1], stream);
    }
    await this.waitStream(0, timeoutMs, `${iterations} run(s) of ${phases.length} signalled phase(s)`);
    this.checkSignalledPhases(phases, firstSeq + iterations - 1, timeoutMs);
    return Array.from({ length: iterations }, (_, i) => this.cuda.eventElapsedMs(this.timingEvents[2 * i], this.timingEvents[2 * i + 1]));
  }

  /** What the kernel recorded of a signalled phase: its last launch's global-timer stamps and sums over all launches. */
  phaseState(phase: SignalledPhase): PhaseState {
    this.cuda.setDevice(this.ctx.device);
    return this.kernels().state(phase.phase);
  }

  /** The gate words of a gate area (spec.region, every rank's, through the connected peers' mappings). */
  prepareGate(spec: GateSpec, locals: Map<string, Region>): PreparedGate {
    const { rank, worldSize } = this.ctx;
    const region = locals.get(spec.region);
    if (!region) throw new XferError(`cuda: no local region '${spec.region}' for the gate area`);
    checkSpan('cuda: gate area', `local region '${spec.region}'`, region.size, spec.offset, gateAreaBytes(worldSize));
    const peerArea = (r: number) => {
      const peer = this.peerRegions.get(r)?.get(spec.region);
      if (!peer) throw new XferError(`cuda: gate: rank ${r} is not connected or has no region '${spec.region}'`);
      checkSpan(`cuda: gate area of rank ${r}`, `region '${spec.region}' of rank ${r}`, peer.size, spec.offset, gateAreaBytes(worldSize));
      return peer.address + BigInt(spec.offset);
    };
    const own = region.address + BigInt(spec.offset);
    return { start: gateWords(worldSize, rank, 'start', own, peerArea), end: gateWords(worldSize, rank, 'end', own, peerArea), area: { region, offset: spec.offset } };
  }

  /**
   * Runs `plan` `iterations` times back to back, each between a start gate and an end gate on the
   * GPUs (gate values firstSeq, firstSeq + 1, ...; every rank runs the same count with the same
   * firstSeq), with timing events before the start gate, after it and after the end gate. The
   * copy-engine path keeps its streams: they wait for the start gate's event and stream 0 waits
   * for theirs before the end gate. Every rank's span covers the exchange from the first rank's
   * start to the last rank's end (cuda-gate.ts); the longest over the ranks is the run's time.
   */
  async runGatedIterations(plan: PreparedPlan, gate: PreparedGate, firstSeq: number, iterations: number, timeoutMs: number): Promise<GatedTimes> {
    const p = plan as CudaPlan;
    const cuda = this.cuda;
    const driver = cudaDriver();
    const device = this.ctx.device;
    cuda.setDevice(device);
    while (this.timingEvents.length < 3 * iterations) this.timingEvents.push(cuda.eventCreate(true));
    const s0 = this.streams[0];
    const side = p.path === 'copy-engine' ? [...new Set(p.copies.map((c) => c.stream))].filter((s) => s !== 0) : [];
    const joins = this.takeEvents(side.length);
    for (let i = 0; i < iterations; i++) {
      const [before, start, end] = this.timingEvents.slice(3 * i, 3 * i + 3);
      cuda.eventRecord(before, s0);
      enqueueGate(driver, device, s0, gate.start, firstSeq + i);
      cuda.eventRecord(start, s0);
      if (p.path === 'kernel') {
        this.kernels().launch(p.phase, 0, s0);
      } else {
        for (const s of side) cuda.streamWaitEvent(this.streams[s], start);
        for (const c of p.copies) if (c.length > 0) cuda.memcpyAsync(c.dst, c.src, c.length, cudaMemcpyDefault, this.streams[c.stream]);
        side.forEach((s, k) => (cuda.eventRecord(joins[k], this.streams[s]), cuda.streamWaitEvent(s0, joins[k])));
      }
      enqueueGate(driver, device, s0, gate.end, firstSeq + i);
      cuda.eventRecord(end, s0);
    }
    const last = firstSeq + iterations - 1;
    try {
      await this.waitStream(0, timeoutMs, `${iterations} gated run(s)`);
    } catch (err) {
      const { worldSize, rank } = this.ctx;
      const words = Buffer.from(gate.area.region.read(gate.area.offset, gateAreaBytes(worldSize)));
      const late = Array.from({ length: worldSize }, (_, r) => r).filter((r) => r !== rank && words.readUInt32LE(gateWordOffset(worldSize, 'end', r)) < last);
      if (late.length) throw new TransferError(`cuda: gated runs: no gate value ${last} from rank(s) ${late.join(', ')} within ${timeoutMs / 1000} s`, 'cuda', late[0]);
      throw err;
    }
    this.freeEvents.push(...joins);
    const ms = (a: number, b: number) => cuda.eventElapsedMs(this.timingEvents[a], this.timingEvents[b]);
    return {
      spanMs: Array.from({ length: iterations }, (_, i) => ms(3 * i + 1, 3 * i + 2)),
      startWaitMs: Array.from({ length: iterations }, (_, i) => ms(3 * i, 3 * i + 1)),
    };
  }

  /** After the stream synchronised: a phase whose kernel stopped waiting fails, naming the ranks whose flag `seq` is missing. */
  private checkSignalledPhases(phases: readonly SignalledPhase[], seq: number, timeoutMs: number): void {
    for (const p of phases) {
      if (this.kernels().status(p.phase) === 'ok') continue;
      const words = Buffer.from(p.wait.region.read(p.wait.offset, p.wait.count * 8));
      const late = Array.from({ length: p.wait.count }, (_, r) => r).filter((r) => words.readBigUInt64LE(r * 8) < BigInt(seq));
      throw new TransferError(`cuda: no flag ${seq} from rank(s) ${late.join(', ')} within ${timeoutMs / 1000} s (the kernel stopped waiting)`, 'cuda', late[0]);
    }
  }

  async execute(plan: PreparedPlan, options: ExecuteOptions): Promise<XferResult> {
    const p = plan as CudaPlan;
    this.cuda.setDevice(this.ctx.device);
    return p.path === 'kernel' ? this.executeKernel(p, options) : this.executeCopyEngines(p, options);
  }

  async destroy(): Promise<void> {
    await this.disconnect();
    this.copier?.destroy();
    this.copier = undefined;
    this.freeEvents.length = 0;
    for (const e of this.events.splice(0)) this.cuda.eventDestroy(e);
    for (const e of this.timingEvents.splice(0)) this.cuda.eventDestroy(e);
    for (const s of this.streams.splice(0)) this.cuda.streamDestroy(s);
  }

  /** The kernel runner, made (and the kernel compiled or found in the cache) on first use. */
  private kernels(): DeviceCopier {
    this.copier ??= new DeviceCopier(this.ctx.device, this.kernelShape);
    return this.copier;
  }

  private kernelPhase(resolved: ResolvedRequest[], signals: bigint[], wait: { address: bigint; count: number } | undefined): DevicePhase {
    // The chunk table interleaves the copies by size (copy-table.ts); among chunks at the same
    // place, copies in peer-distance order, so every rank starts with a different peer.
    const copies = this.peerDistanceOrder(resolved).map((i) => ({ src: resolved[i].src, dst: resolved[i].dst, bytes: resolved[i].length }));
    // The kernel waits a little less than the host does (the store's timeout), so it ends first and says why.
    return this.kernels().prepare({ copies, signals, wait, timeoutNs: 0.9 * this.ctx.store.defaultTimeoutMs * 1e6 });
  }

  /** Request indices in order of (peer - rank) mod world, request order among equals. */
  private peerDistanceOrder(resolved: ResolvedRequest[]): number[] {
    const { rank, worldSize } = this.ctx;
    const distance = (i: number) => (resolved[i].request.peer - rank + worldSize) % worldSize;
    return resolved.map((_, i) => i).sort((a, b) => distance(a) - distance(b) || a - b);
  }

  private copyEngineCopies(resolved: ResolvedRequest[]): EngineCopy[] {
    const staggered = this.schedule === 'staggered';
    const order = staggered ? this.peerDistanceOrder(resolved) : resolved.map((_, i) => i);
    const copies = copyEngineCopies(resolved, order, { chunkBytes: this.chunkBytes, streams: this.streams.length, staggered });
    this.reserveEvents(copies.length); // event creation stays out of the timed execute()
    return copies;
  }

  /** One launch; every request completes when the kernel does. */
  private async executeKernel(plan: KernelPlan, options: ExecuteOptions): Promise<XferResult> {
    const startNs = monoNs();
    this.kernels().launch(plan.phase, 0, this.streams[0]);
    const postedNs = monoNs();
    await this.waitStream(0, options.timeoutMs, 'the copy kernel');
    const endNs = monoNs();
    return { startNs, postedNs, endNs, bytes: plan.bytes, requests: plan.resolved.map(() => ({ postNs: startNs, doneNs: endNs })) };
  }

  private async executeCopyEngines(plan: CopyEnginePlan, options: ExecuteOptions): Promise<XferResult> {
    const { copies, resolved } = plan;
    const cuda = this.cuda;
    const timings = resolved.map(() => ({ postNs: 0, doneNs: 0 }));
    const copiesLeft = new Array<number>(resolved.length).fill(0);
    const events = this.takeEvents(copies.length);
    // Each execute() starts on the next stream, so a plan posted while another runs does not queue
    // behind it on the same streams.
    const first = this.executes++;
    const stream = (c: EngineCopy) => this.streams[(c.stream + first) % this.streams.length];
    const startNs = monoNs();
    copies.forEach((c, i) => {
      const postNs = monoNs();
      for (const request of c.requests) {
        if (timings[request].postNs === 0) timings[request].postNs = postNs;
        copiesLeft[request]++;
      }
      if (c.length > 0) cuda.memcpyAsync(c.dst, c.src, c.length, cudaMemcpyDefault, stream(c));
      cuda.eventRecord(events[i], stream(c));
    });
    const postedNs = monoNs();
    let open = copies.map((_, i) => i);
    const done = await pollUntil(() => {
      open = open.filter((i) => {
        if (!cuda.eventDone(events[i])) return true;
        const doneNs = monoNs();
        for (const request of copies[i].requests) if (--copiesLeft[request] === 0) timings[request].doneNs = doneNs;
        return false;
      });
      return open.length === 0;
    }, options.timeoutMs);
    // An event still recording (timeout) is not reused: a later eventRecord would move it.
    if (!done) throw new TransferError(`cuda: ${open.length} copies not complete after ${options.timeoutMs} ms`, 'cuda');
    this.freeEvents.push(...events);
    return { startNs, postedNs, endNs: monoNs(), bytes: plan.bytes, requests: timings };
  }

  private reserveEvents(n: number): void {
    while (this.freeEvents.length < n) {
      const e = this.cuda.eventCreate();
      this.events.push(e);
      this.freeEvents.push(e);
    }
  }

  private takeEvents(n: number): bigint[] {
    this.reserveEvents(n);
    return this.freeEvents.splice(this.freeEvents.length - n);
  }

  /** Records an event of its own after the work queued on a stream and polls it. */
  private async waitStream(stream: number, timeoutMs: number, what: string): Promise<void> {
    const [event] = this.takeEvents(1);
    this.cuda.eventRecord(event, this.streams[stream]);
    if (!(await pollUntil(() => this.cuda.eventDone(event), timeoutMs))) throw new TransferError(`cuda: ${what} not complete after ${timeoutMs} ms`, 'cuda');
    this.freeEvents.push(event);
  }
}

/** XFER_CUDA_CHUNK: the copy-engine path's chunk size (a size such as 64M), else no split. */
function envChunkBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.XFER_CUDA_CHUNK?.trim();
  if (!raw) return Number.POSITIVE_INFINITY;
  let bytes: number;
  try {
    bytes = parseSize(raw);
  } catch (err) {
    throw new TransferError(`cuda: XFER_CUDA_CHUNK: ${(err as Error).message}`, 'cuda');
  }
  if (!(bytes > 0)) throw new TransferError(`cuda: XFER_CUDA_CHUNK '${raw}' must be a size above 0 (e.g. 64M)`, 'cuda');
  return bytes;
}
