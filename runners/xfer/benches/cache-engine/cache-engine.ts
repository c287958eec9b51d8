// `disagg-bench cache-engine`: LMCache's CacheEngine test over NIXL (LMCache tests/disagg/
// test_nixl_cache_engine.py) on the transfer engine. The sender stores num_chunks x 256 tokens of
// a paged KV cache (slot_mapping): each chunk is gathered into a memory object in its NIXL buffer
// and written into the receiver's; the receiver keeps the chunks, then retrieves them into its own
// paged cache at the same slots and checks every piece. Per round: store throughput (sender) and
// retrieval throughput (receiver); over the rounds mean ± std, min, max.
//   disagg-bench cache-engine --ranks 2 --num-chunks 500 --num-rounds 5
//   disagg-bench cache-engine --role receiver|sender --host H --port P ...   (the seed's two terminals)
import type { MemoryKind } from '../../memory.ts';
import { rankFromEnv, type RankInfo } from '../../rank.ts';
import { runAsRank } from '../bench-rank.ts';
import { checkHostFits } from '../common/memory-limit.ts';
import { runAsRanks, takeRanksOption } from '../common/rank-launch.ts';
import { takeUcxFlags, ucxFlagsUsage } from '../common/ucx-flags.ts';
import { pipeStoreOptions, RECEIVER, roleRank, SENDER } from '../kvpipe/pipe-roles.ts';
import { CE_REGIONS } from './cache-engine-protocol.ts';
import { parseCacheEngineArgs, type CacheEngineOptions } from './cache-engine-options.ts';
import { runCacheReceiver } from './cache-engine-receiver.ts';
import { runCacheSender } from './cache-engine-sender.ts';
import { slotMapping } from './paged-kv.ts';
import { UsageError } from '../../../common/errors.ts';

export const usage = `usage: disagg-bench cache-engine [--ranks 2 | --role sender|receiver [--host H --port P | --master-addr A --master-port P]] [options]
  --num-chunks 10 --num-rounds 1   (LMCache's: chunks of --chunk-size 256 tokens)
  --num-layers 32 --num-heads 8 --head-size 128 --block-size 16 --num-blocks 10000 --dtype bf16   (the paged KV cache)
  --buffer-size 1G (each side's NIXL buffer)  --backend shm|ucx|cuda --memory host|gpu
  --seed N (the random generator's starting value; default 42)
  --test-corrupt-chunk I (test hook: the receiver flips a byte of chunk I, so the check must fail)
  ${ucxFlagsUsage}
Throughputs: GB/s = 1e9 bytes/s, GiB/s = 2^30 bytes/s (LMCache prints GiB/s labelled GB/s), both printed.`;

export async function run(argv: string[]): Promise<number> {
  const args = takeUcxFlags(argv); // into the environment, which every rank inherits
  const o = parseCacheEngineArgs(takeRanksOption(args).rest);
  if (o.role) return runCacheEngineRank(o, roleRank(o, 'cache-engine'));
  return runAsRanks({ command: 'cache-engine', argv: args, defaultRanks: 2 }, async (rest) => runCacheEngineRank(parseCacheEngineArgs(rest)));
}

export async function runCacheEngineRank(o: CacheEngineOptions, info: RankInfo = rankFromEnv()): Promise<number> {
  if (info.worldSize !== 2) throw new UsageError(`cache-engine runs 2 ranks (rank 0 stores, rank 1 receives and retrieves), not ${info.worldSize}`);
  const kind: MemoryKind = o.memory ?? (o.backend === 'cuda' ? 'gpu' : 'host');
  const slots = slotMapping(o.kv.slots, o.numChunks * o.kv.shape.chunkSize, o.seed);
  const role = info.rank === SENDER ? 'sender' : 'receiver';
  try {
    return await runAsRank(
      info,
      o.backend,
      [kind],
      async (engine, store) => {
        if (info.rank === RECEIVER) {
          const storeBytes = o.numChunks * o.kv.chunkBytes;
          checkHostFits('the receiver (paged cache + NIXL buffer + received chunks)', kind, o.kv.cacheBytes + o.bufferBytes + storeBytes, info.localWorldSize);
          engine.allocate(CE_REGIONS.cache, o.kv.cacheBytes, kind);
          engine.allocate(CE_REGIONS.ring, o.bufferBytes, kind);
          engine.allocate(CE_REGIONS.store, storeBytes, kind);
        } else {
          checkHostFits('the sender (paged cache + NIXL buffer)', kind, o.kv.cacheBytes + o.bufferBytes, info.localWorldSize);
          engine.allocate(CE_REGIONS.cache, o.kv.cacheBytes, kind);
          engine.allocate(CE_REGIONS.send, o.bufferBytes, kind);
        }
        await engine.connect();
        const ok = info.rank === SENDER ? await runCacheSender(engine, store, o, slots) : await runCacheReceiver(engine, store, o, slots);
        await engine.disconnect();
        console.log('All rounds completed');
        return ok ? 0 : 1;
      },
      {},
      pipeStoreOptions(o, info.rank),
    );
  } catch (err) {
    (err as Error).message = `${role}: ${(err as Error).message}`;
    throw err;
  }
}
