// The cuda backend's copy-engine plan (pure): which copies move which requests, on which stream.
import { describe, expect, it } from 'vitest';
import { copyEngineCopies, MERGE_FROM } from '../../runners/xfer/backends/cuda-copies.ts';

const MiB = 1 << 20;
const req = (src: number, dst: number, length: number) => ({ src: BigInt(src), dst: BigInt(dst), length });
const plain = { chunkBytes: Infinity, streams: 4, staggered: false };

describe('copy-engine copies', () => {
  it('merges large requests that continue each other in both memories (a KV commit of contiguous objects is one copy)', () => {
    const objects = Array.from({ length: 128 }, (_, i) => req(0x10000000 + i * 32 * MiB, 0x900000000 + i * 32 * MiB, 32 * MiB));
    const copies = copyEngineCopies(objects, objects.map((_, i) => i), plain);
    expect(copies).toEqual([{ requests: objects.map((_, i) => i), stream: 0, src: objects[0].src, dst: objects[0].dst, length: 128 * 32 * MiB }]);
  });

  it('keeps apart: small requests, a gap in either memory, and requests out of order', () => {
    const small = [req(0, 0x1000, 4096), req(4096, 0x2000, 4096)];
    expect(copyEngineCopies(small, [0, 1], plain).map((c) => c.requests)).toEqual([[0], [1]]);
    const big = [req(0, 0, MERGE_FROM), req(MERGE_FROM, MERGE_FROM + 16, MERGE_FROM), req(2 * MERGE_FROM, 2 * MERGE_FROM + 16, MERGE_FROM), req(3 * MERGE_FROM, 3 * MERGE_FROM + 16, MERGE_FROM - 1)];
    // 0 -> 1 has a gap at the destination; 1 -> 2 continues; 3 is under MERGE_FROM
    expect(copyEngineCopies(big, [0, 1, 2, 3], plain).map((c) => [c.requests, c.length, c.stream])).toEqual([
      [[0], MERGE_FROM, 0],
      [[1, 2], 2 * MERGE_FROM, 1],
      [[3], MERGE_FROM - 1, 2],
    ]);
    // the given order decides what is adjacent
    expect(copyEngineCopies(big, [2, 1], plain).map((c) => c.requests)).toEqual([[2], [1]]);
  });

  it('cuts copies at the chunk size over the streams; staggered keeps every copy on stream 0', () => {
    const two = [req(0, 0, 40 * MiB), req(40 * MiB, 40 * MiB, 24 * MiB)];
    const chunked = copyEngineCopies(two, [0, 1], { chunkBytes: 16 * MiB, streams: 4, staggered: false });
    expect(chunked.map((c) => [Number(c.src) / MiB, c.length / MiB, c.stream])).toEqual([
      [0, 16, 0],
      [16, 16, 1],
      [32, 16, 2],
      [48, 16, 3],
    ]);
    expect(chunked.every((c) => c.requests.join() === '0,1')).toBe(true);
    expect(copyEngineCopies(two, [0, 1], { chunkBytes: 16 * MiB, streams: 4, staggered: true }).map((c) => c.stream)).toEqual([0, 0, 0, 0]);
    // an empty request still gets its copy (its completion is an event like any other)
    expect(copyEngineCopies([req(0, 0, 0)], [0], plain)).toEqual([{ requests: [0], stream: 0, src: 0n, dst: 0n, length: 0 }]);
  });
});
