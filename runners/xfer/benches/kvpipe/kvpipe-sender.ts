// The sender: per round, every object is written into the receiver's ring buffer, batch by batch.
// A commit waits until the ring has room (the receiver's acknowledgements free it), builds the
// transfer, runs it, then announces it. Per commit: `Transfer completed in T ms, creating the
// transfer: a ms, transfer time: b ms, wait for receiver: c ms` (T = a + b + c, c being the time
// the ring was full) and the pure throughput of b; per round the objects sent and the throughput
// from the round's start until the receiver acknowledged the last object. --simulate-workload (LMCache
// channel v2's) sleeps 50 ms after each batch and leaves those sleeps out of the round's time, as
// channel v2 times only its sends; --simulate-work (pipe v2's) sleeps before each commit, timed.
import { monoNs, sleep } from '../../clock.ts';
import type { XferEngine } from '../../engine.ts';
import type { XferRequest } from '../../backends/types.ts';
import type { Store } from '../../store.ts';
import { formatBytes } from '../common/memory-limit.ts';
import { mean, stddev } from '../../../common/stats.ts';
import { fillObject } from './kv-object.ts';
import type { KvpipeOptions } from './kvpipe-options.ts';
import { RECEIVER, REGIONS, gbps, gibps, keys, workMs, type Ack, type CommitMessage, type PipeSetup, type RoundVerdict } from './kvpipe-protocol.ts';
import { RingBuffer } from './ring.ts';
import { beginTimed, verifying } from '../common/timed-regions.ts';

/** Runs every round; false when the receiver reported a verification failure. */
export async function runSender(engine: XferEngine, store: Store, o: KvpipeOptions, setup: PipeSetup): Promise<boolean> {
  const objects = engine.regions.get(REGIONS.objects)!;
  const ring = new RingBuffer(setup.bufferBytes);
  const roundGbps: number[] = [];
  let ok = true;
  const awaitAck = async (round: number, commit: number) => {
    const ack = await store.wait<Ack>(keys.ack(round, commit), { from: RECEIVER });
    if (!o.testIgnoreCredits) ring.release(ack.tail);
  };
  const shape = o.objectShape ? ` of shape ${o.objectShape}` : '';
  console.log(`Generated ${o.numObjs} objects${shape} (${o.objectBytes} bytes each, ${formatBytes(o.numObjs * o.objectBytes)} in total)`);
  console.log(`Transfer buffer: ${setup.bufferBytes} bytes (${formatBytes(setup.bufferBytes)}), ${setup.batchSize} objects per commit${setup.capped ? ` (${setup.capped})` : ''}`);
  for (let round = 0; round < o.numRounds; round++) {
    const scratch = Buffer.allocUnsafe(o.objectBytes);
    verifying(engine.rank.rank, 'kvpipe fill', () => {
      for (let i = 0; i < o.numObjs; i++) objects.write(i * o.objectBytes, fillObject(scratch, i, round));
    });
    await store.barrier('kvpipe-round');
    console.log(`Round ${round + 1}/${o.numRounds}: sending ${o.numObjs} objects...`);
    const endTimed = beginTimed(engine.rank.rank, 'kvpipe round');
    const start = monoNs();
    const outstanding: number[] = [];
    const batches = Math.ceil(o.numObjs / setup.batchSize);
    let untimedNs = 0; // --simulate-workload's sleeps
    let commit = 0;
    for (let first = 0; first < o.numObjs; first += setup.batchSize, commit++) {
      const count = Math.min(setup.batchSize, o.numObjs - first);
      if (o.simulateWork) await sleep(workMs('sender', count, o.workScale));
      const tWait = monoNs();
      let placement = ring.place(o.objectBytes, count);
      while (!placement) {
        if (o.testIgnoreCredits) ring.forgetUnread();
        else if (outstanding.length > 0) await awaitAck(round, outstanding.shift()!);
        else ring.rewind(); // nothing unread, only the end of the ring was too short
        placement = ring.place(o.objectBytes, count);
      }
      const tCreate = monoNs();
      console.log(`Committing write with ${count} transfers`);
      const requests: XferRequest[] = placement.positions.map((pos, k) => ({
        op: 'WRITE',
        peer: RECEIVER,
        local: REGIONS.objects,
        localOffset: (first + k) * o.objectBytes,
        remote: REGIONS.ring,
        remoteOffset: pos,
        length: o.objectBytes,
      }));
      const plan = await engine.prepare(requests);
      const tTransfer = monoNs();
      await engine.execute(plan);
      const tDone = monoNs();
      ring.commit(placement.endHead);
      outstanding.push(commit);
      const message: CommitMessage = { objects: placement.positions.map((pos, k) => [first + k, pos]), endHead: placement.endHead };
      await store.set(keys.commit(round, commit), message);
      const ms = (a: number, b: number) => ((b - a) / 1e6).toFixed(4);
      console.log(
        `Transfer completed in ${ms(tWait, tDone)} ms, creating the transfer: ${ms(tCreate, tTransfer)} ms, ` +
          `transfer time: ${ms(tTransfer, tDone)} ms, wait for receiver: ${ms(tWait, tCreate)} ms`,
      );
      const bytes = count * o.objectBytes;
      const seconds = (tDone - tTransfer) / 1e9;
      console.log(`Pure transfer throughput: ${gbps(bytes, seconds).toFixed(4)} GB/s (${gibps(bytes, seconds).toFixed(4)} GiB/s)`);
      if (o.simulateWorkload) {
        console.log(`Sent batch ${commit + 1}/${batches} in ${((tDone - tWait) / 1e9).toFixed(6)} seconds`);
        const t0 = monoNs();
        await sleep(50 * o.workScale);
        untimedNs += monoNs() - t0;
      }
    }
    // Sent = the receiver has every object (acknowledged), none lost.
    for (const c of outstanding) await awaitAck(round, c);
    const wallNs = monoNs() - start;
    endTimed();
    await store.set(keys.timed(round), true);
    const seconds = (wallNs - untimedNs) / 1e9;
    if (o.simulateWorkload) {
      console.log(`Simulated workload: ${batches} x ${50 * o.workScale} ms after the batches, ${(untimedNs / 1e9).toFixed(6)} of the round's ${(wallNs / 1e9).toFixed(6)} seconds, left out of the time below`);
    }
    const total = o.numObjs * o.objectBytes;
    roundGbps.push(gbps(total, seconds));
    console.log(`Sent ${o.numObjs} objects in ${seconds.toFixed(6)} seconds`);
    console.log(`Throughput: ${gbps(total, seconds).toFixed(2)} GB/s (${gibps(total, seconds).toFixed(2)} GiB/s)`);
    const verdict = await store.wait<RoundVerdict>(keys.verdict(round), { from: RECEIVER });
    if (!verdict.ok) {
      console.log(`Receiver reported a verification failure in round ${round + 1}: ${verdict.message}`);
      ok = false;
    }
  }
  // both units on every throughput line: a bare "GB/s" is read as LMCache's (GiB/s), see the lmcache extractor
  const roundGibps = roundGbps.map((x) => (x * 1e9) / 2 ** 30);
  console.log(`Mean throughput: ${mean(roundGbps).toFixed(2)} ± ${stddev(roundGbps).toFixed(2)} GB/s (${mean(roundGibps).toFixed(2)} ± ${stddev(roundGibps).toFixed(2)} GiB/s) over ${o.numRounds} round(s)`);
  return ok;
}
