// `disagg-bench kvpipe`: the LMCache disaggregated-prefill pipe on the transfer engine.
// Rank 0 sends, rank 1 receives through a bounded transfer buffer owned by the receiver; more
// bytes than the buffer holds make the sender wait for the receiver to free space (credits through
// the store), with no loss and no overwrite of unread data, and the receiver verifies every object.
//   disagg-bench kvpipe --ranks 2 --buffer-size 64M --num-objs 16 --obj-size 8M --simulate-work
//   disagg-bench kvpipe --role sender ...   and in another terminal   disagg-bench kvpipe --role receiver ...
import type { MemoryKind } from '../../memory.ts';
import { rankFromEnv, type RankInfo } from '../../rank.ts';
import { checkHostFits, formatBytes, hostBudgetBytes } from '../common/memory-limit.ts';
import { runAsRanks, takeRanksOption } from '../common/rank-launch.ts';
import { takeUcxFlags, ucxFlagsUsage } from '../common/ucx-flags.ts';
import { runAsRank } from '../bench-rank.ts';
import { DEFAULT_BUFFER_BYTES, parseKvpipeArgs, type KvpipeOptions } from './kvpipe-options.ts';
import { RECEIVER, REGIONS, SENDER, keys, type PipeSetup } from './kvpipe-protocol.ts';
import { pipeStoreOptions, roleRank } from './pipe-roles.ts';
import { runReceiver } from './kvpipe-receiver.ts';
import { runSender } from './kvpipe-sender.ts';

export const usage = `usage: disagg-bench kvpipe [--ranks 2 | --role sender|receiver [--master-addr A --master-port P]] [options]
  --backend shm|ucx|cuda|libfabric --memory host|gpu --buffer-size 4G (host default capped to a quarter of free memory)
  --num-objs 500 --obj-shape 32,2,256,1024 --dtype bf16 (32 MiB) | --obj-size 8M
  --batch-size N (objects per commit; default: as many as the buffer holds) --num-rounds 1
  --simulate-work (sender 50 ms, receiver 20 ms per 10 objects, timed) --simulate-workload (sender 50 ms after each batch, not timed)
  --work-scale 1   --host H --port P (LMCache's: the receiver's address, with --role)
  --test-ignore-credits, --test-receiver-delay-ms MS, --test-corrupt-object I (test hooks: the sender ignores
      the credits / the receiver waits MS before each commit's copy / object I is corrupted, so the check must fail)
  ${ucxFlagsUsage}
Throughputs: GB/s = 1e9 bytes/s, GiB/s = 2^30 bytes/s, both printed.`;

export async function run(argv: string[]): Promise<number> {
  const args = takeUcxFlags(argv);
  const options = parseKvpipeArgs(takeRanksOption(args).rest);
  if (options.role) return runKvpipeRank(options, roleRank(options, 'kvpipe'));
  return runAsRanks({ command: 'kvpipe', argv: args, defaultRanks: 2 }, async (rest) => runKvpipeRank(parseKvpipeArgs(rest)));
}

export async function runKvpipeRank(o: KvpipeOptions, info: RankInfo = rankFromEnv()): Promise<number> {
  if (info.worldSize !== 2) throw new Error(`kvpipe runs 2 ranks (rank 0 sends, rank 1 receives), not ${info.worldSize}`);
  const kind: MemoryKind = o.memory ?? (o.backend === 'cuda' ? 'gpu' : 'host');
  const role = info.rank === SENDER ? 'sender' : 'receiver';
  try {
    return await runAsRank(info, o.backend, [kind], async (engine, store) => {
      const objectsBytes = o.numObjs * o.objectBytes;
      let setup: PipeSetup;
      if (info.rank === RECEIVER) {
        // The receiver owns the buffer, so it decides its size and tells the sender.
        setup = pipeSetup(o, kind, info.localWorldSize);
        checkHostFits('the receiver (transfer buffer + object store)', kind, setup.bufferBytes + objectsBytes, 1);
        engine.allocate(REGIONS.ring, setup.bufferBytes, kind);
        engine.allocate(REGIONS.store, objectsBytes, kind);
        await store.set(keys.setup, setup);
      } else {
        checkHostFits("the sender's objects", kind, objectsBytes, info.localWorldSize);
        engine.allocate(REGIONS.objects, objectsBytes, kind);
        setup = await store.wait<PipeSetup>(keys.setup, { from: RECEIVER });
      }
      await engine.connect();
      const ok = info.rank === SENDER ? await runSender(engine, store, o, setup) : await runReceiver(engine, store, o);
      await engine.disconnect();
      return ok ? 0 : 1;
    }, {}, pipeStoreOptions(o, info.rank));
  } catch (err) {
    (err as Error).message = `${role}: ${(err as Error).message}`;
    throw err;
  }
}

/** The buffer (explicit, or 4 GiB capped for host memory) and objects per commit. */
export function pipeSetup(o: KvpipeOptions, kind: MemoryKind, ranksOnNode: number, budget = hostBudgetBytes()): PipeSetup {
  let bufferBytes = o.bufferSize ?? DEFAULT_BUFFER_BYTES;
  let capped: string | undefined;
  if (o.bufferSize === undefined && kind === 'host') {
    const cap = Math.floor(budget / 4 / ranksOnNode);
    if (cap < bufferBytes) {
      bufferBytes = Math.max(o.objectBytes, cap - (cap % o.objectBytes));
      capped = `default ${formatBytes(DEFAULT_BUFFER_BYTES)} capped to a quarter of this node's host memory budget per rank`;
    }
  }
  if (o.objectBytes > bufferBytes) {
    throw new Error(`an object of ${o.objectBytes} bytes does not fit the ${bufferBytes}-byte transfer buffer; raise --buffer-size`);
  }
  const batchSize = o.batchSize ?? Math.floor(bufferBytes / o.objectBytes);
  if (batchSize * o.objectBytes > bufferBytes) {
    throw new Error(`--batch-size ${batchSize} x ${o.objectBytes} bytes = ${batchSize * o.objectBytes} exceeds the ${bufferBytes}-byte transfer buffer`);
  }
  return { bufferBytes, batchSize: Math.min(batchSize, o.numObjs), capped };
}

