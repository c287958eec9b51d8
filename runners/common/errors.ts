// The one error hierarchy of disagg-bench: every error the framework, the non-engine runners and this
// folder raise extends DisaggBenchError (the engine, runners/xfer, has its own: XferError). Like the
// engine's errors, each carries the context needed to act on it, as fields a caller can read:
//   file      the file at fault (a config, results.json, a test list, the CSV...), where there is one
//   place     where in it, or where in the run when no file is at fault (a line, a key path, an
//             environment variable, a command, an option, a test)
//   expected  what would have been accepted there
// Callers match on the class, people read the message: a message that does not already say its
// file, place or expectation gets it appended, so none is carried but left unsaid.
// It lives in runners/common, the lowest layer, so that every layer's errors can extend it.

export interface ErrorPlace {
  file?: string;
  place?: string;
  expected?: string;
}

/** `message`, with each given part of `where` it does not already contain appended. */
export function withPlace(message: string, where: ErrorPlace): string {
  const missing = [
    where.file && !message.includes(where.file) ? `file ${where.file}` : undefined,
    where.place && !message.includes(where.place) ? `at ${where.place}` : undefined,
    where.expected && !message.includes(where.expected) ? `expected ${where.expected}` : undefined,
  ].filter(Boolean);
  return missing.length === 0 ? message : `${message} (${missing.join('; ')})`;
}

export class DisaggBenchError extends Error {
  override name = 'DisaggBenchError';
  readonly file?: string;
  readonly place?: string;
  readonly expected?: string;

  constructor(message: string, where: ErrorPlace = {}, options?: ErrorOptions) {
    super(withPlace(message, where), options);
    if (where.file !== undefined) this.file = where.file;
    if (where.place !== undefined) this.place = where.place;
    if (where.expected !== undefined) this.expected = where.expected;
  }
}
