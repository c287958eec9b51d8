// The one error a history store raises: one sentence naming the store, what is wrong and what to
// do. A run turns it into a warning (its own results never depend on the store); a command into
// its message and exit code 1.
import { DisaggBenchError } from '../../runners/common/errors.ts';

export class HistoryStoreError extends DisaggBenchError {
  override name = 'HistoryStoreError';
  constructor(
    /** The store as a user would name it (see describeTarget). */
    readonly store: string,
    readonly reason: string,
    readonly remedy: string,
    /** The store is simply not there yet (no file, no tables): nothing to compare with, nothing wrong. */
    readonly empty = false,
    /** Another process holds the store: the caller may keep its records aside (pending.ts). */
    readonly locked = false,
  ) {
    super(`${store}: ${reason}; ${remedy}`, { place: store });
  }
}

export const isHistoryStoreError = (error: unknown): error is HistoryStoreError => error instanceof HistoryStoreError;
