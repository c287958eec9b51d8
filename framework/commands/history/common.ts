// What the history commands share: their settings (DISAGG_HISTORY...), option parsing that turns
// a wrong option into one line, and a session on the store.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { readSettings, type Settings } from '../../settings.ts';
import { withHistory, type HistoryStore, type OpenOptions } from '../../history/store.ts';

export class UsageError extends Error {
  override name = 'UsageError';
}

/** parseArgs with --help; an unknown or malformed option is a UsageError naming it and the usage. */
export function parseOptions<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O, usage: string) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, strict: true, options: { ...options, help: { type: 'boolean', short: 'h' } } as O & { help: { type: 'boolean'; short: 'h' } } });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${usage}`);
  }
}

export function historySettings(): Settings {
  return readSettings();
}

export function onStore<T>(settings: Settings, fn: (store: HistoryStore) => Promise<T>, options?: OpenOptions): Promise<T> {
  return withHistory(settings.history.target, fn, options);
}

/** '5' or '5%' -> 5; an error naming the option otherwise. */
export function percentOption(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw.replace(/%$/, ''));
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0) throw new UsageError(`--${name} ${JSON.stringify(raw)}: expected a percentage >= 0, e.g. --${name} 5`);
  return value;
}
