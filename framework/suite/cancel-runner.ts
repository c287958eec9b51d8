// The test runner of every test-type project (vitest.config.ts's `runner`): Vitest's own, plus one
// public way for a worker to hear that Vitest cancelled the run. Vitest calls a runner's
// `cancel(reason)` in each worker whenever its main process runs `cancelCurrentRun` (--bail after a
// failure, `disagg-bench run` on a signal, a key in watch mode), and the runner then skips every
// test not started yet; here it also tells the worker's session (suite.test.ts), which cancels and
// records the jobs of the tests already running.
//
// Not a test's `signal`: Vitest aborts it only for the tests its list of running tests still holds,
// and in a concurrent suite that list loses every test started after one that ends (@vitest/runner
// 4.1's addRunningTest removes from the ended test to the list's end), so the tests of a run's last
// batch would never hear of it.
import { TestRunner, type CancelReason } from 'vitest';

type Listener = (why: string) => void;

interface Slot {
  /** Why Vitest cancelled this worker's run, once it did. */
  cancelled?: string;
  listeners: Set<Listener>;
}

// One process-wide slot, not module variables: Vitest loads this file as the runner and again
// through the test file's imports, two instances in one worker that must share the news.
const SLOT = Symbol.for('disagg-bench.vitest-cancel');
function slot(): Slot {
  const g = globalThis as { [SLOT]?: Slot };
  return (g[SLOT] ??= { listeners: new Set() });
}

const VITEST_REASONS: Record<string, string> = { 'test-failure': 'a test failed under --bail', 'keyboard-input': 'a key in watch mode' };

/**
 * Why the run was cancelled, in the words a cancelled job's ledger entry and test use: Vitest's own
 * reasons said as "Vitest cancelled the run: ...", any other as its caller gave it (`disagg-bench
 * run` passes the signal's: "SIGTERM received by disagg-bench run").
 */
export function describeCancel(reason: CancelReason): string {
  const vitest = VITEST_REASONS[reason];
  return vitest ? `Vitest cancelled the run: ${vitest}` : reason;
}

/**
 * In a Vitest worker: `interrupt` is called when Vitest cancels the run, with why; at once when it
 * already has (a cancel that came while the session was opening). Returns how to stop listening.
 */
export function onVitestCancel(interrupt: Listener): () => void {
  const s = slot();
  if (s.cancelled !== undefined) {
    interrupt(s.cancelled);
    return () => {};
  }
  s.listeners.add(interrupt);
  return () => s.listeners.delete(interrupt);
}

export default class CancellableRunner extends TestRunner {
  constructor(...args: ConstructorParameters<typeof TestRunner>) {
    super(...args);
    // A new run in this worker (Vitest creates the runner per run): an earlier cancel is over.
    slot().cancelled = undefined;
  }

  override cancel(reason: CancelReason): void {
    super.cancel(reason);
    const s = slot();
    if (s.cancelled !== undefined) return;
    s.cancelled = describeCancel(reason);
    for (const listener of s.listeners) listener(s.cancelled);
  }
}
