// What host memory a bench may take on this node, so a default meant for a large machine (a
// 4 GiB pipe, an 8 GiB nixlbench buffer) fails early with a clear message, or is capped, instead
// of dying in mmap. Host regions live in /dev/shm and are populated at once (MAP_POPULATE).
import fs from 'node:fs';
import os from 'node:os';
import type { MemoryKind } from '../../memory.ts';
import { XferError } from '../../errors.ts';

export interface HostMemory {
  /** MemAvailable of /proc/meminfo (os.freemem() where it is missing). */
  availableBytes: number;
  /** Free space of /dev/shm (Infinity when it cannot be read). */
  shmFreeBytes: number;
}

export function hostMemory(): HostMemory {
  let availableBytes = os.freemem();
  try {
    const kb = /^MemAvailable:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'))?.[1];
    if (kb) availableBytes = Number(kb) * 1024;
  } catch {
    // not Linux: os.freemem() it is
  }
  let shmFreeBytes = Infinity;
  try {
    const s = fs.statfsSync('/dev/shm');
    shmFreeBytes = s.bavail * s.bsize;
  } catch {
    // no /dev/shm statistics
  }
  return { availableBytes, shmFreeBytes };
}

/** Host bytes the ranks of one node may take together: 80% of what is available (the rest for the OS and Node). */
export function hostBudgetBytes(memory: HostMemory = hostMemory()): number {
  return Math.floor(Math.min(memory.availableBytes, memory.shmFreeBytes) * 0.8);
}

/**
 * Throws a message naming what needs the memory when `bytesPerRank` x `ranksOnNode` host bytes
 * exceed the node's budget; GPU memory is left to cudaMalloc, whose error names the size.
 */
export function checkHostFits(what: string, kind: MemoryKind, bytesPerRank: number, ranksOnNode: number, memory: HostMemory = hostMemory()): void {
  if (kind !== 'host') return;
  checkNodeHostFits(what, bytesPerRank * ranksOnNode, `${formatBytes(bytesPerRank)} of host memory per rank x ${ranksOnNode} rank(s) on this node`, memory);
}

/**
 * The same check for ranks that need different amounts (a traffic matrix's rows and columns):
 * `bytesOnNode` is what the ranks of this node take together, `how` says how it adds up.
 */
export function checkNodeHostFits(what: string, bytesOnNode: number, how: string, memory: HostMemory = hostMemory()): void {
  const budget = hostBudgetBytes(memory);
  if (bytesOnNode > budget) {
    throw new XferError(
      `${what} needs ${how} = ${formatBytes(bytesOnNode)}, more than the ${formatBytes(budget)} this node can give ` +
        `(80% of min(MemAvailable, /dev/shm free)); reduce the sizes`,
    );
  }
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(2)} ${units[unit]}`;
}
