// The CT perftests' memory check (pattern-buffers.ts checkBuffersFit, on the check every benchmark
// shares): a node's ranks are summed as they are, so a skewed matrix that fits is not refused
// for its largest rank times the rank count, and what does not fit is refused on every rank alike.
import { describe, expect, it } from 'vitest';
import { checkBuffersFit, layoutBuffers } from '../../runners/xfer/benches/pattern-buffers.ts';
import type { TrafficPattern } from '../../runners/xfer/benches/traffic-pattern.ts';

const GiB = 2 ** 30;
const pattern = (matrix: number[][]): TrafficPattern =>
  ({ index: 0, matrix, memory: 'host', op: 'WRITE', shards: 1, matrixFile: 'm.txt', notes: [] }) as unknown as TrafficPattern;
const node = (gib: number) => ({ availableBytes: gib * GiB, shmFreeBytes: Infinity });

describe('checkBuffersFit', () => {
  it('one rank sending 6 GiB to another, 4 ranks on a node that can give 8 GiB x 0.8 = 6.40 GiB: 12 GiB needed, refused', () => {
    const layout = layoutBuffers([pattern([[0, 6 * GiB, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])]);
    expect(() => checkBuffersFit('the CT perftest', layout, 4, 4, node(8))).toThrow(
      'the CT perftest needs host memory for the send and receive buffers of the 4 rank(s) on this node (the largest rank: 6 GiB) = 12 GiB, more than the 6.40 GiB this node can give',
    );
  });

  it('the same matrix on a node of 16 GiB fits: the ranks are summed, not the largest times four (24 GiB)', () => {
    const layout = layoutBuffers([pattern([[0, 6 * GiB, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])]);
    expect(() => checkBuffersFit('the CT perftest', layout, 4, 4, node(16))).not.toThrow();
  });

  it('2 of 4 ranks per node: the two largest count (an upper bound for any placement)', () => {
    const layout = layoutBuffers([pattern([[0, 4 * GiB, 0, 0], [0, 0, 4 * GiB, 0], [0, 0, 0, 0], [0, 0, 0, 0]])]);
    // per rank: 4, 8, 4, 0 GiB; two on a node: at most 12 GiB
    expect(() => checkBuffersFit('x', layout, 4, 2, node(15))).not.toThrow();
    expect(() => checkBuffersFit('x', layout, 4, 2, node(14))).toThrow(/of the 2 rank\(s\) on this node \(the largest rank: 8 GiB\) = 12 GiB/);
  });

  it('GPU memory is left to cudaMalloc', () => {
    const layout = layoutBuffers([{ ...pattern([[0, 1000 * GiB], [0, 0]]), memory: 'gpu' } as TrafficPattern]);
    expect(() => checkBuffersFit('x', layout, 2, 2, node(1))).not.toThrow();
  });
});
