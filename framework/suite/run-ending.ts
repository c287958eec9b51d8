// Who ends an interrupted run in Vitest's main process. Three things can interrupt it: a signal
// (SIGINT, SIGTERM, SIGHUP), the npx that started it going away (launcher-watch.ts), and, under
// `disagg-bench run`, a signal that came while the CLI was still loading. All of them end up in one
// call, endRunNow(), which does what the moment allows:
//   - once the global setup ran: its end of the run (global-setup.ts: jobs cancelled and recorded,
//     workers ended, the tests not run named, main-interrupt.ts) then exit 128+signal;
//   - before it: nothing was submitted and no worker exists; say so and exit 128+signal.
// The state is one process-wide slot, not module variables: Vitest loads the global setup through
// its own module runner and `disagg-bench run` through the CLI bundle, so this file has two
// instances in one process, and both must see the same owner and the same end.
import { constants } from 'node:os';
import { testTypeNames } from '../contract/names.ts';
import { watchLauncher } from './launcher-watch.ts';

/** The signals that end a run; each exits 128 + its number (130, 143, 129), as a shell reports it. */
export const RUN_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export const exitCodeOf = (signal: NodeJS.Signals) => 128 + constants.signals[signal];

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

/** `disagg-bench run` takes the process's signals: the global setup will not add its own. */
export function claimSignals(): void {
  slot().ownedByRun = true;
}

export function signalsClaimed(): boolean {
  return slot().ownedByRun === true;
}

/** The global setup hands in how it ends the run (it knows the run id, the ledger, Vitest's state). */
export function setRunEnd(end: (why: string, exitCode: number) => void): void {
  slot().end = end;
}

function say(line: string): void {
  try {
    process.stderr.write(`disagg-bench: ${line}\n`);
  } catch {
    // nobody left to read it
  }
}

/** Ends the run now, whatever stage it is at, and the process with `exitCode`. */
export function endRunNow(why: string, exitCode: number): void {
  const s = slot();
  if (s.end) return s.end(why, exitCode);
  if (s.ending) return;
  s.ending = true;
  say(`the run was interrupted (${why}) before any test was collected: nothing was submitted, nothing ran`);
  process.exit(exitCode);
}

/** The handler for a run's signal (the same for all three). */
export function onRunSignal(signal: NodeJS.Signals): void {
  endRunNow(`${signal} received by ${signalsClaimed() ? 'disagg-bench run' : "Vitest's main process"}`, exitCodeOf(signal));
}

/**
 * Watches the npm that started this process, once per process, from as early as the caller is:
 * `disagg-bench run` from its first line, vitest.config.ts for `npx vitest run`, both before
 * Vitest's global setup (a SIGTERM to npx kills npx and its shell, and nothing tells Vitest).
 */
export function watchLauncherOnce(): void {
  const s = slot();
  if (s.watching) return;
  s.watching = true;
  watchLauncher((why) => endRunNow(why, exitCodeOf('SIGTERM')));
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
