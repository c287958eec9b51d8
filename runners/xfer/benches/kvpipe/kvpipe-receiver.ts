// The receiver: takes each commit as it is announced, copies its objects out of the ring into its
// own store (an engine transfer to itself: device-local on GPUs), optionally simulates work, then
// acknowledges, which frees the ring bytes for the sender. After the round it verifies every
// object of its store against what the sender must have sent (object index and round), once the
// sender's round is timed.
import { monoNs, sleep } from '../../clock.ts';
import type { XferEngine } from '../../engine.ts';
import type { Store } from '../../store.ts';
import { checkObject } from './kv-object.ts';
import type { KvpipeOptions } from './kvpipe-options.ts';
import { REGIONS, SENDER, keys, workMs, type Ack, type CommitMessage, type RoundVerdict } from './kvpipe-protocol.ts';
import { verifying } from '../common/timed-regions.ts';

/** Runs every round; false when an object did not verify. */
export async function runReceiver(engine: XferEngine, store: Store, o: KvpipeOptions): Promise<boolean> {
  const me = engine.rank.rank;
  const kvStore = engine.regions.get(REGIONS.store)!;
  let ok = true;
  for (let round = 0; round < o.numRounds; round++) {
    kvStore.fill(0); // nothing of an earlier round may pass for this one
    await store.barrier('kvpipe-round');
    console.log('Waiting to receive data...');
    let received = 0;
    for (let commit = 0; received < o.numObjs; commit++) {
      const message = await store.wait<CommitMessage>(keys.commit(round, commit), { from: SENDER });
      console.log(`Received ${message.objects.length} keys and ${message.objects.length} objects.`);
      const t0 = monoNs();
      if (o.testReceiverDelayMs > 0) await sleep(o.testReceiverDelayMs);
      await engine.transfer(
        message.objects.map(([index, pos]) => ({
          op: 'WRITE' as const,
          peer: me,
          local: REGIONS.ring,
          localOffset: pos,
          remote: REGIONS.store,
          remoteOffset: index * o.objectBytes,
          length: o.objectBytes,
        })),
      );
      if (o.simulateWork) await sleep(workMs('receiver', message.objects.length, o.workScale));
      console.log(`Observers processing in ${((monoNs() - t0) / 1e6).toFixed(4)} ms`);
      const ack: Ack = { tail: message.endHead };
      await store.set(keys.ack(round, commit), ack);
      received += message.objects.length;
    }
    console.log(`Received all ${received} objects`);
    if (o.testCorruptObject !== undefined && o.testCorruptObject < o.numObjs) {
      const at = o.testCorruptObject * o.objectBytes + (o.objectBytes >> 1);
      kvStore.write(at, Uint8Array.of(kvStore.read(at, 1)[0] ^ 0x01));
    }
    await store.wait(keys.timed(round), { from: SENDER }); // the sender's round is timed: checking cannot slow it
    let failure: string | undefined;
    verifying(me, 'kvpipe check', () => {
      for (let i = 0; i < o.numObjs && !failure; i++) failure = checkObject(kvStore.read(i * o.objectBytes, o.objectBytes), i, round);
    });
    const verdict: RoundVerdict = failure ? { ok: false, message: failure } : { ok: true };
    console.log(failure ? `Data mismatch in round ${round + 1}: ${failure}` : 'All data verified successfully!');
    ok &&= verdict.ok;
    await store.set(keys.verdict(round), verdict);
  }
  return ok;
}
