// Writes index.html into the folder that keeps the runs, through a temporary file so a reader
// never sees half a page.
import path from 'node:path';
import { writeWhole } from '../../../runners/common/write-whole.ts';
import { indexPageHtml } from './index-page.ts';
import { INDEX_FILE, runIndexRows, type HistoryRun, type RunIndexRow } from './run-index.ts';

export interface WriteIndexInput {
  /** The folder of the runs (OUTPUT_PATH, holding runs/<id>/): index.html goes there. */
  root: string;
  runs: readonly HistoryRun[];
  /** The history store, as messages name it. */
  store: string;
  now?: Date;
}

export async function writeRunIndex(input: WriteIndexInput): Promise<{ file: string; rows: RunIndexRow[] }> {
  const rows = runIndexRows(input.root, input.runs);
  const file = path.join(input.root, INDEX_FILE);
  await writeWhole(file, indexPageHtml({ rows, store: input.store, generatedAt: input.now }));
  return { file, rows };
}
