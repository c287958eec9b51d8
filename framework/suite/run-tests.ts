// What Vitest's main process knows of the run's tests as they go: collected, finished, and the
// ones still running. The reporter (reporter.ts) fills it; the main process's interruption
// (main-interrupt.ts) reads it to say which tests did not run to their end. Both live in the main
// process but may be loaded as separate module instances (reporters and global setups have their
// own loaders), so the state hangs off one process-wide symbol.
import { testTypeNames } from '../types/names.ts';

interface RunTests {
  /** Test id -> finished (a result reached the main process). */
  tests: Map<string, boolean>;
}

const KEY = Symbol.for('disagg-bench.run-tests');

function state(): RunTests {
  const holder = globalThis as { [KEY]?: RunTests };
  return (holder[KEY] ??= { tests: new Map() });
}

/** Only the config tests of test-type projects count (not the project's own unit tests). */
export function isRunProject(project: string): boolean {
  return (testTypeNames as readonly string[]).includes(project);
}

export function testCollected(id: string): void {
  if (!state().tests.has(id)) state().tests.set(id, false);
}

export function testFinished(id: string): void {
  state().tests.set(id, true);
}

/** Tests collected whose result has not reached the main process. */
export function unfinishedTests(): string[] {
  return [...state().tests].filter(([, done]) => !done).map(([id]) => id);
}

export function collectedCount(): number {
  return state().tests.size;
}

/** One line naming tests that did not run to their end (the first 20, then a count). */
export function describeNotRun(ids: string[], why: string): string {
  const shown = ids.slice(0, 20).join(', ');
  return `${ids.length} test(s) not run (${why}): ${shown}${ids.length > 20 ? `, ... and ${ids.length - 20} more` : ''}`;
}
