// Cancelling a run: the one module that owns it in the process that owns the run, `disagg-bench
// run` or, under `npx vitest run`, Vitest's main process. Three things cancel a run at any moment:
// SIGINT, SIGTERM or SIGHUP to that process, and the npm that started it gone (the launcher watch
// below). All lead to endRunNow(), which does what the moment allows:
//   - under `disagg-bench run`, once the global setup ran: through Vitest's Node API. Vitest's
//     cancelCurrentRun reaches every worker's runner (cancel-runner.ts), whose session cancels and
//     records its jobs; the tests not started are skipped, the running ones end as not run, and
//     the run ends as any run does (its reporters, results.json's notRun, the digest, the global
//     teardown), then the command exits 128 + the signal (130, 143, 129). The jobs the ledger
//     already lists are cancelled at once as well, synchronously, in case the process dies next.
//     A second signal, or the run still going CANCEL_GRACE_MS later, ends it as below, and so
//     does SIGHUP (its terminal is gone);
//   - under `npx vitest run`, once the global setup ran: its end of the run, synchronously
//     (main-interrupt.ts: the run's jobs cancelled and recorded, Vitest's workers ended by
//     end-workers.ts, the tests not run named in results.json), then the same exit. Synchronously
//     because Vitest's own SIGINT/SIGTERM handler, which this process does not own, exits a
//     millisecond after the signal: nothing asynchronous would get to run;
//   - before the global setup: no worker exists and nothing was submitted; say so and exit.
// Vitest ending a run itself (--bail after a failure) reaches the workers the same way
// (cancel-runner.ts), and the tests cut short are named at the run's end.
//
// Outside this module, each for its reason (said there too):
//   - bin/disagg-bench.js answers a signal in the first milliseconds: loading this module takes
//     seconds on a busy machine;
//   - vitest.config.ts starts the launcher watch: it is Vitest's first read of the project;
//   - main-interrupt.ts is what ending the run at once does (the ledger, Vitest's state, the
//     not-run list);
//   - jobs/interrupt.ts is a Vitest worker's part (its session cancels and records its own jobs on a
//     signal, its main process gone, or end-workers.ts's RUN_ENDING_SIGNAL): the jobs layer, where a
//     session lives, cannot import the suite.
//
// The state is one process-wide slot, not module variables: Vitest loads the global setup through
// its own module runner and `disagg-bench run` through the CLI bundle, so this file has two
// instances in one process, and both must see the same owner and the same end.
import { signalExitCode } from '../../runners/common/exit-codes.ts';
import { testTypeNames } from '../contract/names.ts';
import { watchLauncher } from './launcher-watch.ts';
import { isListing } from './run-project.ts';

/** The signals that end a run; each exits 128 + its number (130, 143, 129), as a shell reports it. */
export const RUN_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export const exitCodeOf = signalExitCode;

/** bin/disagg-bench.js's handler for a signal that comes while the CLI loads. */
const EARLY_SIGNALS = Symbol.for('disagg-bench.early-signals');

/** How long Vitest's cancellation gets to end a run before it is ended at once. */
export const CANCEL_GRACE_MS = 15_000;

/** A run cancelled through Vitest: why, with what exit code, when. */
export interface RunCancel {
  why: string;
  exitCode: number;
  at: Date;
}

/** What the global setup hands in: it knows the run id, the ledger, Vitest's state. */
export interface RunEnding {
  /** Ends the run at once, synchronously, and the process with `exitCode`. */
  end(why: string, exitCode: number): void;
  /** Cancels and records the jobs the run's ledger lists, synchronously. */
  cancelJobs(why: string): void;
}

interface Slot {
  /** `disagg-bench run` handles the process's signals itself (the global setup then adds none). */
  ownedByRun?: boolean;
  /** The global setup's part, once it ran. */
  ending?: RunEnding;
  /** `disagg-bench run`'s Vitest: cancels its current run. */
  cancelVitest?: (why: string) => void;
  /** Set once the run is being cancelled through Vitest. */
  cancelled?: RunCancel;
  /** Ends the run at once if Vitest's cancellation has not ended it in time. */
  deadline?: NodeJS.Timeout;
  /** The one launcher watch of the process. */
  watching?: boolean;
  exiting?: boolean;
}

const SLOT = Symbol.for('disagg-bench.run-ending');
function slot(): Slot {
  const g = globalThis as { [SLOT]?: Slot };
  return (g[SLOT] ??= {});
}

function say(line: string): void {
  try {
    process.stderr.write(`disagg-bench: ${line}\n`);
  } catch {
    // nobody left to read it
  }
}

/** Ends the run, whatever stage it is at, and the process with `exitCode`. */
function endRunNow(why: string, exitCode: number, atOnce = false): void {
  const s = slot();
  if (s.ending && s.cancelVitest && !s.cancelled && !atOnce) return cancelThroughVitest(s, s.ending, s.cancelVitest, why, exitCode);
  if (s.ending && s.cancelled) return endCancelledRunNow(s.ending, s.cancelled, `${why} while the run was being cancelled`);
  if (s.ending) {
    // The signal's exit code, not one Vitest set for the tests so far (under `npx vitest run` its own handler sets the signal's).
    if (s.ownedByRun) process.exitCode = exitCode;
    return s.ending.end(why, exitCode);
  }
  if (s.exiting) return;
  s.exiting = true;
  say(`the run was interrupted (${why}) before any test was collected: nothing was submitted, nothing ran`);
  process.exit(exitCode);
}

function cancelThroughVitest(s: Slot, ending: RunEnding, cancelVitest: (why: string) => void, why: string, exitCode: number): void {
  s.cancelled = { why, exitCode, at: new Date() };
  say(`${why}: cancelling the run's jobs and tests (a second signal ends the run at once)`);
  cancelVitest(why);
  ending.cancelJobs(why);
  s.deadline = setTimeout(() => endCancelledRunNow(ending, s.cancelled!, `the run had not ended ${CANCEL_GRACE_MS / 1000} s after it was cancelled`), CANCEL_GRACE_MS);
}

/** A run being cancelled through Vitest ended at once, in the first signal's words and with its exit code (not Vitest's, whose tests may have failed meanwhile). */
function endCancelledRunNow(ending: RunEnding, cancelled: RunCancel, because: string): void {
  say(`${because}: ending it at once`);
  process.exitCode = cancelled.exitCode;
  ending.end(cancelled.why, cancelled.exitCode);
}

/**
 * `disagg-bench run` hands in its Vitest's cancelCurrentRun for the run's signals. Returns what it
 * calls once Vitest has closed: how the run was cancelled, if it was.
 */
export function cancelRunsThroughVitest(cancel: (why: string) => void): () => RunCancel | undefined {
  const s = slot();
  s.cancelVitest = cancel;
  return () => {
    clearTimeout(s.deadline);
    s.cancelVitest = undefined;
    return s.cancelled;
  };
}

/** The cause a signal's `why` gives the tests it left without a verdict. */
export function interruptedBecause(why: string): string {
  return `the run was interrupted (${why})`;
}

/** How the run was cancelled through Vitest, if it was (what the run's end names the tests not run by). */
export function runCancel(): RunCancel | undefined {
  return slot().cancelled;
}

/** The handler for a run's signal (the same for all three). */
function onRunSignal(signal: NodeJS.Signals): void {
  // SIGHUP: the terminal is gone, and a run's end written to it (reporters, the digest) could die of
  // its write errors half way; the end at once writes only what it can, to stderr.
  endRunNow(`${signal} received by ${slot().ownedByRun ? 'disagg-bench run' : "Vitest's main process"}`, exitCodeOf(signal), signal === 'SIGHUP');
}

/**
 * Watches the npm that started this process, once per process, from as early as the caller is:
 * `disagg-bench run` from its first line, vitest.config.ts for `npx vitest run`, both before
 * Vitest's global setup (a SIGTERM to npx can kill npx and the shell between, and nothing tells Vitest).
 */
export function watchLauncherOnce(): void {
  const s = slot();
  if (s.watching) return;
  s.watching = true;
  watchLauncher((why) => endRunNow(why, exitCodeOf('SIGTERM')));
}

/** `disagg-bench run` takes the process's signals over from bin's early handler, for the whole run. */
export function takeSignalsForRun(): void {
  slot().ownedByRun = true;
  for (const signal of RUN_SIGNALS) process.on(signal, onRunSignal);
  const early = (globalThis as { [EARLY_SIGNALS]?: (signal: NodeJS.Signals) => void })[EARLY_SIGNALS];
  if (early) for (const signal of RUN_SIGNALS) process.off(signal, early);
  watchLauncherOnce();
}

/**
 * The global setup hands in how it ends the run and, under `npx vitest run`, takes the signals;
 * the returned function gives them back at teardown.
 */
export function takeSignalsForVitest(ending: RunEnding): () => void {
  const s = slot();
  s.ending = ending;
  // Under `disagg-bench run` its handlers, there from its first millisecond, already lead here.
  const own = !s.ownedByRun;
  if (own) for (const signal of RUN_SIGNALS) process.on(signal, onRunSignal);
  watchLauncherOnce();
  return () => {
    if (own) for (const signal of RUN_SIGNALS) process.off(signal, onRunSignal);
  };
}

/**
 * Whether a `vitest` command line runs test-type projects (no --project, or one naming a test
 * type): only such a run has jobs to protect. The unit project's own run keeps Vitest's behaviour
 * (its global teardown must run to stop the cluster it started), and so does `vitest list`, which
 * collects the tests and runs none.
 */
export function runsTestTypes(argv: readonly string[] = process.argv): boolean {
  if (isListing(argv)) return false;
  const projects: string[] = [];
  argv.forEach((word, i) => {
    if (word === '--project' && argv[i + 1]) projects.push(argv[i + 1]);
    else if (word.startsWith('--project=')) projects.push(word.slice('--project='.length));
  });
  return projects.length === 0 || projects.some((p) => (testTypeNames as readonly string[]).some((t) => p === t || p.includes('*')));
}
