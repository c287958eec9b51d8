// Registered host memory (real POSIX shared memory) and the verification pattern.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { allocateHost, mapPeerHost, removeStaleSegments, type Region } from '../../runners/xfer/memory.ts';
import { libc } from '../../runners/xfer/native/libc.ts';
import { PID_NAMESPACE, segmentPrefix } from '../../runners/xfer/shm-segments.ts';
import { checkPattern, fillPattern, patternBytes, poisonPattern } from '../../runners/xfer/pattern.ts';

const owner = { job: 'pattern-test', rank: 0, node: 'here' };
const regions: Region[] = [];
afterEach(() => regions.splice(0).forEach((r) => r.close()));

function host(name: string, size: number): Region {
  const r = allocateHost(name, size, owner);
  regions.push(r);
  return r;
}

const stream = { sender: 1, receiver: 2, iteration: 3 };

describe('host regions', () => {
  it('live in /dev/shm under a job- and rank-specific name that peers map, and are unlinked on close', () => {
    const r = allocateHost('recv', 10_000, owner);
    const d = r.descriptor();
    if (d.kind !== 'host') throw new Error('host descriptor expected');
    expect(d.shm).toBe(`/xfer-${process.pid}.${PID_NAMESPACE}-pattern-test-r0-recv-${d.shm.slice(-6)}`);
    expect(fs.existsSync(`/dev/shm${d.shm}`)).toBe(true);
    const peer = mapPeerHost(d);
    libc().memset(peer.address + 100n, 0xab, 5); // a peer writes through its own mapping
    expect([...r.read(99, 7)]).toEqual([0, 0xab, 0xab, 0xab, 0xab, 0xab, 0]);
    peer.close();
    r.close();
    expect(fs.existsSync(`/dev/shm${d.shm}`)).toBe(false);
  });

  it('fills a range with one byte value', () => {
    const r = host('fill', 64);
    r.fill(0xaa);
    r.fill(0xbb, 8, 4);
    expect([...r.read(6, 8)]).toEqual([0xaa, 0xaa, 0xbb, 0xbb, 0xbb, 0xbb, 0xaa, 0xaa]);
  });

  it('removes segments left by processes of its PID namespace that no longer exist, and only those', async () => {
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!; // exited: its pid is free
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xfer-shm-'));
    const stale = `${segmentPrefix(gone)}job-r0-send-abcdef`;
    const live = `${segmentPrefix()}job-r0-send-abcdef`;
    // The same free pid in another PID namespace (a container sharing /dev/shm): its owner cannot
    // be seen from here, so it is not taken for stale; nor a name without a namespace.
    const otherNamespace = `xfer-${gone}.${Number(PID_NAMESPACE) + 1}-job-r0-send-abcdef`;
    const unnamed = `xfer-${gone}-job-r0-send-abcdef`;
    for (const name of [stale, live, otherNamespace, unnamed, 'other-file']) fs.writeFileSync(path.join(dir, name), '');
    expect(removeStaleSegments(dir)).toEqual([stale]);
    expect(fs.readdirSync(dir).sort()).toEqual([live, otherNamespace, unnamed, 'other-file'].sort());
    fs.rmSync(dir, { recursive: true });
  });

  it('refuses ranges outside the region', () => {
    const r = host('small', 16);
    expect(() => r.write(10, new Uint8Array(7))).toThrow(/region 'small': \[10, 17\) is outside its 16 bytes/);
  });
});

describe('pattern', () => {
  it('is the same stream however it is cut (shards fill pieces at their stream offsets)', () => {
    const whole = host('whole', 5000);
    const pieces = host('pieces', 5000);
    fillPattern(whole, 0, 5000, stream);
    fillPattern(pieces, 0, 1237, stream, 0);
    fillPattern(pieces, 1237, 5000 - 1237, stream, 1237);
    expect(Buffer.compare(whole.read(0, 5000), pieces.read(0, 5000))).toBe(0);
    expect(checkPattern(pieces, 0, 5000, stream)).toBeUndefined();
  });

  it('differs between senders, receivers and iterations', () => {
    const a = patternBytes(stream, 0, 64);
    for (const other of [{ ...stream, sender: 0 }, { ...stream, receiver: 1 }, { ...stream, iteration: 4 }]) {
      expect(Buffer.compare(a, patternBytes(other, 0, 64))).not.toBe(0);
    }
  });

  it('catches a flipped byte at its exact offset', () => {
    const r = host('flip', 3 << 20);
    fillPattern(r, 0, r.size, stream);
    const at = (2 << 20) + 12345;
    r.write(at, Uint8Array.of(r.read(at, 1)[0] ^ 0x10));
    const m = checkPattern(r, 0, r.size, stream);
    expect(m).toMatchObject({ offset: at, streamOffset: at });
    expect(m!.got).toBe(m!.expected ^ 0x10);
  });

  it('catches data landing one byte off', () => {
    const r = host('shift', 4096);
    fillPattern(r, 1, 4000, stream, 0); // meant for offset 0
    expect(checkPattern(r, 0, 4000, stream)).toMatchObject({ offset: 0 });
  });

  it('catches a byte that never arrived: poison is the complement of the expected byte', () => {
    const r = host('missing', 4096);
    poisonPattern(r, 0, 4096, stream);
    const expected = patternBytes(stream, 0, 4096);
    for (let i = 0; i < 4096; i++) expect(r.read(i, 1)[0]).toBe(~expected[i] & 0xff);
    fillPattern(r, 0, 2000, stream);
    fillPattern(r, 2001, 2095, stream, 2001); // byte 2000 is never written
    expect(checkPattern(r, 0, 4096, stream)).toMatchObject({ offset: 2000, expected: expected[2000] });
  });

  it('catches stale data from an earlier iteration', () => {
    const r = host('stale', 4096);
    fillPattern(r, 0, 4096, { ...stream, iteration: 2 });
    expect(checkPattern(r, 0, 4096, stream)).toBeDefined();
  });
});
