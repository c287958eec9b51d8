// What the history commands share: their settings (DISAGG_HISTORY...), option parsing that turns
// a wrong option into one line, and a session on the store.
import { readArgs, type OptionSpec } from '../../../runners/common/args/read-args.ts';
import { CommandArgsError } from '../../../runners/common/args/args-error.ts';
import { readSettings, type Settings } from '../../settings.ts';
import { withHistory, type HistoryStore, type OpenOptions } from '../../history/store.ts';
import { DisaggBenchError } from '../../../runners/common/errors.ts';

export class UsageError extends DisaggBenchError {
  override name = 'UsageError';
}

/** The one argument layer (readArgs) with --help; a wrong option is a UsageError naming it, then the usage. */
export function parseOptions<O extends OptionSpec>(argv: string[], options: O, usage: string) {
  try {
    return readArgs(argv, { positionals: true, options: { ...options, help: { type: 'boolean', short: 'h' } } as O & { help: { type: 'boolean'; short: 'h' } } });
  } catch (error) {
    if (!(error instanceof CommandArgsError)) throw error;
    throw new UsageError(`${error.message}\n${usage}`);
  }
}

export function historySettings(): Settings {
  return readSettings();
}

export function onStore<T>(settings: Settings, fn: (store: HistoryStore) => Promise<T>, options?: OpenOptions): Promise<T> {
  return withHistory(settings.history.target, fn, { lockWaitSec: settings.history.gate.lockWaitSec, ...options });
}

/** '5' or '5%' -> 5; an error naming the option otherwise. */
export function percentOption(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw.replace(/%$/, ''));
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0) throw new UsageError(`--${name} ${JSON.stringify(raw)}: expected a percentage >= 0, e.g. --${name} 5`);
  return value;
}
