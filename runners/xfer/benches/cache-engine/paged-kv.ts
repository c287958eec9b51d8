// The paged KV cache of LMCache's CacheEngine test (tests/disagg/test_nixl_cache_engine.py) and
// where each token's keys and values move. The cache: per layer a [2, num_blocks * block_size,
// heads * head_size] tensor (K and V of every slot); a token's K (or V) of one layer is one
// "piece" of heads * head_size elements. Tokens 0..T-1 live at slot_mapping[t], a seeded shuffle
// of all slots. A chunk of chunk_size (256) tokens is one memory object in KV_2LTD order
// [2, layers, tokens, hidden]: store() gathers every piece of a chunk into it, retrieve() scatters
// it back into the receiver's cache at the same slots.
//
// Content: every piece starts with a 16-byte stamp (magic, layer*2+kv, slot, round) over a body of
// the round, so a receiver finds a piece from another layer, slot or round, or one never written.
import type { XferRequest } from '../../backends/types.ts';
import { seededRandom } from '../../../common/random.ts';
import { patternBytes } from '../../pattern.ts';

export interface PagedKvShape {
  layers: number;
  heads: number;
  headSize: number;
  blockSize: number;
  numBlocks: number;
  chunkSize: number;
  dtypeBytes: number;
}

/** LMCache's test: 32 layers, 8 heads of 128 (hidden 1024), 10,000 blocks of 16 slots, 256-token chunks, bf16. */
export const LMCACHE_SHAPE: PagedKvShape = { layers: 32, heads: 8, headSize: 128, blockSize: 16, numBlocks: 10_000, chunkSize: 256, dtypeBytes: 2 };

export const STAMP_BYTES = 16;
const MAGIC = 0x4b504147; // 'GAPK'

export class PagedKv {
  readonly slots: number;
  /** One token's K (or V) in one layer. */
  readonly pieceBytes: number;
  /** One layer: K then V of every slot. */
  readonly layerBytes: number;
  readonly cacheBytes: number;
  /** One chunk's memory object, [2, layers, chunkSize, hidden]. */
  readonly chunkBytes: number;

  constructor(readonly shape: PagedKvShape) {
    this.slots = shape.numBlocks * shape.blockSize;
    this.pieceBytes = shape.heads * shape.headSize * shape.dtypeBytes;
    this.layerBytes = 2 * this.slots * this.pieceBytes;
    this.cacheBytes = shape.layers * this.layerBytes;
    this.chunkBytes = 2 * shape.layers * shape.chunkSize * this.pieceBytes;
  }

  /** Chunks the cache can hold (LMCache's max_chunks = num_blocks * block_size // chunk_size). */
  get maxChunks(): number {
    return Math.floor(this.slots / this.shape.chunkSize);
  }

  /** Offset in the cache of slot `slot`'s K (kv 0) or V (kv 1) of `layer`. */
  cacheOffset(layer: number, kv: number, slot: number): number {
    return layer * this.layerBytes + (kv * this.slots + slot) * this.pieceBytes;
  }

  /** Offset in a chunk object of token `t`'s K or V of `layer` (KV_2LTD). */
  chunkOffset(kv: number, layer: number, t: number): number {
    return ((kv * this.shape.layers + layer) * this.shape.chunkSize + t) * this.pieceBytes;
  }

  /** WRITE requests to this rank itself copying between the cache and a chunk object at `objectOffset`, adjacent pieces merged. */
  chunkRequests(direction: 'gather' | 'scatter', rank: number, regions: { cache: string; objects: string }, slotMapping: Int32Array, chunk: number, objectOffset: number): XferRequest[] {
    const out: XferRequest[] = [];
    const { layers, chunkSize } = this.shape;
    for (let kv = 0; kv < 2; kv++) {
      for (let layer = 0; layer < layers; layer++) {
        for (let t = 0; t < chunkSize; t++) {
          const cache = this.cacheOffset(layer, kv, slotMapping[chunk * chunkSize + t]);
          const object = objectOffset + this.chunkOffset(kv, layer, t);
          const [local, localOffset, remote, remoteOffset] =
            direction === 'gather' ? [regions.cache, cache, regions.objects, object] : [regions.objects, object, regions.cache, cache];
          const last = out.at(-1);
          if (last && last.localOffset + last.length === localOffset && last.remoteOffset + last.length === remoteOffset) {
            last.length += this.pieceBytes; // consecutive slots: one copy
            continue;
          }
          out.push({ op: 'WRITE', peer: rank, local, localOffset, remote, remoteOffset, length: this.pieceBytes });
        }
      }
    }
    return out;
  }

  /** The bytes of slot `slot`'s K or V of `layer` in round `round`. */
  piece(layer: number, kv: number, slot: number, round: number, out: Buffer = Buffer.allocUnsafe(this.pieceBytes)): Buffer {
    out.set(this.body(round));
    writeStamp(out, 0, layer * 2 + kv, slot, round);
    return out;
  }

  /**
   * One half (K or V) of one layer of the sender's cache for round `round`: every slot stamped.
   * Written in one go, so filling the cache costs a memory copy per layer half, not one per piece.
   */
  layerHalf(layer: number, kv: number, round: number, out: Buffer = Buffer.allocUnsafe(this.slots * this.pieceBytes)): Buffer {
    out.fill(this.body(round));
    for (let slot = 0; slot < this.slots; slot++) writeStamp(out, slot * this.pieceBytes, layer * 2 + kv, slot, round);
    return out;
  }

  /** Why piece `got` is not slot `slot`'s K or V of `layer` in round `round`, or undefined. */
  checkPiece(got: Uint8Array, layer: number, kv: number, slot: number, round: number): string | undefined {
    const data = Buffer.from(got.buffer, got.byteOffset, got.byteLength);
    const expected = this.piece(layer, kv, slot, round, this.scratch());
    if (Buffer.compare(expected, data) === 0) return undefined;
    const at = data.readUInt32LE(0) === MAGIC ? ` (it holds ${describeStamp(data)})` : ' (never written: no stamp)';
    let i = 0;
    while (expected[i] === data[i]) i++;
    return `layer ${layer} ${kv ? 'V' : 'K'} of slot ${slot} (round ${round}) byte ${i}: expected 0x${expected[i].toString(16).padStart(2, '0')}, got 0x${data[i].toString(16).padStart(2, '0')}${at}`;
  }

  private bodies = new Map<number, Uint8Array>();
  private scratchPiece: Buffer | undefined;

  private body(round: number): Uint8Array {
    let b = this.bodies.get(round);
    if (!b) {
      b = patternBytes({ sender: 0x6b76, receiver: 1, iteration: round }, 0, this.pieceBytes);
      this.bodies.set(round, b);
    }
    return b;
  }

  private scratch(): Buffer {
    this.scratchPiece ??= Buffer.allocUnsafe(this.pieceBytes);
    return this.scratchPiece;
  }
}

function writeStamp(out: Buffer, at: number, layerKv: number, slot: number, round: number): void {
  out.writeUInt32LE(MAGIC, at);
  out.writeUInt32LE(layerKv, at + 4);
  out.writeUInt32LE(slot, at + 8);
  out.writeUInt32LE(round, at + 12);
}

function describeStamp(data: Buffer): string {
  const layerKv = data.readUInt32LE(4);
  return `layer ${layerKv >> 1} ${layerKv & 1 ? 'V' : 'K'} of slot ${data.readUInt32LE(8)}, round ${data.readUInt32LE(12)}`;
}

/**
 * slot_mapping: tokens 0..tokens-1 at the first `tokens` slots of a seeded shuffle of every slot
 * (LMCache shuffles with Python's random.seed(42); the slots differ, the scatter is the same).
 */
export function slotMapping(slots: number, tokens: number, seed: number): Int32Array {
  const all = Int32Array.from({ length: slots }, (_, i) => i);
  const random = seededRandom(seed);
  for (let i = slots - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [all[i], all[j]] = [all[j], all[i]];
  }
  return all.slice(0, tokens);
}
