// The engine's typed errors. Each carries the context needed to act on it: which library call,
// which ranks, which offset. Callers match on the class, people read the message. XferError sits
// under the project's one root, DisaggBenchError (runners/common, the one layer the engine may
// import), so a caller that catches "any error of ours" catches the engine's too.
import { categoryOf, DisaggBenchError, type ErrorCategory } from '../common/errors.ts';
import { EXIT_PEER_DIED } from '../common/exit-codes.ts';

export class XferError extends DisaggBenchError {
  override name = 'XferError';
}

/** A native library could not be loaded (not installed, wrong version, no device). */
export class LibraryUnavailableError extends XferError {
  override get category(): ErrorCategory {
    return 'environment';
  }
  override name = 'LibraryUnavailableError';
  constructor(
    readonly library: string,
    readonly reason: string,
  ) {
    super(`unavailable: ${library}: ${reason}`);
  }
}

/** A native call returned an error code. `code` is the library's own (errno, cudaError_t, ...). */
export class NativeCallError extends XferError {
  override name = 'NativeCallError';
  constructor(
    readonly library: string,
    readonly call: string,
    readonly code: number,
    readonly detail: string,
  ) {
    super(`${library}: ${call} failed: ${detail} (code ${code})`);
  }
}

/** A rendezvous wait (barrier, all-gather, key) did not complete in time. */
export class StoreTimeoutError extends XferError {
  override name = 'StoreTimeoutError';
  constructor(
    message: string,
    readonly what: string,
    readonly missingRanks: number[],
    readonly timeoutMs: number,
  ) {
    super(message);
  }
}

/** One or more ranks died (their store connection dropped) while others waited on them. */
export class RankDeadError extends XferError {
  override get category(): ErrorCategory {
    return 'peer-died';
  }
  override name = 'RankDeadError';
  constructor(
    message: string,
    readonly deadRanks: number[],
  ) {
    super(message);
  }
}

/** A transfer failed or did not complete in time; `deadRanks`: ranks the store saw die by then (the likely cause). */
export class TransferError extends XferError {
  override name = 'TransferError';
  /** A transfer that failed with a rank the store saw die is that rank's death, not its own fault. */
  override get category(): ErrorCategory {
    return this.deadRanks.length > 0 ? 'peer-died' : super.category;
  }
  constructor(
    message: string,
    readonly backend: string,
    readonly peer?: number,
    readonly deadRanks: readonly number[] = [],
  ) {
    super(message);
  }
}

/** Received bytes differ from the expected pattern; the first mismatch is reported. */
export class VerificationError extends XferError {
  override name = 'VerificationError';
  constructor(
    message: string,
    readonly offset: number,
    readonly expectedByte: number,
    readonly got: number,
  ) {
    super(message);
  }
}

/**
 * The exit code of a rank that stopped because another rank died (a RankDeadError): the launchers
 * name the rank that failed on its own, not one of these. Ranks that all die together are reaped in
 * no particular order, so which exit is seen first says nothing about which came first.
 */
export const PEER_DIED_EXIT_CODE = EXIT_PEER_DIED;

/** Whether `err` says a rank failed because another rank died: a RankDeadError, or a TransferError with a rank the store saw die. */
export function isPeerDeath(err: unknown): boolean {
  return categoryOf(err) === 'peer-died';
}

/** Formats a rank list for messages: "rank 3" or "ranks 2, 5". */
export function describeRanks(ranks: readonly number[]): string {
  const sorted = [...ranks].sort((a, b) => a - b);
  return sorted.length === 1 ? `rank ${sorted[0]}` : `ranks ${sorted.join(', ')}`;
}
