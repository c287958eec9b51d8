// The gate between GPUs (pure part): which words each rank writes and waits on. A wrong word makes
// a gate wait forever or let a rank through before its peers arrived.
import { describe, expect, it } from 'vitest';
import { gateAreaBytes, gateWordOffset, gateWords } from '../../runners/xfer/backends/cuda-gate.ts';

const area = (rank: number) => 0x7f0000000000n + BigInt(rank) * 0x100000n;

describe('cuda gate words', () => {
  it('each rank writes its own word into every peer area and waits on every peer word in its own', () => {
    const ranks = 4;
    for (const gate of ['start', 'end'] as const) {
      const words = Array.from({ length: ranks }, (_, me) => gateWords(ranks, me, gate, area(me), area));
      // every wait is matched by exactly one signal of the peer, at the same address; nobody waits on itself
      for (let me = 0; me < ranks; me++) {
        expect(words[me].wait).toHaveLength(ranks - 1);
        for (const address of words[me].wait) {
          const writers = words.map((w, r) => (w.signal.includes(address) ? r : -1)).filter((r) => r >= 0);
          expect(writers).toHaveLength(1);
          expect(writers[0]).not.toBe(me);
          expect(address - area(me)).toBe(BigInt(gateWordOffset(ranks, gate, writers[0])));
        }
        expect(words[me].signal.every((a, k) => a >= area(k < me ? k : k + 1) && a < area(k < me ? k : k + 1) + BigInt(gateAreaBytes(ranks)))).toBe(true);
      }
    }
  });

  it('keeps the start and end words apart, inside the area', () => {
    const ranks = 2;
    const offsets = (['start', 'end'] as const).flatMap((g) => [0, 1].map((r) => gateWordOffset(ranks, g, r)));
    expect(new Set(offsets).size).toBe(4);
    expect(offsets.reduce((a, b) => Math.max(a, b)) + 8).toBe(gateAreaBytes(ranks));
    expect(gateWords(2, 0, 'end', area(0), area)).toEqual({ signal: [area(1) + 16n], wait: [area(0) + 24n] });
  });
});
