// One exclusive section per results file, across async callers and processes (proper-lockfile:
// an atomic mkdir of `<file>.lock`, refreshed while held, taken over when stale after a crash).
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { DisaggBenchError } from '../../runners/common/errors.ts';
import type { ErrorCategory } from '../../runners/common/errors.ts';

export class FileLockError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'environment';
  }
  constructor(
    override readonly file: string,
    readonly reason: string,
  ) {
    super(`cannot lock ${file}: ${reason}`, { file });
    this.name = 'FileLockError';
  }
}

/** Runs `fn` while holding the lock of `file` (which need not exist yet); its folder is created. */
export async function withFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  await mkdir(path.dirname(file), { recursive: true });
  let compromised: Error | undefined;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(file, {
      realpath: false,
      // A holder whose event loop stalls (a loaded machine) keeps its lock up to this long; a lock
      // left by a crash is taken over after it.
      stale: 30_000,
      // Many tests may finish together: retry long enough (about two minutes), with jitter so
      // waiters do not march in step.
      retries: { retries: 1200, factor: 1.3, minTimeout: 5, maxTimeout: 100, randomize: true },
      onCompromised: (error) => {
        compromised = error;
      },
    });
  } catch (error) {
    throw new FileLockError(file, (error as Error).message);
  }
  try {
    const result = await fn();
    if (compromised) throw new FileLockError(file, `the lock was lost while writing (${compromised.message})`);
    return result;
  } finally {
    await release().catch(() => undefined); // a compromised lock may already be gone
  }
}
