// Checks shared by the backends when they register regions and connect peers.
import { TransferError, XferError } from '../errors.ts';
import type { MemoryKind, Region } from '../memory.ts';
import type { Store } from '../store.ts';
import type { Backend, BackendContext, BackendName, PeerView } from './types.ts';

export function requireMemoryKind(backend: BackendName, kinds: readonly MemoryKind[], region: Region): void {
  if (!kinds.includes(region.kind)) {
    throw new XferError(`${backend}: region '${region.name}' is ${region.kind} memory; ${backend} moves ${kinds.join(' and ')} memory only`);
  }
}

/** Same-node backends (shm, cuda) refuse a peer on another node, and say what reaches it. */
type Placed = Pick<BackendContext, 'rank' | 'node'>;

export function requireSameNode(backend: BackendName, ctx: Placed, peer: Pick<PeerView, 'rank' | 'node'>, means: string, instead: string): void {
  if (peer.node === ctx.node) return;
  throw new TransferError(
    `${backend}: rank ${peer.rank} is on node '${peer.node}', rank ${ctx.rank} on '${ctx.node}': ${means} reaches the same node only (use ${instead})`,
    backend,
    peer.rank,
  );
}

/**
 * Before anything is allocated: a backend that reaches its own node only (shm, cuda, libfabric's
 * shm provider) refuses a world spread over several nodes, naming a rank on another node.
 * Collective (one all-gather of node names) when the backend is node-local, free otherwise.
 */
export async function refuseOtherNodes(backend: Backend, ctx: Placed, store: Store): Promise<void> {
  if (!backend.nodeLocal) return;
  const nodes = await store.allGather<string>('xfer-nodes', ctx.node);
  const other = nodes.findIndex((node) => node !== ctx.node);
  if (other < 0) return;
  const { means, instead } = backend.nodeLocal;
  requireSameNode(backend.name, ctx, { rank: other, node: nodes[other] }, means, instead);
}
