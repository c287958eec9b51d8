// The cuda backend's copy-engine path, planned: which cudaMemcpyAsync calls move a plan's
// requests, and on which stream. Requests that continue each other in both memories (the next
// starts where the previous ended, source and destination) and are each at least MERGE_FROM bytes
// become ONE copy: each copy costs the copy engine a few microseconds of setup (the KV pipe's
// 128 objects of 32 MiB per commit ran at 377 GB/s as 128 copies, against 398 GB/s for one 4 GiB
// peer copy on 2 H100s). Smaller requests stay apart (a sweep's batch of small blocks keeps its
// per-request cost; `auto` gives many small blocks to the copy kernel anyway). Then copies longer
// than the chunk size are cut, and copies go round robin over the streams ('parallel') or all on
// stream 0 in the given order ('staggered'). Pure: no CUDA needed to test it.

/** A request as the backend resolved it: device addresses and length. */
export interface CopyRequest {
  src: bigint;
  dst: bigint;
  length: number;
}

export interface EngineCopy {
  /** The requests this copy completes (indices into the plan's requests), in order. */
  requests: number[];
  stream: number;
  src: bigint;
  dst: bigint;
  length: number;
}

/** Requests at least this long merge with a contiguous neighbour of at least this length. */
export const MERGE_FROM = 1 << 20;

export function copyEngineCopies(
  resolved: readonly CopyRequest[],
  order: readonly number[],
  options: { chunkBytes: number; streams: number; staggered: boolean },
): EngineCopy[] {
  // Runs of contiguous requests, in `order`.
  const runs: { requests: number[]; src: bigint; dst: bigint; length: number }[] = [];
  for (const i of order) {
    const r = resolved[i];
    const last = runs[runs.length - 1];
    const lastLength = last ? resolved[last.requests[last.requests.length - 1]].length : 0;
    if (last && r.length >= MERGE_FROM && lastLength >= MERGE_FROM && last.src + BigInt(last.length) === r.src && last.dst + BigInt(last.length) === r.dst) {
      last.requests.push(i);
      last.length += r.length;
    } else {
      runs.push({ requests: [i], src: r.src, dst: r.dst, length: r.length });
    }
  }
  const copies: EngineCopy[] = [];
  for (const run of runs) {
    const step = Math.min(options.chunkBytes, Math.max(run.length, 1));
    let done = 0;
    do {
      const length = Math.min(step, run.length - done);
      const stream = options.staggered ? 0 : copies.length % options.streams;
      copies.push({ requests: run.requests, stream, src: run.src + BigInt(done), dst: run.dst + BigInt(done), length });
      done += step;
    } while (done < run.length);
  }
  return copies;
}
