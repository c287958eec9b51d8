// The one error hierarchy of disagg-bench: every error the framework, the runners and this folder
// raise extends DisaggBenchError (the engine's, runners/xfer/errors.ts, through its own XferError).
// Each carries the context needed to act on it, as fields a caller can read:
//   file      the file at fault (a config, results.json, a test list, the CSV...), where there is one
//   place     where in it, or where in the run when no file is at fault (a line, a key path, an
//             environment variable, a command, an option, a test)
//   expected  what would have been accepted there
// Callers match on the class or on its category (below), people read the message: a message that
// does not already say its file, place or expectation gets it appended, so none is carried but left
// unsaid. The root class is for extending: a throw names a class with a category.
// It lives in runners/common, the lowest layer, so that every layer's errors (the engine's too) can
// extend it. What a command exits with for each kind is decided in one place, the CLI layer
// (framework/commands/support/exit-code.ts), not where the error is raised.

/**
 * What kind of fault an error is, for a caller deciding what to do and for the exit code
 * (exit-codes.ts, the one table):
 *   usage        the command line or a setting cannot be taken (exit 2)
 *   input        a file, a config or a value in it is not what is expected
 *   environment  this host or a service lacks what the run needs (a port, a tool, a file it reads)
 *   interrupted  the run was interrupted, or what it waited on was ended by it
 *   peer-died    a rank stopped because another rank died (exit 75)
 *   internal     a rule of the code itself was broken: a bug to report
 *   failure      what was run ran and failed (a test, a job, a benchmark)
 */
export type ErrorCategory = 'usage' | 'input' | 'environment' | 'interrupted' | 'peer-died' | 'internal' | 'failure';

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
  /** What kind of fault it is; each subclass says its own. */
  get category(): ErrorCategory {
    return 'failure';
  }
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
  override get category(): ErrorCategory {
    return 'usage';
  }

  /** `option`: the option at fault without its dashes, where one is. */
  constructor(message: string, readonly option?: string) {
    super(message, { place: option });
  }
}

/** A value, a file or a config that is not what is expected (a size, a host list, a job_time, a name). */
export class InputError extends DisaggBenchError {
  override name = 'InputError';
  override get category(): ErrorCategory {
    return 'input';
  }
}

/** This host or a service lacks what the run needs: a free port, a tool, a file it reads. */
export class EnvironmentError extends DisaggBenchError {
  override name = 'EnvironmentError';
  override get category(): ErrorCategory {
    return 'environment';
  }
}

/** A rule of the code itself was broken (a module registered under another name, a call out of order): a bug. */
export class InternalError extends DisaggBenchError {
  override name = 'InternalError';
  override get category(): ErrorCategory {
    return 'internal';
  }
}

/** What was run ran and failed: a test's verdict, a task of a job. */
export class FailureError extends DisaggBenchError {
  override name = 'FailureError';
}

/** The category of any thrown value: a DisaggBenchError's own, else a failure. */
export function categoryOf(err: unknown): ErrorCategory {
  return err instanceof DisaggBenchError ? err.category : 'failure';
}
