// A file's stamp: what stat says of it (inode, size, modification and change times), kept beside
// a hash of its content so that an unchanged file need not be read and hashed again, as git's
// index does. A stamp stands for the content only where no write can have kept it: the content is
// read after the stat the stamp is taken from, and a file whose modification or change time lies
// within RACY_MARGIN_MS of that moment gets no stamp (a second write within one timestamp tick
// leaves size and times alike; git calls such an entry "racily clean" and reads it again). The
// next read of that file, once the margin has passed, stamps it. The change time cannot be set by
// a user (touch -d sets only the modification time), so restoring an mtime does not hide a write.
import { statSync, type Stats } from 'node:fs';

/**
 * Writes this close to the stat (either side) get no stamp: the coarsest timestamp tick of the
 * file systems configs live on (FAT: 2 s; ext4, xfs, NFS: a kernel tick or finer) and a clock
 * between a network file system's server and this host that differ by up to a second.
 */
export const RACY_MARGIN_MS = 2_000;

/** A stamp: inode, size, modification and change time (sub-millisecond), as one string. */
export type FileStamp = string;

/** The stamp of `stat`; undefined for a file written within RACY_MARGIN_MS of `readAtMs` (or in the future). */
export function stampOf(stat: Stats, readAtMs: number): FileStamp | undefined {
  if (!stat.isFile()) return undefined;
  if (Math.max(stat.mtimeMs, stat.ctimeMs) > readAtMs - RACY_MARGIN_MS) return undefined;
  return format(stat);
}

const format = (stat: Stats): FileStamp => `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;

/** What stat says of the file now, and when it was asked: take it before reading the content. */
export function statBeforeRead(file: string): { stat: Stats | undefined; atMs: number } {
  const atMs = Date.now();
  try {
    return { stat: statSync(file), atMs };
  } catch {
    return { stat: undefined, atMs };
  }
}

/** Whether the file is as it was when `stamp` was taken (it then has the content hashed with it). */
export function unchangedSince(stamp: FileStamp | undefined, stat: Stats | undefined): boolean {
  return stamp !== undefined && stat?.isFile() === true && stamp === format(stat);
}
