// Checks shared by the backends when they register regions and connect peers.
import { TransferError, XferError } from '../errors.ts';
import type { MemoryKind, Region } from '../memory.ts';
import type { BackendContext, BackendName, PeerView } from './types.ts';

export function requireMemoryKind(backend: BackendName, kinds: readonly MemoryKind[], region: Region): void {
  if (!kinds.includes(region.kind)) {
    throw new XferError(`${backend}: region '${region.name}' is ${region.kind} memory; ${backend} moves ${kinds.join(' and ')} memory only`);
  }
}

/** Same-node backends (shm, cuda) refuse a peer on another node, and say what reaches it. */
export function requireSameNode(backend: BackendName, ctx: BackendContext, peer: PeerView, means: string, instead: string): void {
  if (peer.node === ctx.node) return;
  throw new TransferError(
    `${backend}: rank ${peer.rank} is on node '${peer.node}', rank ${ctx.rank} on '${ctx.node}': ${means} reaches the same node only (use ${instead})`,
    backend,
    peer.rank,
  );
}
