// What one launch of the copy kernel reads, as bytes: the phase descriptor, the copy descriptors,
// the chunk table (for each chunk number: its copy and its place in it), the signal addresses, and
// the state the kernel keeps (block counters, status, timestamps). All of a phase lives in ONE
// device allocation laid out here, so preparing a phase is one cudaMalloc and one upload. Pure: no
// CUDA needed to build or test it.
import { COPY_FIELDS, PHASE_FIELDS, STATE_FIELDS, chunkBytes, type KernelShape } from './kernel-source.ts';

/** One copy as the kernel sees it: device addresses (local, or a peer's through CUDA IPC). */
export interface CopySpan {
  src: bigint;
  dst: bigint;
  bytes: number;
}

export interface PhaseSpec {
  copies: readonly CopySpan[];
  /** Device addresses of 64-bit words the kernel sets to the launch's sequence number afterwards. */
  signals: readonly bigint[];
  /** Contiguous 64-bit words the kernel waits on until each holds at least the sequence number. */
  wait?: { address: bigint; count: number };
  /** How long the kernel waits for its signals before it gives up (status = timeout). */
  timeoutNs: number;
}

export interface PhaseTable {
  /** Everything the kernel reads, to upload at the allocation's start. */
  bytes: Buffer;
  /** Offsets inside the allocation. */
  offsets: { phase: number; copies: number; chunks: number; signals: number; state: number };
  copies: CopySpan[];
  totalChunks: number;
  /** Bytes that move byte by byte (source and destination differently aligned). */
  unalignedBytes: number;
}

const WORD = 8;
const VECTOR = 16n;

const LINE = 128n;
/** From this size on, a copy's head is cut so that the rest starts on a 128-byte line of its destination. */
export const LINE_ALIGN_FROM = 64 * 1024;

/**
 * Cuts copies for the kernel: empty ones dropped; where source and destination are equally
 * misaligned (mod 16), the few bytes up to the next boundary of the destination become their own
 * copy, so the rest moves as 16-byte vectors: the next 16-byte boundary, or for copies of 64 KiB
 * and more the next 128-byte line, so every warp then writes whole lines (on 2 H100s, SM writes
 * over NVLink into 16-byte-aligned places ran at ~325 GB/s against ~355 into line-aligned ones).
 * Copies misaligned to each other stay whole (moved byte by byte).
 */
export function alignCopies(copies: readonly CopySpan[]): { copies: CopySpan[]; unalignedBytes: number } {
  const out: CopySpan[] = [];
  let unalignedBytes = 0;
  for (const c of copies) {
    if (c.bytes <= 0) continue;
    if (c.src % VECTOR !== c.dst % VECTOR) {
      out.push(c);
      unalignedBytes += c.bytes;
      continue;
    }
    const boundary = c.bytes >= LINE_ALIGN_FROM ? LINE : VECTOR;
    const mis = c.dst % boundary;
    const head = mis === 0n ? 0 : Math.min(c.bytes, Number(boundary - mis));
    if (head > 0) out.push({ src: c.src, dst: c.dst, bytes: head });
    if (c.bytes > head) out.push({ src: c.src + BigInt(head), dst: c.dst + BigInt(head), bytes: c.bytes - head });
  }
  return { copies: out, unalignedBytes };
}

/**
 * The order in which the kernel takes chunks, as [copy, chunk in copy] pairs: the copies' chunks
 * interleaved by their place in their copy (chunk j of a copy of n chunks sits at (j + 1/2) / n),
 * copies in their given order among equals. So every stretch of chunk numbers, and so the blocks
 * of one round, holds each copy in proportion to its size: a phase's copies progress together.
 */
export function interleaveChunks(chunkCounts: readonly number[]): Uint32Array[] {
  const total = chunkCounts.reduce((a, n) => a + n, 0);
  const copyOf = new Uint32Array(total);
  const indexOf = new Uint32Array(total);
  const live = chunkCounts.map((n, c) => ({ c, n })).filter((x) => x.n > 0);
  if (live.length === 1) {
    indexOf.forEach((_, j) => (indexOf[j] = j));
    copyOf.fill(live[0].c);
    return [copyOf, indexOf];
  }
  // Merge by position (j + 1/2) / n: a binary heap over the copies' next chunks.
  const next = live.map(() => 0);
  const key = (i: number) => (next[i] + 0.5) / live[i].n;
  const heap = live.map((_, i) => i);
  const less = (a: number, b: number) => key(a) < key(b) || (key(a) === key(b) && a < b);
  const down = (at: number) => {
    for (;;) {
      const l = 2 * at + 1;
      const r = l + 1;
      let m = at;
      if (l < heap.length && less(heap[l], heap[m])) m = l;
      if (r < heap.length && less(heap[r], heap[m])) m = r;
      if (m === at) return;
      [heap[at], heap[m]] = [heap[m], heap[at]];
      at = m;
    }
  };
  for (let i = Math.floor(heap.length / 2) - 1; i >= 0; i--) down(i);
  for (let k = 0; k < total; k++) {
    const i = heap[0];
    copyOf[k] = live[i].c;
    indexOf[k] = next[i]++;
    if (next[i] === live[i].n) {
      heap[0] = heap[heap.length - 1];
      heap.pop();
    }
    if (heap.length > 0) down(0);
  }
  return [copyOf, indexOf];
}

/** Lays out and encodes a phase for an allocation that will start at `base`. */
export function phaseTable(spec: PhaseSpec, shape: KernelShape, base: bigint): PhaseTable {
  const { copies, unalignedBytes } = alignCopies(spec.copies);
  const chunk = chunkBytes(shape);
  const counts = copies.map((c) => Math.ceil(c.bytes / chunk));
  const [copyOf, indexOf] = interleaveChunks(counts);
  const totalChunks = copyOf.length;
  const phaseAt = 0;
  const copiesAt = phaseAt + PHASE_FIELDS.length * WORD;
  const chunksAt = copiesAt + copies.length * COPY_FIELDS.length * WORD;
  const signalsAt = chunksAt + totalChunks * WORD;
  const stateAt = signalsAt + spec.signals.length * WORD;
  const bytes = Buffer.alloc(stateAt + STATE_FIELDS.length * WORD); // the state starts at zero
  copies.forEach((c, i) => {
    const at = copiesAt + i * COPY_FIELDS.length * WORD;
    const fields: Record<(typeof COPY_FIELDS)[number], bigint> = { src: c.src, dst: c.dst, bytes: BigInt(c.bytes) };
    COPY_FIELDS.forEach((name, k) => bytes.writeBigUInt64LE(fields[name], at + k * WORD));
  });
  for (let k = 0; k < totalChunks; k++) {
    bytes.writeUInt32LE(indexOf[k], chunksAt + k * WORD);
    bytes.writeUInt32LE(copyOf[k], chunksAt + k * WORD + 4);
  }
  spec.signals.forEach((address, i) => bytes.writeBigUInt64LE(address, signalsAt + i * WORD));
  const phase: Record<(typeof PHASE_FIELDS)[number], bigint> = {
    copies: base + BigInt(copiesAt),
    copyCount: BigInt(copies.length),
    chunks: base + BigInt(chunksAt),
    totalChunks: BigInt(totalChunks),
    signals: base + BigInt(signalsAt),
    signalCount: BigInt(spec.signals.length),
    waits: spec.wait?.address ?? 0n,
    waitCount: BigInt(spec.wait?.count ?? 0),
    state: base + BigInt(stateAt),
    timeoutNs: BigInt(Math.max(0, Math.round(spec.timeoutNs))),
  };
  PHASE_FIELDS.forEach((name, k) => bytes.writeBigUInt64LE(phase[name], phaseAt + k * WORD));
  return { bytes, offsets: { phase: phaseAt, copies: copiesAt, chunks: chunksAt, signals: signalsAt, state: stateAt }, copies, totalChunks, unalignedBytes };
}

/** Blocks of one launch: one per chunk, at most what fits on the GPU at once, at least one (it signals). */
export function gridBlocks(totalChunks: number, maxBlocks: number): number {
  return Math.max(1, Math.min(totalChunks, maxBlocks));
}

/** The kernel's state words of a phase, decoded (global-timer nanoseconds). */
export type PhaseState = Record<(typeof STATE_FIELDS)[number], bigint>;

export function decodeState(bytes: Uint8Array): PhaseState {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Object.fromEntries(STATE_FIELDS.map((name, k) => [name, b.readBigUInt64LE(k * WORD)])) as PhaseState;
}

export const STATE_BYTES = STATE_FIELDS.length * WORD;
