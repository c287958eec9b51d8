// A gate between GPUs, on the GPUs: each GPU writes `seq` into its word of every peer's gate area,
// then its stream waits until every peer's word in its own area has reached `seq`. Both are stream
// memory operations (cuStreamWriteValue32 / cuStreamWaitValue32: the GPU's front end does them in
// stream order, no kernel, no host). Work queued after a gate starts on every GPU within one flag's
// trip over NVLink of the last GPU's arrival, however far apart the hosts queued it.
//
// Two gates around a timed region, an event after each (start gate, event S, work, end gate,
// event E), make every GPU's S..E cover the whole exchange: S comes after the last GPU arrived,
// E after every GPU's work ended. The GPU whose S is earliest therefore times at least from the
// first GPU's start to the last GPU's end, so the longest S..E over the GPUs spans first start to
// last end on one clock, without comparing clocks of different GPUs. engine-limits.ts times the
// peer-copy limits and the engine's all-to-all (CudaBackend.runGatedIterations) this way.
import type { CudaDriver } from '../native/cuda-driver.ts';

/** Bytes per word of a gate area (the low 32 bits hold the value; 8 keeps words on their own lines of 8). */
export const GATE_WORD_BYTES = 8;

export type GateName = 'start' | 'end';

/** Bytes of one rank's gate area: a word per rank for the start gate, then one per rank for the end gate. Zeroed before first use. */
export function gateAreaBytes(ranks: number): number {
  return 2 * ranks * GATE_WORD_BYTES;
}

/** Offset, in a gate area, of the word that `rank` writes for gate `gate`. */
export function gateWordOffset(ranks: number, gate: GateName, rank: number): number {
  return ((gate === 'end' ? ranks : 0) + rank) * GATE_WORD_BYTES;
}

/** One gate as one GPU sees it: where it writes (its word in each peer's area) and what it waits on (each peer's word in its own). */
export interface GateWords {
  signal: bigint[];
  wait: bigint[];
}

/**
 * The words of gate `gate` for rank `me` among `ranks`: `ownArea` is its gate area, `peerArea(r)`
 * the address of rank r's area as this GPU reaches it (IPC or peer mapping).
 */
export function gateWords(ranks: number, me: number, gate: GateName, ownArea: bigint, peerArea: (rank: number) => bigint): GateWords {
  const peers = Array.from({ length: ranks }, (_, r) => r).filter((r) => r !== me);
  return {
    signal: peers.map((r) => peerArea(r) + BigInt(gateWordOffset(ranks, gate, me))),
    wait: peers.map((r) => ownArea + BigInt(gateWordOffset(ranks, gate, r))),
  };
}

/**
 * Queues the gate on `stream` (of `device`, whose primary context is made current): write `seq`
 * into every peer's word, then wait for every peer's. `seq` must grow by one per use of an area
 * (from 1; 32 bits).
 */
export function enqueueGate(driver: CudaDriver, device: number, stream: bigint, words: GateWords, seq: number): void {
  driver.usePrimaryContext(device);
  for (const address of words.signal) driver.streamWriteValue32(stream, address, seq);
  for (const address of words.wait) driver.streamWaitValue32(stream, address, seq);
}
