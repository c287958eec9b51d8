// The one error hierarchy of disagg-bench: every error the framework, the runners and this folder
// raise extends DisaggBenchError (the engine's, runners/xfer/errors.ts, through its own XferError).
// Each carries the context needed to act on it, as fields a caller can read:
//   file      the file at fault (a config, results.json, a test list, the CSV...), where there is one
//   place     where in it, or where in the run when no file is at fault (a line, a key path, an
//             environment variable, a command, an option, a test)
//   expected  what would have been accepted there
// Callers match on the class, people read the message: a message that does not already say its
// file, place or expectation gets it appended, so none is carried but left unsaid.
// It lives in runners/common, the lowest layer, so that every layer's errors (the engine's too) can
// extend it. What a command exits with for each kind is decided in one place, the CLI layer
// (framework/commands/support/exit-code.ts), not where the error is raised.

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

/**
 * A command line a command cannot take: an unknown option, a missing argument, a bad value. The one
 * usage error of every command (the argument layer's, the history's, serve-bench's, the engine
 * benchmarks' option checks): `disagg-bench` prints it with a pointer to the command's --help and
 * exits 2, or what the upstream tool the command imitates exits with (exit-code.ts).
 */
export class UsageError extends DisaggBenchError {
  override name = 'UsageError';

  /** `option`: the option at fault without its dashes, where one is. */
  constructor(message: string, readonly option?: string) {
    super(message, { place: option });
  }
}
