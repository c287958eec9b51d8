import { describe, expect, it } from 'vitest';
import { RingBuffer } from '../../../runners/xfer/benches/kvpipe/ring.ts';
import { checkObject, objectBytes, TILE_BYTES } from '../../../runners/xfer/benches/kvpipe/kv-object.ts';
import { parseKvpipeArgs } from '../../../runners/xfer/benches/kvpipe/kvpipe-options.ts';
import { pipeSetup } from '../../../runners/xfer/benches/kvpipe/kvpipe.ts';

describe('the pipe ring', () => {
  it('never places objects over bytes the receiver has not freed', () => {
    const ring = new RingBuffer(100);
    const first = ring.place(30, 3)!;
    expect(first).toEqual({ positions: [0, 30, 60], endHead: 90 });
    ring.commit(first.endHead);
    expect(ring.place(30, 1)).toBeUndefined(); // 10 bytes left at the end, the start is unread
    ring.release(30); // the first object was read
    // the end is too short: skipped, the object goes to offset 0
    expect(ring.place(30, 1)).toEqual({ positions: [0], endHead: 130 });
    expect(ring.place(30, 2)).toBeUndefined();
    expect(() => ring.commit(200)).toThrow(/overrun/);
    expect(() => ring.release(95)).toThrow(/outside \[30, 90\]/);
  });

  it('rewinds only when nothing is unread, so a batch that fits the buffer always fits then', () => {
    const ring = new RingBuffer(100);
    ring.commit(ring.place(40, 1)!.endHead);
    expect(() => ring.rewind()).toThrow(/unread/);
    ring.release(40);
    expect(ring.place(50, 2)).toBeUndefined(); // 40..90 then the end skipped: 150 - 40 > 100
    ring.rewind();
    expect(ring.place(50, 2)).toEqual({ positions: [0, 50], endHead: 200 });
    expect(() => ring.place(101, 1)).toThrow(/cannot fit/);
  });
});

describe('KV objects', () => {
  it('differ per object and round and verify only as themselves', () => {
    const size = 3 * TILE_BYTES + 100;
    const a = objectBytes(5, 0, size);
    expect(checkObject(a, 5, 0)).toBeUndefined();
    expect(objectBytes(5, 1, size).equals(a)).toBe(false);
    expect(checkObject(a, 5, 1)).toMatch(/^object 5 \(round 1\) byte 8: .* \(that tile holds object 5 of round 0, tile 0: stale data of another round\)$/);
    expect(checkObject(objectBytes(9, 0, size), 5, 0)).toMatch(/that tile holds object 9 of round 0, tile 0: another object overwrote it or it never arrived/);
  });

  it('locate a flipped byte and a misplaced tile', () => {
    const size = 2 * TILE_BYTES;
    const flipped = objectBytes(1, 0, size);
    flipped[TILE_BYTES + 777] ^= 0x10;
    expect(checkObject(flipped, 1, 0)).toMatch(new RegExp(`^object 1 \\(round 0\\) byte ${TILE_BYTES + 777}: expected 0x[0-9a-f]{2}, got 0x[0-9a-f]{2}$`));
    const swapped = Buffer.concat([objectBytes(1, 0, size).subarray(TILE_BYTES), objectBytes(1, 0, size).subarray(0, TILE_BYTES)]);
    expect(checkObject(swapped, 1, 0)).toMatch(/tile 1: misplaced/);
  });
});

describe('kvpipe options and setup', () => {
  it("the seed's objects: [32, 2, 256, 1024] bf16 = 32 MiB, 500 of them", () => {
    expect(parseKvpipeArgs([])).toMatchObject({ numObjs: 500, objectBytes: 32 * 1024 ** 2, objectShape: '[32, 2, 256, 1024] bf16', numRounds: 1, simulateWork: false });
    expect(parseKvpipeArgs(['--obj-size', '8M', '--simulate-workload']).objectBytes).toBe(8 * 1024 ** 2);
    // LMCache channel v2's --simulate-workload is its own thing, not pipe v2's --simulate-work
    expect(parseKvpipeArgs(['--simulate-workload'])).toMatchObject({ simulateWork: false, simulateWorkload: true });
  });

  it('a 4 GiB default buffer, capped for host memory; commits as large as the buffer holds', () => {
    const o = parseKvpipeArgs(['--num-objs', '500']);
    expect(pipeSetup(o, 'gpu', 1)).toEqual({ bufferBytes: 4 * 1024 ** 3, batchSize: 128, capped: undefined });
    const capped = pipeSetup(o, 'host', 2, 2 * 1024 ** 3);
    expect(capped.bufferBytes).toBe(256 * 1024 ** 2);
    expect(capped.batchSize).toBe(8);
    expect(capped.capped).toMatch(/capped/);
    expect(() => pipeSetup(parseKvpipeArgs(['--buffer-size', '16M']), 'host', 1)).toThrow(/does not fit the 16777216-byte transfer buffer/);
    expect(() => pipeSetup(parseKvpipeArgs(['--buffer-size', '64M', '--obj-size', '8M', '--batch-size', '9']), 'host', 1)).toThrow(/--batch-size 9 x 8388608 bytes = 75497472 exceeds/);
  });
});
