// Where patterns' bytes live and which requests move them: windows per pattern, READ/WRITE and
// shards, and verification that holds for EVERY sender (the public version's check failed for all
// senders but rank 0). The requests are applied here by copying between real host regions, as a
// one-sided backend would, so layout, requests and verification are checked against each other.
import { afterAll, describe, expect, it } from 'vitest';
import { allocateHost, type Region } from '../../runners/xfer/memory.ts';
import type { XferRequest } from '../../runners/xfer/backends/types.ts';
import {
  layoutBuffers, patternRanks, patternRequests, prepareVerification, regionName, verifyReceived, type BufferLayout,
} from '../../runners/xfer/benches/pattern-buffers.ts';
import type { TrafficPattern } from '../../runners/xfer/benches/traffic-pattern.ts';

const opened: Region[] = [];
afterAll(() => opened.forEach((r) => r.close()));

function pattern(index: number, matrix: number[][], op: 'READ' | 'WRITE', shards = 1): TrafficPattern {
  return { index, matrixFile: `m${index}.txt`, matrix, shards, memType: 'cpu', memory: 'host', op, sleepBeforeSec: 0, sleepAfterSec: 0, metadata: {}, notes: [] };
}

/** Every rank's regions, as its engine would allocate them. */
function allocate(layout: BufferLayout, ranks: number): Map<string, Region>[] {
  return Array.from({ length: ranks }, (_, r) => {
    const regions = new Map<string, Region>();
    for (const side of ['send', 'recv'] as const) {
      const region = allocateHost(regionName('host', side), layout.regionSize('host', side, r), { job: 'pattern-buffers-test', rank: r, node: 'n' });
      opened.push(region);
      regions.set(region.name, region);
    }
    return regions;
  });
}

/** What a one-sided backend does with rank `me`'s requests. */
function apply(me: number, requests: XferRequest[], all: Map<string, Region>[]): void {
  for (const q of requests) {
    const local = all[me].get(q.local)!;
    const remote = all[q.peer].get(q.remote)!;
    if (q.op === 'WRITE') remote.write(q.remoteOffset, Uint8Array.from(local.read(q.localOffset, q.length)));
    else local.write(q.localOffset, Uint8Array.from(remote.read(q.remoteOffset, q.length)));
  }
}

const a = [[0, 100, 7], [30, 0, 0], [5, 9, 11]];
const b = [[0, 0, 64], [0, 0, 0], [1, 0, 0]];

describe('buffer layout', () => {
  it('gives every pattern its own window: regions hold the sum of rows (send) and columns (recv)', () => {
    const layout = layoutBuffers([pattern(0, a, 'WRITE'), pattern(1, b, 'READ')]);
    expect([0, 1, 2].map((r) => layout.regionSize('host', 'send', r))).toEqual([107 + 64, 30, 25 + 1]);
    expect([0, 1, 2].map((r) => layout.regionSize('host', 'recv', r))).toEqual([35 + 1, 109, 18 + 64]);
    expect(layout.sendBase[1]).toEqual([107, 30, 25]);
    expect(layout.recvBase[1]).toEqual([35, 109, 18]);
  });

  it('shared: every pattern at offset 0, regions as large as the largest', () => {
    const layout = layoutBuffers([pattern(0, a, 'WRITE'), pattern(1, b, 'READ')], true);
    expect(layout.sendBase).toEqual([[0, 0, 0], [0, 0, 0]]);
    expect([0, 1, 2].map((r) => layout.regionSize('host', 'send', r))).toEqual([107, 30, 25]);
  });
});

describe('requests', () => {
  it('WRITE: the sender pushes its row; READ: the receiver pulls its column; shards split each transfer', () => {
    const layout = layoutBuffers([pattern(0, a, 'WRITE', 2), pattern(1, b, 'READ')]);
    expect(patternRequests(pattern(0, a, 'WRITE', 2), layout, 0)).toEqual([
      { op: 'WRITE', peer: 1, local: 'send-host', localOffset: 0, remote: 'recv-host', remoteOffset: 0, length: 50 },
      { op: 'WRITE', peer: 1, local: 'send-host', localOffset: 50, remote: 'recv-host', remoteOffset: 50, length: 50 },
      { op: 'WRITE', peer: 2, local: 'send-host', localOffset: 100, remote: 'recv-host', remoteOffset: 0, length: 4 },
      { op: 'WRITE', peer: 2, local: 'send-host', localOffset: 104, remote: 'recv-host', remoteOffset: 4, length: 3 },
    ]);
    // Pattern 1's windows start after pattern 0's: rank 2 pulls 64 bytes from rank 0's second window.
    expect(patternRequests(pattern(1, b, 'READ'), layout, 2)).toEqual([
      { op: 'READ', peer: 0, local: 'recv-host', localOffset: 18, remote: 'send-host', remoteOffset: 107, length: 64 },
    ]);
    expect(patternRequests(pattern(1, b, 'READ'), layout, 0)).toEqual([
      { op: 'READ', peer: 2, local: 'recv-host', localOffset: 35, remote: 'send-host', remoteOffset: 25, length: 1 },
    ]);
  });

  it('names senders, receivers, members and initiators', () => {
    expect(patternRanks(pattern(1, b, 'READ'))).toEqual({ senders: [0, 2], receivers: [0, 2], members: [0, 2], initiators: [0, 2] });
    const oneWay = [[0, 5, 0], [0, 0, 0], [0, 0, 0]];
    expect(patternRanks(pattern(0, oneWay, 'READ'))).toMatchObject({ senders: [0], receivers: [1], members: [0, 1], initiators: [1] });
    expect(patternRanks(pattern(0, oneWay, 'WRITE')).initiators).toEqual([0]);
  });
});

describe('verification', () => {
  it.each(['WRITE', 'READ'] as const)('%s: every receive slice of every sender checks out, and a wrong one is named', (op) => {
    const patterns = [pattern(0, a, op, 3), pattern(1, b, op)];
    const layout = layoutBuffers(patterns);
    const regions = allocate(layout, 3);
    for (const p of patterns) {
      for (let r = 0; r < 3; r++) prepareVerification(p, layout, regions[r], r, 10 + p.index);
      for (let r = 0; r < 3; r++) apply(r, patternRequests(p, layout, r), regions);
      for (let r = 0; r < 3; r++) verifyReceived(p, layout, regions[r], r, 10 + p.index);
    }
    // Rank 2's slice at rank 1 (pattern 0) overwritten with rank 0's bytes: caught, naming sender 2.
    const recv1 = regions[1].get('recv-host')!;
    recv1.write(100, Uint8Array.from(recv1.read(0, 9)));
    expect(() => verifyReceived(patterns[0], layout, regions[1], 1, 10)).toThrow(
      new RegExp(`rank 1: pattern 0 \\(${op}, m0\\.txt\\): region 'recv-host' offset 10\\d .*stream rank 2 -> rank 1, iteration 10\\)`),
    );
    // A stale iteration does not pass either.
    expect(() => verifyReceived(patterns[1], layout, regions[0], 0, 12)).toThrow(/iteration 12/);
  });
});
