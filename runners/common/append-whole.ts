// Writes to OUTPUT_PATH that leave every file whole when the disk fills up (or any write fails):
// an append that cannot be completed is undone (the file is cut back to its size before), so a
// reader never finds half a CSV row or half a ledger line; the error says which file and why.
import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { DisaggBenchError } from './errors.ts';
import type { ErrorCategory } from './errors.ts';

const REASONS: Record<string, string> = {
  ENOSPC: 'no space left on device (the file system of OUTPUT_PATH is full)',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'a part of its path is a file, not a folder',
};

export class OutputWriteError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'environment';
  }
  override name = 'OutputWriteError';
  constructor(
    override readonly file: string,
    readonly code: string | undefined,
    detail: string,
  ) {
    super(`cannot write ${file}: ${detail}; what was written before stays whole`, { file });
  }
}

/** The error of a failed write to `file`, saying why in words. */
export function outputWriteError(file: string, error: unknown): OutputWriteError {
  if (error instanceof OutputWriteError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new OutputWriteError(file, code, (code && REASONS[code]) ?? (error as Error).message);
}

/** Appends `text` to `file` (created if missing) all or nothing. */
export function appendWholeSync(file: string, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let fd: number;
  try {
    fd = openSync(file, 'a');
  } catch (error) {
    throw outputWriteError(file, error);
  }
  let before = 0;
  try {
    before = fstatSync(fd).size;
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
  } catch (error) {
    try {
      ftruncateSync(fd, before);
    } catch {
      // nothing more can be done; the error below says what happened
    }
    throw outputWriteError(file, error);
  } finally {
    closeSync(fd);
  }
}
