// LMCache's CacheEngine test on the engine: a paged KV cache, slot_mapping,
// 256-token chunks gathered into memory objects, sent through a bounded NIXL buffer, retrieved
// into the receiver's paged cache at the same slots, every mapped piece checked. Small shapes
// here (host memory); bench/gpu/run.sh nixl-tools runs LMCache's own shape on a GPU.
import { describe, expect, it } from 'vitest';
import { extractLmcacheMetrics } from '../../../framework/metrics/extractors/lmcache.ts';
import { parseCacheEngineArgs } from '../../../runners/xfer/benches/cache-engine/cache-engine-options.ts';
import { LMCACHE_SHAPE, PagedKv, slotMapping } from '../../../runners/xfer/benches/cache-engine/paged-kv.ts';
import { runBench } from './bench-cli.ts';

const small = ['cache-engine', '--num-layers', '2', '--num-heads', '1', '--head-size', '64', '--num-blocks', '128', '--num-chunks', '6', '--buffer-size', '256K'];

describe('paged KV cache and chunks', () => {
  it("LMCache's shape: 32 MiB chunks, 625 chunks at most, pieces of 2 KiB", () => {
    const kv = new PagedKv(LMCACHE_SHAPE);
    expect([kv.chunkBytes, kv.maxChunks, kv.pieceBytes, kv.slots]).toEqual([32 * 1024 * 1024, 625, 2048, 160_000]);
    expect(parseCacheEngineArgs([])).toMatchObject({ numChunks: 10, numRounds: 1, bufferBytes: 2 ** 30, seed: 42 });
    expect(() => parseCacheEngineArgs(['--num-chunks', '626'])).toThrow('Number of chunks must be <= 625 (num_blocks x block_size / chunk_size)');
  });

  it('gathers every piece of a chunk from its slot into KV_2LTD order, adjacent slots in one copy', () => {
    const kv = new PagedKv({ layers: 2, heads: 1, headSize: 8, blockSize: 4, numBlocks: 2, chunkSize: 4, dtypeBytes: 2 });
    const slots = Int32Array.from([5, 6, 0, 3]);
    const gather = kv.chunkRequests('gather', 0, { cache: 'c', objects: 'o' }, slots, 0, 1000);
    // per (kv, layer): slots 5,6 are adjacent (one copy of 2 pieces), then 0, then 3
    expect(gather).toHaveLength(2 * 2 * 3);
    expect(gather.slice(0, 3).map((r) => [r.localOffset, r.remoteOffset, r.length])).toEqual([
      [kv.cacheOffset(0, 0, 5), 1000 + kv.chunkOffset(0, 0, 0), 32],
      [kv.cacheOffset(0, 0, 0), 1000 + kv.chunkOffset(0, 0, 2), 16],
      [kv.cacheOffset(0, 0, 3), 1000 + kv.chunkOffset(0, 0, 3), 16],
    ]);
    const scatter = kv.chunkRequests('scatter', 1, { cache: 'c', objects: 'o' }, slots, 0, 0);
    expect(scatter[0]).toMatchObject({ peer: 1, local: 'o', remote: 'c', localOffset: 0, remoteOffset: kv.cacheOffset(0, 0, 5), length: 32 });
    const mapping = slotMapping(1000, 300, 42);
    expect(new Set(mapping).size).toBe(300);
    expect([...slotMapping(1000, 300, 42)]).toEqual([...mapping]);
  });
});

describe('disagg-bench cache-engine', { concurrent: true }, () => {
  it('stores and retrieves 6 chunks through a 2-chunk buffer over 2 rounds, every mapped piece verified', async () => {
    const r = await runBench([...small, '--num-rounds', '2']);
    expect(r.exitCode, r.out).toBe(0);
    expect(r.out.match(/Stored 1536 tokens in [\d.]+ seconds/g)).toHaveLength(2);
    expect(r.out.match(/Data verification successful - pattern matches!/g)).toHaveLength(2);
    expect(r.out).toMatch(/Mean throughput: [\d.]+ ± [\d.]+ GB\/s \([\d.]+ ± [\d.]+ GiB\/s\)/);
    const { metrics, problems } = extractLmcacheMetrics(r.out);
    expect(problems).toEqual([]);
    expect(metrics.filter((m) => m.name === 'STORE_TIME_S').map((m) => m.labels.round)).toEqual([1, 2]);
    expect(metrics.filter((m) => m.name === 'RETRIEVAL_THROUGHPUT_GBPS')).toHaveLength(2);
    expect(metrics.find((m) => m.name === 'VERIFIED_ROUNDS')?.value).toBe(2);
  });

  it('a piece changed after retrieval is found and named, and fails the run', async () => {
    const r = await runBench([...small, '--test-corrupt-chunk', '3']);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/Data verification failed - pattern doesn't match! layer 0 K of slot \d+ \(round 0\) byte 64: expected 0x[0-9a-f]{2}, got 0x[0-9a-f]{2} \(it holds layer 0 K of slot \d+, round 0\)/);
    expect(r.out).toContain('Receiver reported a verification failure in round 1');
  });
});
