// The one interface every transfer backend (shm, ucx, cuda, nccl, libfabric) implements.
import type { MemoryKind, Region, RegionDescriptor } from '../memory.ts';
import type { Store } from '../store.ts';

export type BackendName = 'shm' | 'ucx' | 'cuda' | 'nccl' | 'libfabric';
export const backendNames: readonly BackendName[] = ['shm', 'ucx', 'cuda', 'nccl', 'libfabric'];

export type XferOp = 'READ' | 'WRITE';

/**
 * One transfer, seen from its initiator. WRITE moves local[localOffset..] to the peer's
 * remote[remoteOffset..]; READ moves the peer's bytes into local memory.
 */
export interface XferRequest {
  op: XferOp;
  peer: number;
  /** Name of a region of this rank. */
  local: string;
  localOffset: number;
  /** Name of a region of the peer. */
  remote: string;
  remoteOffset: number;
  length: number;
}

/** Monotonic times (this rank's clock, ns) of one request. */
export interface RequestTiming {
  postNs: number;
  doneNs: number;
}

export interface XferResult {
  /** When the first request was posted and the last one completed (this rank's clock, ns). */
  startNs: number;
  endNs: number;
  /** When every request had been posted (the post calls returned): Post = postedNs - startNs. */
  postedNs: number;
  /** Bytes this rank initiated (passive sides of two-sided backends not included). */
  bytes: number;
  /** Per request of the plan, in plan order. */
  requests: RequestTiming[];
}

/** A peer's regions and backend-specific connection data, as exchanged through the store. */
export interface PeerView {
  rank: number;
  node: string;
  /** What the peer's backend published (e.g. its UCX worker address). */
  info: unknown;
  regions: Map<string, { descriptor: RegionDescriptor; extras: unknown }>;
}

export interface BackendContext {
  rank: number;
  worldSize: number;
  localRank: number;
  /** Ranks on this node. */
  localWorldSize: number;
  node: string;
  store: Store;
  /** CUDA device of this rank (GPU backends; -1 for host backends). */
  device: number;
}

/** Requests resolved against connected peers; run many times. */
export interface PreparedPlan {
  readonly requests: readonly XferRequest[];
  readonly bytes: number;
}

export interface ExecuteOptions {
  timeoutMs: number;
}

export interface Backend {
  readonly name: BackendName;
  /** Memory kinds this backend moves. */
  readonly memoryKinds: readonly MemoryKind[];
  /**
   * Two-sided backends (nccl) need the target's cooperation: prepare() and execute() are then
   * collective over the plan's participants, who must call them in the same order.
   */
  readonly twoSided: boolean;
  /** Set when it reaches the ranks of its own node only: what it uses, and what reaches other nodes. */
  readonly nodeLocal?: { means: string; instead: string };
  /** Published to peers at connect (e.g. a UCX worker address). */
  localInfo(): unknown;
  /**
   * Host memory this backend allocates itself (ucx: UCX-allocated, so same-host peers can map
   * it); undefined or absent: the engine allocates it (memory.ts). Registered with register() after.
   */
  allocateHost?(name: string, size: number, owner: { rank: number; node: string }): Region | undefined;
  /** Makes a region reachable by peers; returns what peers need besides its descriptor. */
  register(region: Region): unknown;
  deregister(region: Region): void;
  connect(peers: PeerView[]): Promise<void>;
  disconnect(): Promise<void>;
  /** Resolves addresses once; `participants` matters to two-sided backends only. */
  prepare(requests: readonly XferRequest[], locals: Map<string, Region>, participants: number[]): Promise<PreparedPlan>;
  /**
   * Posts the plan's requests and settles when all are complete. It may be called again (same or
   * another plan) before earlier calls settle: each call is one request in flight (NIXL's posted
   * transfer request), and completes on its own, in whatever order the transfers finish.
   */
  execute(plan: PreparedPlan, options: ExecuteOptions): Promise<XferResult>;
  destroy(): Promise<void>;
}
