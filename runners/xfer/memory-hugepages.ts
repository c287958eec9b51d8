// Host regions on 2 MiB huge pages (nixlbench's --use_hugepages, which mmaps MAP_HUGETLB |
// MAP_HUGE_2MB | MAP_POPULATE). Here the pages back a memfd (MFD_HUGETLB | MFD_HUGE_2MB) mapped
// shared and populated, so same-node peers map the same pages through /proc/<pid>/fd/<fd> as they
// map a POSIX shm segment. Huge pages must be reserved by the administrator (vm.nr_hugepages): too
// few free ones is refused with one sentence saying how many are needed and how to reserve them.
import fs from 'node:fs';
import { XferError } from './errors.ts';
import { hostRegion, type Region } from './memory.ts';
import { libc, MAP_POPULATE, MAP_SHARED, MFD_CLOEXEC, MFD_HUGE_2MB, MFD_HUGETLB, PROT_READ, PROT_WRITE } from './native/libc.ts';

export const HUGEPAGE_BYTES = 2 * 1024 * 1024;

export interface HugepageCounts {
  total: number;
  free: number;
  /** The default huge page size (Hugepagesize); MFD_HUGE_2MB asks for 2 MiB pages regardless. */
  sizeBytes: number;
}

/** HugePages_Total / HugePages_Free / Hugepagesize of /proc/meminfo (zeros where it cannot be read). */
export function hugepageCounts(meminfo?: string): HugepageCounts {
  let text = meminfo;
  try {
    text ??= fs.readFileSync('/proc/meminfo', 'utf8');
  } catch {
    text = '';
  }
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text!)?.[1] ?? 0);
  return { total: field('HugePages_Total'), free: field('HugePages_Free'), sizeBytes: field('Hugepagesize') * 1024 };
}

/** Bytes a region of `size` takes on huge pages (whole 2 MiB pages, at least one). */
export function hugepageBytes(size: number): number {
  return Math.max(1, Math.ceil(size / HUGEPAGE_BYTES)) * HUGEPAGE_BYTES;
}

/** Throws one sentence unless `bytes` (rounded to 2 MiB pages) fit in the free 2 MiB huge pages. */
export function checkHugepagesFree(bytes: number, what: string, counts: HugepageCounts = hugepageCounts()): void {
  const pages = hugepageBytes(bytes) / HUGEPAGE_BYTES;
  // With another default size the 2 MiB pool is under /sys/kernel/mm/hugepages; meminfo's counts are of the default size.
  if (counts.sizeBytes !== HUGEPAGE_BYTES && counts.sizeBytes !== 0) return;
  if (counts.free >= pages) return;
  throw new XferError(
    `--use_hugepages: ${what} needs ${pages} huge page(s) of 2 MiB, but ${counts.free} of ${counts.total} are free ` +
      `(HugePages_Free in /proc/meminfo): reserve more as root (echo ${counts.total - counts.free + pages} > /proc/sys/vm/nr_hugepages) or run without --use_hugepages`,
  );
}

/** A host region on 2 MiB huge pages, shared with same-node peers through its memfd. */
export function allocateHugepageHost(name: string, size: number, owner: { rank: number; node: string }): Region {
  checkHugepagesFree(size, `region '${name}' (${size} bytes)`);
  const c = libc();
  const mapped = hugepageBytes(size);
  const fd = c.memfdCreate(`xfer-huge-r${owner.rank}-${name}`, MFD_HUGETLB | MFD_HUGE_2MB | MFD_CLOEXEC);
  let address: bigint;
  try {
    c.ftruncate(fd, mapped);
    address = c.mmap(mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd);
  } catch (err) {
    c.close(fd);
    // another process took the free pages between the check and the mapping
    throw new XferError(`--use_hugepages: mapping ${mapped} bytes of huge pages for region '${name}' failed (${(err as Error).message}); check HugePages_Free in /proc/meminfo`);
  }
  // The descriptor stays open while the region lives: it is how peers reach the pages.
  const file = { path: `/proc/${process.pid}/fd/${fd}`, mappedBytes: mapped };
  return hostRegion(name, address, size, { shm: '', owner, file }, () => {
    c.munmap(address, mapped);
    c.close(fd);
  });
}
