// Where runs are kept under OUTPUT_PATH, named once: `disagg-bench run` writes each run into
// runs/<run id>/ (framework/run/run-folder.ts) and the index of runs links into it. A module of its
// own, so the run command does not load the report's page to know a folder's name.
import path from 'node:path';

export const RUNS_FOLDER = 'runs';
export const INDEX_FILE = 'index.html';

/**
 * Where the index of the run writing into `outputPath` goes: the folder above runs/<id>/ for a run
 * of `disagg-bench run` (its OUTPUT_PATH is that folder), else OUTPUT_PATH itself.
 */
export function indexRootOf(outputPath: string, runId: string | undefined): string {
  const parent = path.dirname(outputPath);
  return runId && path.basename(outputPath) === runId && path.basename(parent) === RUNS_FOLDER ? path.dirname(parent) : outputPath;
}
