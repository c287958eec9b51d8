// The receiver: each commit's chunks are copied out of its NIXL buffer into its store of received
// chunks, which frees the buffer for the sender (acknowledged); with every chunk received,
// retrieve() scatters them into its own paged cache at the same slot_mapping (timed: LMCache's
// "Retrieval throughput"), then every mapped piece of every layer is checked.
import { monoNs } from '../../clock.ts';
import type { XferEngine } from '../../engine.ts';
import type { Store } from '../../store.ts';
import { gbps, gibps } from '../kvpipe/kvpipe-protocol.ts';
import { SENDER } from '../kvpipe/pipe-roles.ts';
import { CE_REGIONS, ceKeys, type ChunkCommit } from './cache-engine-protocol.ts';
import type { CacheEngineOptions } from './cache-engine-options.ts';
import { beginTimed, verifying } from '../common/timed-regions.ts';

export async function runCacheReceiver(engine: XferEngine, store: Store, o: CacheEngineOptions, slots: Int32Array): Promise<boolean> {
  const me = engine.rank.rank;
  const cache = engine.regions.get(CE_REGIONS.cache)!;
  const tokens = o.numChunks * o.kv.shape.chunkSize;
  let ok = true;
  for (let round = 0; round < o.numRounds; round++) {
    verifying(me, 'cache-engine poison', () => cache.fill(0)); // no stamp anywhere: a piece never retrieved cannot pass
    await store.barrier('ce-round');
    console.log('Waiting to receive data...');
    let received = 0;
    for (let commit = 0; received < o.numChunks; commit++) {
      const message = await store.wait<ChunkCommit>(ceKeys.commit(round, commit), { from: SENDER });
      await engine.transfer(
        message.chunks.map(([chunk, pos]) => ({ op: 'WRITE' as const, peer: me, local: CE_REGIONS.ring, localOffset: pos, remote: CE_REGIONS.store, remoteOffset: chunk * o.kv.chunkBytes, length: o.kv.chunkBytes })),
      );
      await store.set(ceKeys.ack(round, commit), { tail: message.endHead });
      received += message.chunks.length;
    }
    console.log(`Received all ${o.numChunks} chunks`);
    console.log('Retrieving and verifying data...');
    const endTimed = beginTimed(me, 'cache-engine retrieve');
    const t0 = monoNs();
    for (let chunk = 0; chunk < o.numChunks; chunk++) {
      await engine.transfer(o.kv.chunkRequests('scatter', me, { cache: CE_REGIONS.cache, objects: CE_REGIONS.store }, slots, chunk, chunk * o.kv.chunkBytes));
    }
    const seconds = (monoNs() - t0) / 1e9;
    endTimed();
    const bytes = o.numChunks * o.kv.chunkBytes;
    console.log(`Successfully retrieved all ${tokens} tokens in ${seconds.toFixed(6)} seconds`);
    console.log(`Retrieval throughput: ${gbps(bytes, seconds).toFixed(2)} GB/s (${gibps(bytes, seconds).toFixed(2)} GiB/s)`);
    if (o.testCorruptChunk !== undefined && o.testCorruptChunk < o.numChunks) {
      const at = o.kv.cacheOffset(0, 0, slots[o.testCorruptChunk * o.kv.shape.chunkSize]) + (o.kv.pieceBytes >> 1);
      cache.write(at, Uint8Array.of(cache.read(at, 1)[0] ^ 0x01));
    }
    await store.wait(ceKeys.timed(round), { from: SENDER }); // the sender's store() is timed: checking cannot slow it
    const failure = verifying(me, 'cache-engine check', () => verifyCache(engine, o, slots, round));
    console.log(failure ? `Data verification failed - pattern doesn't match! ${failure}` : 'Data verification successful - pattern matches!');
    ok &&= !failure;
    await store.set(ceKeys.verdict(round), failure ? { ok: false, message: failure } : { ok: true });
  }
  return ok;
}

/** Every mapped piece of the paged cache, read one layer half at a time; the first wrong one, or undefined. */
function verifyCache(engine: XferEngine, o: CacheEngineOptions, slots: Int32Array, round: number): string | undefined {
  const cache = engine.regions.get(CE_REGIONS.cache)!;
  const halfBytes = o.kv.slots * o.kv.pieceBytes;
  for (let layer = 0; layer < o.kv.shape.layers; layer++) {
    for (let kv = 0; kv < 2; kv++) {
      const half = cache.read(o.kv.cacheOffset(layer, kv, 0), halfBytes);
      for (const slot of slots) {
        const piece = half.subarray(slot * o.kv.pieceBytes, (slot + 1) * o.kv.pieceBytes);
        const failure = o.kv.checkPiece(piece, layer, kv, slot, round);
        if (failure) return failure;
      }
    }
  }
  return undefined;
}
