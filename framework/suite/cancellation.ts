// Cancelling a run: the one module that owns it in the process that owns the run, `disagg-bench
// run` or, under `npx vitest run`, Vitest's main process. Three things cancel a run at any moment:
// SIGINT, SIGTERM or SIGHUP to that process, and the npm that started it gone (the launcher watch
// below). All lead to endRunNow(), which does what the moment allows:
//   - once the global setup ran: its end of the run (main-interrupt.ts: the run's jobs cancelled
//     and recorded, Vitest's workers ended by endWorkers() here, the tests not run named in
//     results.json), then exit 128 + the signal (130, 143, 129);
//   - before it: no worker exists and nothing was submitted; say so and exit the same way.
// Everything is synchronous: Vitest's own SIGINT/SIGTERM handler exits the process a millisecond
// after the signal, so nothing asynchronous would get to run. For the same reason Vitest's own
// cancellation serves only a run Vitest ends itself (--bail after a failure): each worker's session
// then stops as on a signal (cancel-runner.ts), and the tests cut short are named at the run's end.
//
// Outside this module, each for its reason (said there too):
//   - bin/disagg-bench.js answers a signal in the first milliseconds: loading this module takes
//     seconds on a busy machine;
//   - vitest.config.ts starts the launcher watch: it is Vitest's first read of the project;
//   - main-interrupt.ts is what ending the run does (the ledger, Vitest's state, the not-run list);
//   - jobs/interrupt.ts is a Vitest worker's part (its session cancels and records its own jobs on a
//     signal, its main process gone, or endWorkers' RUN_ENDING_SIGNAL): the jobs layer, where a
//     session lives, cannot import the suite.
//
// The state is one process-wide slot, not module variables: Vitest loads the global setup through
// its own module runner and `disagg-bench run` through the CLI bundle, so this file has two
// instances in one process, and both must see the same owner and the same end.
import { readdirSync } from 'node:fs';
import { processStat } from '../../runners/common/proc.ts';
import { signalExitCode } from '../../runners/common/exit-codes.ts';
import { testTypeNames } from '../contract/names.ts';
import { RUN_ENDING_SIGNAL } from '../jobs/run-ending-signal.ts';
import { watchLauncher } from './launcher-watch.ts';

/** The signals that end a run; each exits 128 + its number (130, 143, 129), as a shell reports it. */
export const RUN_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export const exitCodeOf = signalExitCode;

/** bin/disagg-bench.js's handler for a signal that comes while the CLI loads. */
const EARLY_SIGNALS = Symbol.for('disagg-bench.early-signals');

interface Slot {
  /** `disagg-bench run` handles the process's signals itself (the global setup then adds none). */
  ownedByRun?: boolean;
  /** The global setup's end of the run, once it ran. */
  end?: (why: string, exitCode: number) => void;
  /** The one launcher watch of the process. */
  watching?: boolean;
  ending?: boolean;
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

/** Ends the run now, whatever stage it is at, and the process with `exitCode`. */
function endRunNow(why: string, exitCode: number): void {
  const s = slot();
  if (s.end) return s.end(why, exitCode);
  if (s.ending) return;
  s.ending = true;
  say(`the run was interrupted (${why}) before any test was collected: nothing was submitted, nothing ran`);
  process.exit(exitCode);
}

/** The handler for a run's signal (the same for all three). */
function onRunSignal(signal: NodeJS.Signals): void {
  endRunNow(`${signal} received by ${slot().ownedByRun ? 'disagg-bench run' : "Vitest's main process"}`, exitCodeOf(signal));
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
 * The global setup hands in how it ends the run (it knows the run id, the ledger, Vitest's state)
 * and, under `npx vitest run`, takes the signals; the returned function gives them back at teardown.
 */
export function takeSignalsForVitest(end: (why: string, exitCode: number) => void): () => void {
  const s = slot();
  s.end = end;
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
 * (its global teardown must run to stop the cluster it started).
 */
export function runsTestTypes(argv: readonly string[] = process.argv): boolean {
  const projects: string[] = [];
  argv.forEach((word, i) => {
    if (word === '--project' && argv[i + 1]) projects.push(argv[i + 1]);
    else if (word.startsWith('--project=')) projects.push(word.slice('--project='.length));
  });
  return projects.length === 0 || projects.some((p) => (testTypeNames as readonly string[]).some((t) => p === t || p.includes('*')));
}

/** How long workers get to cancel their jobs and exit before SIGKILL. */
export const WORKER_GRACE_MS = 2_500;

/**
 * This process's live children (zombies are gone: nobody reaps them while we block). Read from
 * /proc because Vitest's Node API names no worker process (its pool is private) and this runs in a
 * signal handler that must finish synchronously, where cancelCurrentRun's promise would never settle.
 */
function children(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries.filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => {
    const s = processStat(pid);
    return s !== undefined && s.ppid === process.pid && s.state !== 'Z';
  });
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(pause, 0, 0, ms);
}

/**
 * Ends Vitest's workers: each gets RUN_ENDING_SIGNAL, "the run is ending" (one with a session
 * cancels its own jobs, those not in the ledger yet included, records them and exits; one still
 * loading configs dies of it, the default action, even in a long synchronous read); whatever is
 * left after WORKER_GRACE_MS gets SIGKILL (local jobs then die by their watchdog,
 * scheduler/local-job.ts). Without this, workers were orphaned and ran on. Returns how many were killed.
 */
export function endWorkers(): number {
  const workers = children();
  for (const pid of workers) signal(pid, RUN_ENDING_SIGNAL);
  const deadline = Date.now() + WORKER_GRACE_MS;
  let left = workers;
  while (left.length > 0 && Date.now() < deadline) {
    sleepSync(50);
    const alive = new Set(children());
    left = left.filter((pid) => alive.has(pid));
  }
  for (const pid of left) signal(pid, 'SIGKILL');
  return left.length;
}
