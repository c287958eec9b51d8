// What a disagg-bench process exits with, decided here and nowhere else: from an error's category
// (errors.ts), from the signal that ended a run, or done. The CLI (framework/commands/support/
// exit-code.ts) adds what a command imitating an upstream tool exits with instead; the engine's
// ranks exit with the same table.
import { constants } from 'node:os';
import { categoryOf, type ErrorCategory } from './errors.ts';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
/** A usage error: an unknown option, a missing argument, a bad value, or a bad setting in the environment. */
export const EXIT_USAGE = 2;
/**
 * A transfer rank that stopped because another rank died: the rank launchers read it to name the
 * rank that failed on its own, not one of these.
 */
export const EXIT_PEER_DIED = 75;

const BY_CATEGORY: Readonly<Record<ErrorCategory, number>> = {
  usage: EXIT_USAGE,
  'peer-died': EXIT_PEER_DIED,
  input: EXIT_FAILURE,
  environment: EXIT_FAILURE,
  interrupted: EXIT_FAILURE,
  internal: EXIT_FAILURE,
  failure: EXIT_FAILURE,
};

/** The exit code of a process ending with `err`. */
export function exitCodeOfError(err: unknown): number {
  return BY_CATEGORY[categoryOf(err)];
}

/** A process ended by a signal exits 128 + its number (130 for SIGINT, 143 for SIGTERM), as a shell reports it. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + constants.signals[signal];
}
