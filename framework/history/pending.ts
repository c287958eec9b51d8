// Records a run could not append (the store held by another process, a server down) are kept in
// a pending file beside the store, one JSON entry per line, and appended by the next writer (a
// run's end or `history import`) before its own: nothing is lost, and a record appended twice is
// still one (store.ts append skips a run and test it holds).
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { HistoryTarget } from '../settings.ts';
import type { HistoryEntry } from './rows.ts';

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
