// What one launch of the copy kernel reads, as bytes: the phase descriptor, the copy descriptors
// (with each copy's first chunk number), the signal addresses, and the words the kernel keeps
// (its arrival counter and status). All of a phase lives in ONE device allocation laid out here,
// so preparing a phase is one cudaMalloc and one upload. Pure: no CUDA needed to build or test it.
import { COPY_FIELDS, PHASE_FIELDS, chunkBytes, type KernelShape } from './kernel-source.ts';

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
  offsets: { phase: number; copies: number; signals: number; arrived: number; status: number };
  copies: CopySpan[];
  totalChunks: number;
  /** Bytes that move byte by byte (source and destination differently aligned). */
  unalignedBytes: number;
}

const WORD = 8;
const VECTOR = 16n;

/**
 * Cuts copies for the kernel: empty ones dropped; where source and destination are equally
 * misaligned, the few bytes up to the next 16-byte boundary become their own copy, so the rest
 * moves as 16-byte vectors. Copies misaligned to each other stay whole (moved byte by byte).
 */
export function alignCopies(copies: readonly CopySpan[]): { copies: CopySpan[]; unalignedBytes: number } {
  const out: CopySpan[] = [];
  let unalignedBytes = 0;
  for (const c of copies) {
    if (c.bytes <= 0) continue;
    const srcMis = c.src % VECTOR;
    if (srcMis !== c.dst % VECTOR) {
      out.push(c);
      unalignedBytes += c.bytes;
      continue;
    }
    const head = srcMis === 0n ? 0 : Math.min(c.bytes, Number(VECTOR - srcMis));
    if (head > 0) out.push({ src: c.src, dst: c.dst, bytes: head });
    if (c.bytes > head) out.push({ src: c.src + BigInt(head), dst: c.dst + BigInt(head), bytes: c.bytes - head });
  }
  return { copies: out, unalignedBytes };
}

/** Lays out and encodes a phase for an allocation that will start at `base`. */
export function phaseTable(spec: PhaseSpec, shape: KernelShape, base: bigint): PhaseTable {
  const { copies, unalignedBytes } = alignCopies(spec.copies);
  const chunk = chunkBytes(shape);
  const phaseAt = 0;
  const copiesAt = phaseAt + PHASE_FIELDS.length * WORD;
  const signalsAt = copiesAt + copies.length * COPY_FIELDS.length * WORD;
  const arrivedAt = signalsAt + spec.signals.length * WORD;
  const statusAt = arrivedAt + WORD;
  const bytes = Buffer.alloc(statusAt + WORD); // arrived and status start at zero
  let totalChunks = 0;
  copies.forEach((c, i) => {
    const at = copiesAt + i * COPY_FIELDS.length * WORD;
    const fields: Record<(typeof COPY_FIELDS)[number], bigint> = { src: c.src, dst: c.dst, bytes: BigInt(c.bytes), firstChunk: BigInt(totalChunks) };
    COPY_FIELDS.forEach((name, k) => bytes.writeBigUInt64LE(fields[name], at + k * WORD));
    totalChunks += Math.ceil(c.bytes / chunk);
  });
  spec.signals.forEach((address, i) => bytes.writeBigUInt64LE(address, signalsAt + i * WORD));
  const phase: Record<(typeof PHASE_FIELDS)[number], bigint> = {
    copies: base + BigInt(copiesAt),
    copyCount: BigInt(copies.length),
    totalChunks: BigInt(totalChunks),
    signals: base + BigInt(signalsAt),
    signalCount: BigInt(spec.signals.length),
    waits: spec.wait?.address ?? 0n,
    waitCount: BigInt(spec.wait?.count ?? 0),
    arrived: base + BigInt(arrivedAt),
    status: base + BigInt(statusAt),
    timeoutNs: BigInt(Math.max(0, Math.round(spec.timeoutNs))),
  };
  PHASE_FIELDS.forEach((name, k) => bytes.writeBigUInt64LE(phase[name], phaseAt + k * WORD));
  return { bytes, offsets: { phase: phaseAt, copies: copiesAt, signals: signalsAt, arrived: arrivedAt, status: statusAt }, copies, totalChunks, unalignedBytes };
}

/** Blocks of one launch: one per chunk, at most what fits on the GPU at once, at least one (it signals). */
export function gridBlocks(totalChunks: number, maxBlocks: number): number {
  return Math.max(1, Math.min(totalChunks, maxBlocks));
}
