// The one way the framework and the runners read a file a user or a job gave them (configs, test
// lists, matrices, logs, records): a regular file of a bounded size, or one sentence saying why not.
// The file is opened non-blocking and checked on its descriptor, so a FIFO never blocks the run
// (it is refused, not read), a device such as /dev/zero is never read into memory, and a file that
// grows while it is read stops at the bound instead of exhausting memory.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { DisaggBenchError } from './errors.ts';
import type { ErrorCategory } from './errors.ts';

/** Why a file cannot be read: `reason` completes "<file> ..." as one sentence without the file. */
export class FileReadError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  override name = 'FileReadError';
  constructor(
    override readonly file: string,
    /** e.g. "is not a regular file (a FIFO)", "cannot be read: permission denied (EACCES)". */
    readonly reason: string,
    readonly code: 'not-regular' | 'too-large' | 'unreadable',
  ) {
    super(`${file} ${reason}`, { file });
  }
}

const OPEN_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ELOOP: 'a link that leads back to itself',
  ENXIO: 'a socket (not a file)',
  ENOTDIR: 'a path through something that is not a folder',
  EISDIR: 'a folder',
};

/** `1.5 MiB`, `512 KiB`, `37 B`: sizes in messages. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1 << 30) return `${+(bytes / (1 << 30)).toFixed(1)} GiB`;
  if (bytes >= 1 << 20) return `${+(bytes / (1 << 20)).toFixed(1)} MiB`;
  if (bytes >= 1 << 10) return `${+(bytes / (1 << 10)).toFixed(1)} KiB`;
  return `${bytes} B`;
}

function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  return 'not a file';
}

function openError(file: string, err: unknown): FileReadError {
  const code = (err as NodeJS.ErrnoException).code ?? 'error';
  return new FileReadError(file, `cannot be read: ${OPEN_ERRORS[code] ?? (err as Error).message} (${code})`, 'unreadable');
}

function tooLarge(file: string, size: number | undefined, maxBytes: number): FileReadError {
  const what = size === undefined ? 'grew past' : `is ${formatBytes(size)} (${size} bytes), more than`;
  return new FileReadError(file, `${what} the ${formatBytes(maxBytes)} read at most from such a file`, 'too-large');
}

function checkStat(file: string, stat: Stats, maxBytes: number): void {
  if (!stat.isFile()) throw new FileReadError(file, `is not a regular file (${kindOf(stat)})`, 'not-regular');
  if (stat.size > maxBytes) throw tooLarge(file, stat.size, maxBytes);
}

// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * Opens `file` without blocking, checks it is a regular file of at most `maxBytes`, and hands the
 * descriptor and its stat to `read`; every failure comes out as a FileReadError naming the file.
 */
function withRegularFileSync<T>(file: string, maxBytes: number, read: (fd: number, stat: Stats) => T): T {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (err) {
    throw openError(file, err);
  }
  try {
    const stat = fstatSync(fd);
    checkStat(file, stat, maxBytes);
    return read(fd, stat);
  } catch (err) {
    if (err instanceof FileReadError) throw err;
    throw openError(file, err);
  } finally {
    closeSync(fd);
  }
}

/** The bytes of a regular file of at most `maxBytes`; throws FileReadError otherwise. */
export function readRegularFileSync(file: string, maxBytes: number): Buffer {
  return withRegularFileSync(file, maxBytes, (fd, stat) => {
    // One byte more than allowed: a file that grew since fstat is caught, not read without end.
    const buffer = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(stat.size + 1, 64 * 1024)));
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > maxBytes) throw tooLarge(file, undefined, maxBytes);
        return readRest(fd, file, buffer, maxBytes);
      }
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) return buffer.subarray(0, length);
      length += n;
    }
  });
}

/** A file that grew after fstat: read on in larger chunks, up to the bound. */
function readRest(fd: number, file: string, start: Buffer, maxBytes: number): Buffer {
  const chunks = [start];
  let total = start.length;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(1 << 20, maxBytes + 1 - total + 1));
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) return Buffer.concat(chunks, total);
    chunks.push(chunk.subarray(0, n));
    total += n;
    if (total > maxBytes) throw tooLarge(file, undefined, maxBytes);
  }
}

/** Like readRegularFileSync, without blocking the event loop (logs, which may be large). */
export async function readRegularFile(file: string, maxBytes: number): Promise<Buffer> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, OPEN_FLAGS);
  } catch (err) {
    throw openError(file, err);
  }
  try {
    const stat = await handle.stat();
    checkStat(file, stat, maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(Math.max(stat.size + 1, 64 * 1024), 4 << 20, maxBytes + 1 - total + 1));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks, total);
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes) throw tooLarge(file, undefined, maxBytes);
    }
  } catch (err) {
    if (err instanceof FileReadError) throw err;
    throw openError(file, err);
  } finally {
    await handle.close();
  }
}

/**
 * The last `maxBytes` of a regular file as text (a log's tail for a message), however large the
 * file: only that much is read. A character cut at the start shows as U+FFFD.
 */
export function readTailSync(file: string, maxBytes: number): string {
  return withRegularFileSync(file, Number.MAX_SAFE_INTEGER, (fd, stat) => {
    const length = Math.min(stat.size, maxBytes);
    const buffer = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const n = readSync(fd, buffer, done, length - done, stat.size - length + done);
      if (n === 0) break;
      done += n;
    }
    return buffer.subarray(0, done).toString('utf8');
  });
}

/** A regular file's text as UTF-8 (invalid bytes become U+FFFD, as readFileSync(f, 'utf8') does). */
export function readTextFileSync(file: string, maxBytes: number): string {
  return readRegularFileSync(file, maxBytes).toString('utf8');
}

export async function readTextFile(file: string, maxBytes: number): Promise<string> {
  return (await readRegularFile(file, maxBytes)).toString('utf8');
}

/**
 * How much the run reads at most from each kind of file, and why. A bound keeps a wrong file
 * (a disk image named bench.log, a generated list gone wrong) from taking the run's memory.
 */
export const READ_LIMITS = {
  /** A config: every real one is a few KiB; see framework/config/load.ts for why 256 KiB. */
  config: 256 << 10,
  /** A test list of 100,000 pytest node ids is about 15 MiB. */
  testList: 64 << 20,
  /** A size matrix of 2,048 x 2,048 cells of up to 8 characters is about 32 MiB. */
  matrix: 64 << 20,
  /** A job's log: a V8 string holds at most 512 MiB of text; half of that leaves room to parse it. */
  log: 256 << 20,
  /** The framework's own records (job.json, ledger, results.json, reports): 256 MiB, as logs. */
  record: 256 << 20,
} as const;
