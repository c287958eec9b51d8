// Where each traffic pattern's bytes live. Every rank has one send and one receive region per
// memory kind; a pattern's per-peer slices are offsets in them: row i of the matrix is rank i's
// send slices in column order, column j is rank j's receive slices in row order. Each pattern gets
// its own window of the regions (so patterns that overlap in time never touch each other's bytes
// and every pattern can be verified), or, with `shared`, all patterns use the same window (memory
// = the largest pattern instead of the sum; no verification then).
import { VerificationError } from '../errors.ts';
import type { MemoryKind, Region } from '../memory.ts';
import { checkPattern, describeMismatch, fillPattern, poisonPattern } from '../pattern.ts';
import { colSum, rowSum } from '../matrix.ts';
import type { XferRequest } from '../backends/types.ts';
import { matrixRequests, sliceOffsets } from '../matrix-requests.ts';
import type { TrafficPattern } from './traffic-pattern.ts';
import { checkNodeHostFits, formatBytes, type HostMemory } from './common/memory-limit.ts';

export type Side = 'send' | 'recv';

export interface BufferLayout {
  shared: boolean;
  /** [pattern][rank]: offset of the pattern's window in that rank's send / receive region. */
  sendBase: number[][];
  recvBase: number[][];
  /** Bytes of rank r's region of a kind and side. */
  regionSize(kind: MemoryKind, side: Side, rank: number): number;
  /** Memory kinds any pattern uses: each needs a send and a receive region on every rank. */
  kinds: MemoryKind[];
}

export function regionName(kind: MemoryKind, side: Side): string {
  return `${side}-${kind}`;
}

export function layoutBuffers(patterns: readonly TrafficPattern[], shared = false): BufferLayout {
  const ranks = patterns[0]?.matrix.length ?? 0;
  const size = new Map<string, number[]>(); // `${kind}/${side}` -> bytes per rank
  const base = (kind: MemoryKind, side: Side, need: (r: number) => number): number[] => {
    const key = `${kind}/${side}`;
    const used = size.get(key) ?? new Array<number>(ranks).fill(0);
    size.set(key, used);
    return used.map((bytes, r) => {
      used[r] = shared ? Math.max(bytes, need(r)) : bytes + need(r);
      return shared ? 0 : bytes;
    });
  };
  const sendBase: number[][] = [];
  const recvBase: number[][] = [];
  for (const p of patterns) {
    sendBase.push(base(p.memory, 'send', (r) => rowSum(p.matrix, r)));
    recvBase.push(base(p.memory, 'recv', (r) => colSum(p.matrix, r)));
  }
  return {
    shared,
    sendBase,
    recvBase,
    regionSize: (kind, side, rank) => size.get(`${kind}/${side}`)?.[rank] ?? 0,
    kinds: [...new Set(patterns.map((p) => p.memory))],
  };
}

/**
 * Checks, before anything is allocated, that this node can give the host memory of the patterns'
 * buffers (checkNodeHostFits, the check every benchmark shares). Ranks need different amounts (a
 * matrix's rows and columns), so the node's ranks are counted as the `localWorldSize` largest:
 * exact when every rank is on this node, an upper bound otherwise. Every rank computes the same
 * number, so every rank refuses alike. GPU memory is left to cudaMalloc.
 */
export function checkBuffersFit(what: string, layout: BufferLayout, worldSize: number, localWorldSize: number, memory?: HostMemory): void {
  if (!layout.kinds.includes('host')) return;
  const perRank = Array.from({ length: worldSize }, (_, r) => layout.regionSize('host', 'send', r) + layout.regionSize('host', 'recv', r));
  const largest = [...perRank].sort((a, b) => b - a).slice(0, Math.min(localWorldSize, worldSize));
  const how = `host memory for the send and receive buffers of the ${largest.length} rank(s) on this node (the largest rank: ${formatBytes(largest[0] ?? 0)})`;
  checkNodeHostFits(what, largest.reduce((a, b) => a + b, 0), how, memory);
}

/** This rank's requests for a pattern: WRITE pushes its row, READ pulls its column; `shards` requests per peer. */
export function patternRequests(p: TrafficPattern, layout: BufferLayout, me: number): XferRequest[] {
  const send = regionName(p.memory, 'send');
  const recv = regionName(p.memory, 'recv');
  const sendBase = layout.sendBase[p.index];
  const recvBase = layout.recvBase[p.index];
  return matrixRequests(p.matrix, me, p.op, p.shards).map((q) =>
    q.op === 'WRITE'
      ? { ...q, local: send, localOffset: q.localOffset + sendBase[me], remote: recv, remoteOffset: q.remoteOffset + recvBase[q.peer] }
      : { ...q, local: recv, localOffset: q.localOffset + recvBase[me], remote: send, remoteOffset: q.remoteOffset + sendBase[q.peer] },
  );
}

/** Ranks that send (non-zero row) and that receive (non-zero column) in a pattern. */
export function patternRanks(p: TrafficPattern): { senders: number[]; receivers: number[]; members: number[]; initiators: number[] } {
  const n = p.matrix.length;
  const all = Array.from({ length: n }, (_, r) => r);
  const senders = all.filter((r) => rowSum(p.matrix, r) > 0);
  const receivers = all.filter((r) => colSum(p.matrix, r) > 0);
  const members = all.filter((r) => senders.includes(r) || receivers.includes(r));
  return { senders, receivers, members, initiators: p.op === 'WRITE' ? senders : receivers };
}

/**
 * Verification data of one run of a pattern: the sender's slices get the stream (sender,
 * receiver, tag), the receiver's slices the complement of what must arrive.
 */
export function prepareVerification(p: TrafficPattern, layout: BufferLayout, regions: Map<string, Region>, me: number, tag: number): void {
  const { row, col } = sliceOffsets(p.matrix);
  const send = regions.get(regionName(p.memory, 'send'))!;
  const recv = regions.get(regionName(p.memory, 'recv'))!;
  p.matrix[me].forEach((n, j) => n > 0 && fillPattern(send, layout.sendBase[p.index][me] + row[me][j], n, { sender: me, receiver: j, iteration: tag }));
  p.matrix.forEach((r, i) => r[me] > 0 && poisonPattern(recv, layout.recvBase[p.index][me] + col[me][i], r[me], { sender: i, receiver: me, iteration: tag }));
}

/** Checks every receive slice of this rank in a pattern, byte for byte, from every sender. */
export function verifyReceived(p: TrafficPattern, layout: BufferLayout, regions: Map<string, Region>, me: number, tag: number): void {
  const { col } = sliceOffsets(p.matrix);
  const name = regionName(p.memory, 'recv');
  const recv = regions.get(name)!;
  p.matrix.forEach((r, i) => {
    const stream = { sender: i, receiver: me, iteration: tag };
    const m = r[me] > 0 ? checkPattern(recv, layout.recvBase[p.index][me] + col[me][i], r[me], stream) : undefined;
    if (m) {
      throw new VerificationError(
        `rank ${me}: pattern ${p.index} (${p.op}, ${p.matrixFile}): ${describeMismatch(name, stream, m)}`,
        m.offset,
        m.expected,
        m.got,
      );
    }
  });
}

/** --print-recv-buffers: one line per sender this rank receives from, its slice's length and first and last bytes. */
export function describeReceived(p: TrafficPattern, layout: BufferLayout, regions: Map<string, Region>, me: number): string[] {
  const { col } = sliceOffsets(p.matrix);
  const recv = regions.get(regionName(p.memory, 'recv'))!;
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex').replace(/(..)(?=.)/g, '$1 ');
  return p.matrix.flatMap((r, i) => {
    const n = r[me];
    if (n === 0) return [];
    const at = layout.recvBase[p.index][me] + col[me][i];
    const bytes = n <= 16 ? hex(recv.read(at, n)) : `${hex(recv.read(at, 8))} ... ${hex(recv.read(at + n - 8, 8))}`;
    return [`Recv buffer ${i} (pattern ${p.index}, ${n} bytes from rank ${i} to rank ${me}): ${bytes}`];
  });
}
