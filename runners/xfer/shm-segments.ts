// Host regions live in POSIX shared-memory segments named after the process that allocated them
// (/dev/shm/xfer-<pid>-<job>-r<rank>-<name>-<random>, memory.ts). A segment outlives a process
// killed by SIGKILL (no exit hook runs): the launcher that started the rank removes its segments
// when it sees the rank die (local-launch.ts), and every process sweeps those of processes that
// no longer exist before its first allocation (memory.ts). No native code here: a launcher needs
// only the file system.
import fs from 'node:fs';
import path from 'node:path';

export const SHM_DIR = '/dev/shm';

/** The process that allocated a segment, from its name; undefined for segments not ours. */
export function segmentOwner(name: string): number | undefined {
  const pid = Number(/^xfer-(\d+)-/.exec(name)?.[1]);
  return pid > 0 ? pid : undefined;
}

/** Unlinks the segments whose owner `remove` picks; returns their names. */
export function removeSegments(remove: (pid: number) => boolean, dir = SHM_DIR): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = segmentOwner(name);
    if (pid === undefined || !remove(pid)) continue;
    try {
      fs.unlinkSync(path.join(dir, name));
      removed.push(name);
    } catch {
      // another process removed it first
    }
  }
  return removed;
}
