// nccl: GPU memory on any node through NCCL's grouped send/recv. NCCL is two-sided: a WRITE is a
// send on the initiator and a matching recv on the target (a READ the reverse), so prepare() is
// collective: every participant learns, through an all-to-all on the store, the requests that
// target it. NCCL matches the sends and recvs of one pair in posting order, so both sides post a
// pair's operations sorted by (initiator rank, request index). execute() is collective too: several
// may be in flight when every rank posts them in the same order; each group goes to the next of a
// few streams and records its own event, so a group may complete before an earlier one.
import { monoNs, pollUntil } from '../clock.ts';
import { TransferError, XferError, describeRanks } from '../errors.ts';
import type { Region } from '../memory.ts';
import { cudart, type Cudart } from '../native/cudart.ts';
import { nccl, type Nccl } from '../native/nccl.ts';
import { requireMemoryKind } from './guards.ts';
import { checkSpan } from './resolve.ts';
import type { Backend, BackendContext, ExecuteOptions, PeerView, PreparedPlan, XferOp, XferRequest, XferResult } from './types.ts';

/** One request as its target needs it. */
interface Incoming {
  index: number;
  op: XferOp;
  remote: string;
  remoteOffset: number;
  length: number;
}

interface P2pOp {
  kind: 'send' | 'recv';
  peer: number;
  address: bigint;
  length: number;
  /** (initiator, request index): the order both sides of a pair agree on. */
  initiator: number;
  index: number;
}

interface NcclPlan extends PreparedPlan {
  ops: P2pOp[];
  peers: number[];
}

/** Streams that groups in flight rotate over. */
const NCCL_STREAMS = 4;

export class NcclBackend implements Backend {
  readonly name = 'nccl' as const;
  readonly memoryKinds = ['gpu'] as const;
  readonly twoSided = true;
  private readonly nccl: Nccl;
  private readonly cuda: Cudart;
  /** Streams the groups of execute() rotate over (the first one also serves connect). */
  private readonly streams: bigint[];
  private readonly stream: bigint;
  private readonly freeEvents: bigint[] = [];
  private readonly events: bigint[] = [];
  private readonly scratch: bigint;
  private executes = 0;
  private comm: bigint | null = null;
  private connects = 0;
  private plans = 0;

  constructor(private readonly ctx: BackendContext) {
    this.nccl = nccl();
    this.cuda = cudart();
    this.cuda.setDevice(ctx.device);
    this.streams = Array.from({ length: NCCL_STREAMS }, () => this.cuda.streamCreate());
    this.stream = this.streams[0];
    this.scratch = this.cuda.malloc(2);
  }

  localInfo(): unknown {
    return { device: this.ctx.device };
  }

  register(region: Region): unknown {
    requireMemoryKind('nccl', this.memoryKinds, region);
    return null;
  }

  deregister(): void {}

  /** Collective: one communicator over all ranks, then a 1-byte exchange with every peer so later sends never wait for connection setup. */
  async connect(peers: PeerView[]): Promise<void> {
    const { store, rank, worldSize } = this.ctx;
    const ids = await store.allGather(`nccl-id#${this.connects++}`, rank === 0 ? this.nccl.uniqueId() : null);
    this.cuda.setDevice(this.ctx.device);
    // Blocks until every rank has called it; they all have just passed the all-gather.
    this.comm = this.nccl.commInitRank(worldSize, ids[0] as Buffer, rank);
    const others = peers.map((p) => p.rank).filter((r) => r !== rank);
    this.nccl.groupStart();
    for (const peer of others) {
      this.nccl.send(this.scratch, 1, peer, this.comm, this.stream);
      this.nccl.recv(this.scratch + 1n, 1, peer, this.comm, this.stream);
    }
    this.nccl.groupEnd();
    await this.waitStream(60_000, others, 'connection warm-up');
  }

  async disconnect(): Promise<void> {
    if (this.comm !== null) this.nccl.commDestroy(this.comm);
    this.comm = null;
  }

  async prepare(requests: readonly XferRequest[], locals: Map<string, Region>, participants: number[]): Promise<NcclPlan> {
    const { rank, worldSize, store } = this.ctx;
    const region = (name: string, why: string) => {
      const r = locals.get(name);
      if (!r) throw new XferError(`nccl: ${why}: no local region '${name}'`);
      return r;
    };
    const ops: P2pOp[] = [];
    const outgoing: Incoming[][] = Array.from({ length: worldSize }, () => []);
    requests.forEach((q, index) => {
      if (!participants.includes(q.peer)) throw new XferError(`nccl: request ${index}: rank ${q.peer} is not among the participants`);
      const local = region(q.local, `request ${index}`);
      checkSpan(`nccl: request ${index}`, `local region '${q.local}'`, local.size, q.localOffset, q.length);
      outgoing[q.peer].push({ index, op: q.op, remote: q.remote, remoteOffset: q.remoteOffset, length: q.length });
      const kind = q.op === 'WRITE' ? 'send' : 'recv';
      ops.push({ kind, peer: q.peer, address: local.address + BigInt(q.localOffset), length: q.length, initiator: rank, index });
    });
    const incoming = await store.allToAll<Incoming[]>(`nccl-plan#${this.plans++}`, outgoing, { ranks: participants });
    for (const initiator of participants) {
      for (const q of incoming[initiator] ?? []) {
        const why = `request ${q.index} of rank ${initiator}`;
        const target = region(q.remote, why);
        checkSpan(`nccl: ${why}`, `region '${q.remote}' of rank ${rank}`, target.size, q.remoteOffset, q.length);
        const kind = q.op === 'WRITE' ? 'recv' : 'send';
        ops.push({ kind, peer: initiator, address: target.address + BigInt(q.remoteOffset), length: q.length, initiator, index: q.index });
      }
    }
    ops.sort((a, b) => a.initiator - b.initiator || a.index - b.index || (a.kind === 'send' ? -1 : 1));
    const live = ops.filter((o) => o.length > 0); // both sides know the length: both skip empty ones
    const peers = [...new Set(live.map((o) => o.peer))];
    return { requests, ops: live, peers, bytes: requests.reduce((sum, q) => sum + q.length, 0) };
  }

  async execute(plan: PreparedPlan, options: ExecuteOptions): Promise<XferResult> {
    const { ops, peers } = plan as NcclPlan;
    if (this.comm === null) throw new XferError('nccl: not connected');
    this.cuda.setDevice(this.ctx.device);
    // Every rank counts its execute() calls alike (same plans, same order): same stream per group.
    const stream = this.streams[this.executes++ % this.streams.length];
    const startNs = monoNs();
    this.nccl.groupStart();
    try {
      for (const o of ops) {
        if (o.kind === 'send') this.nccl.send(o.address, o.length, o.peer, this.comm, stream);
        else this.nccl.recv(o.address, o.length, o.peer, this.comm, stream);
      }
    } finally {
      this.nccl.groupEnd();
    }
    const postedNs = monoNs();
    await this.waitStream(options.timeoutMs, peers, `${ops.length} sends/recvs`, stream);
    const endNs = monoNs();
    // NCCL completes a group as a whole: every request ends with it.
    return { startNs, postedNs, endNs, bytes: plan.bytes, requests: plan.requests.map(() => ({ postNs: startNs, doneNs: endNs })) };
  }

  async destroy(): Promise<void> {
    await this.disconnect();
    this.cuda.free(this.scratch);
    for (const e of this.events.splice(0)) this.cuda.eventDestroy(e);
    for (const s of this.streams.splice(0)) this.cuda.streamDestroy(s);
  }

  /** Polls the stream's completion; a dead peer, an NCCL error or the deadline aborts the communicator. */
  private async waitStream(timeoutMs: number, peers: number[], what: string, stream = this.stream): Promise<void> {
    let event = this.freeEvents.pop();
    if (event === undefined) this.events.push((event = this.cuda.eventCreate()));
    this.cuda.eventRecord(event, stream);
    let problem = '';
    let dead: number[] = [];
    const done = await pollUntil(() => {
      if (this.cuda.eventDone(event)) return true;
      dead = peers.filter((p) => this.ctx.store.deadRanks.has(p));
      if (dead.length > 0) problem = `${describeRanks(dead)} died (store connection lost)`;
      try {
        this.nccl.checkAsyncError(this.comm!);
      } catch (err) {
        problem = (err as Error).message;
      }
      return problem !== '';
    }, timeoutMs);
    if (done && !problem) {
      this.freeEvents.push(event);
      return;
    }
    this.nccl.commAbort(this.comm!);
    this.comm = null;
    throw new TransferError(`nccl: ${what} failed: ${problem || `not complete after ${timeoutMs} ms`}`, 'nccl', dead[0], dead);
  }
}
