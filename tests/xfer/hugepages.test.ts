// Host regions on 2 MiB huge pages (nixlbench --use_hugepages): too few free huge
// pages is refused with the count and how to reserve them; with pages reserved (as root the test
// reserves 8 and gives them back) the region lies on 2 MiB pages (smaps says so), a peer maps the
// same pages through the memfd, and a sweep on them verifies every byte.
import fs from 'node:fs';
import koffi from 'koffi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateHugepageHost, checkHugepagesFree, hugepageBytes, hugepageCounts } from '../../runners/xfer/memory-hugepages.ts';
import { mapPeerHost } from '../../runners/xfer/memory.ts';
import { runBench } from './benches/bench-cli.ts';

const NR = '/proc/sys/vm/nr_hugepages';
let restore: string | undefined;

beforeAll(() => {
  // Reserve a few pages where this process may (root, writable /proc/sys); otherwise use what is free.
  if (hugepageCounts().free >= 8) return;
  try {
    const before = fs.readFileSync(NR, 'utf8').trim();
    fs.writeFileSync(NR, String(Number(before) + 8));
    restore = before;
  } catch {
    // not root, or /proc/sys read-only: the tests that need pages skip
  }
});
afterAll(() => {
  if (restore !== undefined) fs.writeFileSync(NR, restore);
});

const havePages = () => hugepageCounts().free >= 8;

describe('huge pages', () => {
  it('refuses with how many pages are needed and how to reserve them', () => {
    expect(hugepageBytes(1)).toBe(2 * 1024 * 1024);
    expect(hugepageBytes(5 * 1024 * 1024)).toBe(6 * 1024 * 1024);
    expect(() => checkHugepagesFree(5 * 1024 * 1024, "region 'sweep'", { total: 1, free: 1, sizeBytes: 2 * 1024 * 1024 })).toThrow(
      "--use_hugepages: region 'sweep' needs 3 huge page(s) of 2 MiB, but 1 of 1 are free (HugePages_Free in /proc/meminfo): reserve more as root (echo 3 > /proc/sys/vm/nr_hugepages) or run without --use_hugepages",
    );
    expect(() => checkHugepagesFree(4096, 'x', { total: 4, free: 1, sizeBytes: 2 * 1024 * 1024 })).not.toThrow();
  });

  it('maps a region on 2 MiB pages that a peer reaches through its memfd', (ctx) => {
    if (!havePages()) ctx.skip(); // not root and none reserved
    const region = allocateHugepageHost('h', 3 * 1024 * 1024, { rank: 0, node: 'n' });
    try {
      region.write(12345, Uint8Array.from([1, 2, 3]));
      const smaps = fs.readFileSync('/proc/self/smaps', 'utf8');
      const start = region.address.toString(16);
      const entry = smaps.slice(smaps.indexOf(`${start}-`));
      expect(/KernelPageSize:\s+(\d+) kB/.exec(entry)?.[1]).toBe('2048');
      const descriptor = region.descriptor();
      expect(descriptor.kind === 'host' && descriptor.file?.mappedBytes).toBe(4 * 1024 * 1024);
      const peer = mapPeerHost(descriptor as Extract<typeof descriptor, { kind: 'host' }>);
      try {
        expect(peer.address).not.toBe(region.address);
        const view = new Uint8Array(koffi.view(peer.address, 12348));
        expect([...view.subarray(12345, 12348)]).toEqual([1, 2, 3]);
      } finally {
        peer.close();
      }
    } finally {
      region.close();
    }
  });

  it('a sweep on huge pages between two ranks verifies every byte', async (ctx) => {
    if (!havePages()) ctx.skip();
    const r = await runBench(['sweep', '--use_hugepages', '--check_consistency', '--max_block_size', '1M', '--num_iter', '4', '--warmup_iter', '0', '--large_blk_iter_ftr', '1']);
    expect(r.exitCode, r.out).toBe(0);
    expect(r.out).toMatch(/Use hugepages \(--use_hugepages=\[0,1\]\)\s+: 1/);
    expect(r.out).toContain('Consistency check passed');
  });
});
