// Files replaced whole or not at all: the new content goes to a temporary file beside the target,
// which is then renamed over it. A full disk, a crash or a kill in the middle leaves the old file
// (or no file) and a stray temporary file, never a half-written one (a 0-byte job.json that a
// replay would misread, a truncated results.json). The error says which file and why.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { rename, unlink, writeFile } from 'node:fs/promises';
import { outputWriteError } from './append-whole.ts';

const temporaryOf = (file: string) => `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;

export function writeWholeSync(file: string, text: string): void {
  const temporary = temporaryOf(file);
  try {
    writeFileSync(temporary, text);
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw outputWriteError(file, error);
  }
}

export async function writeWhole(file: string, text: string): Promise<void> {
  const temporary = temporaryOf(file);
  try {
    await writeFile(temporary, text, 'utf8');
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw outputWriteError(file, error);
  }
}
