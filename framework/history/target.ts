// Which store DISAGG_HISTORY names (framework/settings.ts parses it) and how a message names it:
// the DuckDB file's path, or the PostgreSQL URL without its password.
import type { HistoryTarget } from '../settings.ts';

export function describeTarget(target: HistoryTarget): string {
  if (target.kind === 'off') return 'the history (DISAGG_HISTORY=off)';
  if (target.kind === 'duckdb') return `the DuckDB history ${target.file}`;
  return `the PostgreSQL history ${redactUrl(target.url)}`;
}

/** postgres://user:secret@host/db -> postgres://user@host/db (a password never reaches a log). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '';
    return parsed.toString().replace(/^(postgres(?:ql)?:\/\/[^:@/]*):@/, '$1@');
  } catch {
    return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1@');
  }
}
