// The pipe's back channel through the store: the receiver publishes the buffer it allocated,
// the sender announces each commit (which objects, where in the ring), the receiver acknowledges
// each commit once it has copied the objects out (freeing their bytes), the sender says when its
// round's timing ended, and the receiver reports verification.

export { RECEIVER, SENDER } from './pipe-roles.ts';
export const REGIONS = { objects: 'kv-objects', ring: 'kv-ring', store: 'kv-store' } as const;

export interface PipeSetup {
  bufferBytes: number;
  batchSize: number;
  capped?: string;
}

export interface CommitMessage {
  /** [object index, ring offset] per object. */
  objects: [number, number][];
  /** The sender's ring head after this commit: what the acknowledgement frees up to. */
  endHead: number;
}

export interface Ack {
  tail: number;
}

export interface RoundVerdict {
  ok: boolean;
  message?: string;
}

export const keys = {
  setup: 'kvpipe/setup',
  commit: (round: number, commit: number) => `kvpipe/${round}/commit/${commit}`,
  ack: (round: number, commit: number) => `kvpipe/${round}/ack/${commit}`,
  /** The sender's round is timed: the receiver verifies only after it. */
  timed: (round: number) => `kvpipe/${round}/timed`,
  verdict: (round: number) => `kvpipe/${round}/verdict`,
};

/** The seed's simulated LLM work: sender 50 ms, receiver 20 ms per 10 objects, times the scale. */
export const workMs = (side: 'sender' | 'receiver', objects: number, scale: number): number => (side === 'sender' ? 5 : 2) * objects * scale;

export const gbps = (bytes: number, seconds: number): number => bytes / 1e9 / seconds;
export const gibps = (bytes: number, seconds: number): number => bytes / 2 ** 30 / seconds;
