// The sender's store(): per round, every chunk of 256 tokens is gathered from the paged KV cache
// (slot_mapping) into a memory object in the sender's NIXL buffer, at the place it will take in the
// receiver's buffer, and written there, as many chunks per commit as the buffer holds; a commit
// waits until the receiver has freed the space. Timed as LMCache times store(): from the first
// gather to the last chunk's transfer. Throughput = bytes of the chunks / that time.
import { monoNs } from '../../clock.ts';
import type { XferEngine } from '../../engine.ts';
import type { XferRequest } from '../../backends/types.ts';
import type { Store } from '../../store.ts';
import { maxOf, mean, minOf, stddev } from '../../../common/stats.ts';
import { gbps, gibps } from '../kvpipe/kvpipe-protocol.ts';
import { RECEIVER } from '../kvpipe/pipe-roles.ts';
import { RingBuffer } from '../kvpipe/ring.ts';
import { CE_REGIONS, ceKeys, type ChunkCommit } from './cache-engine-protocol.ts';
import type { CacheEngineOptions } from './cache-engine-options.ts';
import { beginTimed, verifying } from '../common/timed-regions.ts';

/** Writes round `round`'s content into the sender's paged cache: one copy per layer half. */
export function fillSenderCache(engine: XferEngine, o: CacheEngineOptions, round: number): void {
  const cache = engine.regions.get(CE_REGIONS.cache)!;
  const half = Buffer.allocUnsafe(o.kv.slots * o.kv.pieceBytes);
  for (let layer = 0; layer < o.kv.shape.layers; layer++) {
    for (let kv = 0; kv < 2; kv++) cache.write(o.kv.cacheOffset(layer, kv, 0), o.kv.layerHalf(layer, kv, round, half));
  }
}

export async function runCacheSender(engine: XferEngine, store: Store, o: CacheEngineOptions, slots: Int32Array): Promise<boolean> {
  const tokens = o.numChunks * o.kv.shape.chunkSize;
  const perCommit = Math.min(o.numChunks, Math.floor(o.bufferBytes / o.kv.chunkBytes));
  const totalBytes = o.numChunks * o.kv.chunkBytes;
  const throughputs: number[] = [];
  let ok = true;
  console.log(`Chunks of ${o.kv.shape.chunkSize} tokens, ${o.kv.chunkBytes} bytes each; ${o.numChunks} chunks = ${totalBytes} bytes; NIXL buffer ${o.bufferBytes} bytes (${perCommit} chunks per commit)`);
  for (let round = 0; round < o.numRounds; round++) {
    console.log(`Starting round ${round + 1}/${o.numRounds}`);
    verifying(engine.rank.rank, 'cache-engine fill', () => fillSenderCache(engine, o, round));
    const ring = new RingBuffer(o.bufferBytes);
    const outstanding: number[] = [];
    const awaitAck = async (commit: number) => ring.release((await store.wait<{ tail: number }>(ceKeys.ack(round, commit), { from: RECEIVER })).tail);
    await store.barrier('ce-round');
    console.log(`Storing ${tokens} tokens (${o.numChunks} chunks)...`);
    const endTimed = beginTimed(engine.rank.rank, 'cache-engine store');
    const start = monoNs();
    let commit = 0;
    for (let first = 0; first < o.numChunks; first += perCommit, commit++) {
      const count = Math.min(perCommit, o.numChunks - first);
      let placement = ring.place(o.kv.chunkBytes, count);
      while (!placement) {
        if (outstanding.length > 0) await awaitAck(outstanding.shift()!);
        else ring.rewind();
        placement = ring.place(o.kv.chunkBytes, count);
      }
      // gather each chunk into the local buffer, at the offset it takes in the receiver's
      for (let k = 0; k < count; k++) {
        await engine.transfer(o.kv.chunkRequests('gather', engine.rank.rank, { cache: CE_REGIONS.cache, objects: CE_REGIONS.send }, slots, first + k, placement.positions[k]));
      }
      const writes: XferRequest[] = placement.positions.map((pos) => ({ op: 'WRITE', peer: RECEIVER, local: CE_REGIONS.send, localOffset: pos, remote: CE_REGIONS.ring, remoteOffset: pos, length: o.kv.chunkBytes }));
      await engine.transfer(writes);
      ring.commit(placement.endHead);
      outstanding.push(commit);
      const message: ChunkCommit = { chunks: placement.positions.map((pos, k) => [first + k, pos]), endHead: placement.endHead };
      await store.set(ceKeys.commit(round, commit), message);
    }
    const seconds = (monoNs() - start) / 1e9;
    endTimed();
    await store.set(ceKeys.timed(round), true);
    for (const c of outstanding) await awaitAck(c);
    throughputs.push(gbps(totalBytes, seconds));
    console.log(`Stored ${tokens} tokens in ${seconds.toFixed(6)} seconds`);
    console.log(`Throughput: ${gbps(totalBytes, seconds).toFixed(2)} GB/s (${gibps(totalBytes, seconds).toFixed(2)} GiB/s)`);
    const verdict = await store.wait<{ ok: boolean; message?: string }>(ceKeys.verdict(round), { from: RECEIVER });
    if (!verdict.ok) {
      console.log(`Receiver reported a verification failure in round ${round + 1}: ${verdict.message}`);
      ok = false;
    }
  }
  const gib = throughputs.map((t) => (t * 1e9) / 2 ** 30);
  console.log('Summary Statistics:');
  console.log(`Mean throughput: ${mean(throughputs).toFixed(2)} ± ${stddev(throughputs).toFixed(2)} GB/s (${mean(gib).toFixed(2)} ± ${stddev(gib).toFixed(2)} GiB/s)`);
  // both units on every throughput line: a bare "GB/s" is read as LMCache's (GiB/s), see the lmcache extractor
  console.log(`Min throughput: ${minOf(throughputs).toFixed(2)} GB/s (${minOf(gib).toFixed(2)} GiB/s)`);
  console.log(`Max throughput: ${maxOf(throughputs).toFixed(2)} GB/s (${maxOf(gib).toFixed(2)} GiB/s)`);
  return ok;
}
