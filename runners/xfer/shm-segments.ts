// Host regions live in POSIX shared-memory segments named after the process that allocated them
// and its PID namespace (/dev/shm/xfer-<pid>.<pid namespace>-<job>-r<rank>-<name>-<random>,
// memory.ts). A segment outlives a process killed by SIGKILL (no exit hook runs): the launcher
// that started the rank removes its segments when it sees the rank die (local-launch.ts), and
// every process sweeps those of processes that no longer exist before its first allocation
// (memory.ts). A process id means something only in its PID namespace: where two share /dev/shm
// (containers of one Kubernetes pod, `docker run --ipc=host`), a segment of the other namespace
// is never taken for stale, since its owner cannot be seen from here. No native code here: a
// launcher needs only the file system.
import fs from 'node:fs';
import path from 'node:path';

export const SHM_DIR = '/dev/shm';

/** This process's PID namespace: the inode of /proc/self/ns/pid ('0' where it cannot be read). */
export const PID_NAMESPACE = pidNamespace();

function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(fs.readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0';
  } catch {
    return '0';
  }
}

/** How the names of this process's segments start (without the leading slash of shm_open). */
export function segmentPrefix(pid = process.pid): string {
  return `xfer-${pid}.${PID_NAMESPACE}-`;
}

/**
 * The process that allocated a segment, from its name; undefined for segments not ours, and for
 * those of another PID namespace (or of an older release, which did not name it): their owner
 * cannot be looked up from here.
 */
export function segmentOwner(name: string): number | undefined {
  const m = /^xfer-(\d+)\.(\d+)-/.exec(name);
  if (!m || m[2] !== PID_NAMESPACE) return undefined;
  const pid = Number(m[1]);
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
