// The index of runs (OUTPUT_PATH/index.html, results/index/) from the history: the runs are read
// in a read-only session, so a notebook or dashboard holding the store read-only does not stop it.
// No history, or a store that cannot be read, is one line; the index stays as it was.
import type { Settings } from '../settings.ts';
import { writeRunIndex } from '../results/index/write-index.ts';
import type { RunIndexRow } from '../results/index/run-index.ts';
import { isHistoryStoreError } from './errors.ts';
import { type RunSummary, withHistory } from './store.ts';
import { describeTarget } from './target.ts';

export interface RunIndexOutcome {
  /** index.html, when written. */
  file?: string;
  rows?: RunIndexRow[];
  /** One line saying what was written, or why nothing was. */
  message: string;
  /** Nothing written because there is no history (yet, or DISAGG_HISTORY=off): nothing wrong. */
  noHistory?: boolean;
}

/** Writes `root`/index.html from the history DISAGG_HISTORY names. */
export async function writeIndexFromHistory(settings: Settings, root: string): Promise<RunIndexOutcome> {
  const target = settings.history.target;
  if (target.kind === 'off') return { message: 'index: no history to list runs from (DISAGG_HISTORY=off)', noHistory: true };
  let read: { runs: RunSummary[]; store: string };
  try {
    read = await withHistory(target, async (store) => ({ runs: await store.runs(), store: store.description }), { lockWaitSec: settings.history.gate.lockWaitSec });
  } catch (error) {
    if (!isHistoryStoreError(error)) throw error;
    if (error.empty) return { message: `index: no history yet in ${describeTarget(target)}: a run appends to it when it ends`, noHistory: true };
    return { message: `index: not written: ${error.message}` };
  }
  if (read.runs.length === 0) return { message: `index: no history yet in ${read.store}: a run appends to it when it ends`, noHistory: true };
  const { file, rows } = await writeRunIndex({ root, runs: read.runs, store: read.store });
  return { file, rows, message: `index of runs: ${file} (${rows.length} run(s))` };
}
