// What sender and receiver of the CacheEngine test say to each other through the store: the
// receiver's buffer size, each commit of chunks (where in the buffer), the receiver's
// acknowledgement (the buffer bytes it freed) and its verdict per round.

export const CE_REGIONS = { cache: 'ce-cache', send: 'ce-send', ring: 'ce-ring', store: 'ce-store' } as const;

export interface ChunkCommit {
  /** [chunk index, buffer offset] per chunk. */
  chunks: [number, number][];
  endHead: number;
}

export const ceKeys = {
  commit: (round: number, commit: number) => `ce/${round}/commit/${commit}`,
  ack: (round: number, commit: number) => `ce/${round}/ack/${commit}`,
  /** The sender's store() is timed: the receiver verifies only after it. */
  timed: (round: number) => `ce/${round}/timed`,
  verdict: (round: number) => `ce/${round}/verdict`,
};
