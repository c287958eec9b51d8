// results.json's `notRun`: the tests a run selected that have no verdict, each with why (cancelled by
// a signal, not reached, its worker died), so a file read after a cancelled run says what it lacks.
// Written synchronously: a run cancelled by a signal writes it in the moments before it exits, when
// nothing asynchronous gets to run. Under the results file's lock, as every writer of the file.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { READ_LIMITS, readTextFileSync } from '../../runners/common/read-file.ts';
import { writeWholeSync } from '../../runners/common/write-whole.ts';
import { FileLockError } from './file-lock.ts';
import { isRecordOfRun, parseResults, RESULTS_JSON_FILE, RESULTS_JSON_VERSION, type NotRunTest, type ResultsFile } from './json.ts';

/** How long a writer waits for the lock; a holder killed mid-write leaves it for 30 s (file-lock.ts's stale). */
const LOCK_WAIT_MS = 5_000;

const pause = new Int32Array(new SharedArrayBuffer(4));

function lockSync(file: string): () => void {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      return lockfile.lockSync(file, { realpath: false, stale: 30_000, onCompromised: () => undefined });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED' || Date.now() > deadline) throw new FileLockError(file, (error as Error).message);
      Atomics.wait(pause, 0, 0, 50);
    }
  }
}

function readSync(file: string): ResultsFile {
  try {
    return parseResults(file, readTextFileSync(file, READ_LIMITS.record));
  } catch (error) {
    if ((error as { reason?: string }).reason?.endsWith('(ENOENT)')) return { version: RESULTS_JSON_VERSION, updated: '', records: [] };
    throw error;
  }
}

/**
 * Sets the run's not-run tests in OUTPUT_PATH/results.json: what the run said before is replaced, and
 * so is any earlier run's word on these tests (this run is the latest to decide about them). A test
 * with a record that names this run is not listed (it has a verdict). Returns the file.
 */
export function saveNotRunSync(outputPath: string, run: string | undefined, tests: ReadonlyArray<Omit<NotRunTest, 'run'>>): string {
  const file = path.join(outputPath, RESULTS_JSON_FILE);
  mkdirSync(outputPath, { recursive: true });
  const release = lockSync(file);
  try {
    const current = readSync(file);
    const recorded = new Set(current.records.filter((r) => !r.saving && run !== undefined && isRecordOfRun(r, run)).map((r) => r.testId));
    const listed = new Set(tests.map((t) => t.testId));
    const kept = (current.notRun ?? []).filter((n) => n.run !== run && !listed.has(n.testId));
    const added = tests.filter((t) => !recorded.has(t.testId)).map((t) => ({ testId: t.testId, ...(run ? { run } : {}), why: t.why }));
    const notRun = [...kept, ...added];
    const next: ResultsFile = { ...current, version: RESULTS_JSON_VERSION, updated: new Date().toISOString(), ...(notRun.length ? { notRun } : {}) };
    if (!notRun.length) delete next.notRun;
    writeWholeSync(file, JSON.stringify(next, null, 2) + '\n');
  } finally {
    try {
      release();
    } catch {
      // a lock taken over as stale is already gone
    }
  }
  return file;
}
