// How many iterations a long-running bench measures between two gathers of the ranks' samples:
// enough that gathering costs little, few enough that a chunk takes about two seconds, so memory
// stays bounded and a partial report written after each chunk is never far behind. The next size
// comes from the gathered spans themselves, which every rank receives alike: every rank picks the
// same size with no extra message.

/** Spans of one chunk as gathered: per rank, [start, end] of each iteration (rank 0's clock, ns). */
interface GatheredChunk {
  spans: readonly (readonly [number, number])[];
}

export class ChunkSizer {
  /** Iterations in the next chunk. */
  size: number;

  constructor(
    readonly targetSeconds = 2,
    readonly maxSize = 1000,
    first = 16,
  ) {
    this.size = Math.min(first, maxSize);
  }

  /** Picks the next size from a chunk just gathered (its wall time in rank 0's clock). */
  next(chunk: readonly GatheredChunk[]): void {
    let start = Infinity;
    let end = -Infinity;
    let iterations = 0;
    for (const rank of chunk) {
      iterations = Math.max(iterations, rank.spans.length);
      for (const [s, e] of rank.spans) {
        if (s < start) start = s;
        if (e > end) end = e;
      }
    }
    if (iterations === 0 || !(end > start)) return;
    const perIterationSec = (end - start) / 1e9 / iterations;
    this.size = Math.max(1, Math.min(this.maxSize, Math.floor(this.targetSeconds / perIterationSec)));
  }
}
