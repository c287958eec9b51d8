// Records a run could not append (the store held by another process, a server down) are kept in
// a pending file beside the store, one JSON entry per line, and appended by the next writer (a
// run's end or `history import`) before its own: nothing is lost, and a record appended twice is
// still one (store.ts append skips a run and test it holds).
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { HistoryTarget } from '../settings.ts';
import type { HistoryEntry } from './rows.ts';
import type { HistoryStoreError } from './errors.ts';

/** Beside the DuckDB file; in OUTPUT_PATH for a PostgreSQL store. */
export function pendingFileOf(target: HistoryTarget, outputPath: string): string | undefined {
  if (target.kind === 'off') return undefined;
  return target.kind === 'duckdb' ? `${target.file}.pending.jsonl` : path.join(outputPath, 'history-pending.jsonl');
}

export function keepPending(file: string, entries: HistoryEntry[]): void {
  appendFileSync(file, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
}

/** The kept entries (a torn last line, from a crash while writing, is left out). */
export function readPending(file: string | undefined): HistoryEntry[] {
  if (!file || !existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        const entry = JSON.parse(line) as HistoryEntry;
        return entry?.record && entry.run?.id ? [entry] : [];
      } catch {
        return [];
      }
    });
}

export function clearPending(file: string | undefined): void {
  if (file) rmSync(file, { force: true });
}

/**
 * What becomes of `entries` a writer could not append (a run's end, `history import`), in one
 * sentence: kept in the pending file when the store is there but busy (another process holds the
 * DuckDB file) or out of reach (a server); otherwise (a broken or foreign file would keep them
 * forever) nothing is kept and the sentence says so.
 */
export function keepAside(error: HistoryStoreError, target: HistoryTarget, pendingFile: string | undefined, entries: HistoryEntry[]): string {
  const transient = error.locked || target.kind === 'postgres';
  if (!pendingFile || entries.length === 0 || !transient) return `nothing appended: ${error.message}`;
  try {
    keepPending(pendingFile, entries);
  } catch (keepError) {
    return `nothing appended: ${error.message}; the records could not be kept in ${pendingFile} either (${(keepError as NodeJS.ErrnoException).code ?? keepError})`;
  }
  return `${entries.length} record(s) kept in ${pendingFile} (appended by the next run or \`disagg-bench history import\`): ${error.reason}`;
}
