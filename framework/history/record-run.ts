// The run a results.json record belongs to when it carries no run context (a file written before
// records carried one): the run folder its logs are in (`disagg-bench run` keeps each run in
// OUTPUT_PATH/runs/<run id>/, its logs below), else the file's own runs. An OUTPUT_PATH that runs
// wrote into one after another holds each test once per run: in order of start, a run is the
// records up to the first test seen twice. So an import of a run's results.json is one run of all
// its tests, never one run per test, and `history regressions FILE` judges the file's latest run.
// Stable: importing the file again finds the same ids (the store holds each run and test once).
import { createHash } from 'node:crypto';
import { RUNS_FOLDER } from '../results/index/runs-folder.ts';
import type { TestRecord } from '../results/json.ts';

/** The run id a run folder gives a log folder `<root>/runs/<run id>/<logs>/<test id>`, if it is one. */
export function runFolderIdOf(logDir: string | undefined): string | undefined {
  const parts = (logDir ?? '').split(/[\\/]+/).filter(Boolean);
  return parts.length >= 4 && parts.at(-4) === RUNS_FOLDER ? parts.at(-3) : undefined;
}

/** The id of every record of one file: its own run's, else its run folder's, else that of its run in the file. */
export function runIdsOfFile(records: readonly TestRecord[]): (record: TestRecord) => string {
  const loose = records.filter((r) => !r.run && !runFolderIdOf(r.logDir)).sort((a, b) => a.timing.start.localeCompare(b.timing.start));
  const ids = new Map<TestRecord, string>();
  let seen = new Set<string>();
  let id = '';
  for (const r of loose) {
    if (!id || seen.has(r.testId)) {
      // A run is named by its first record (start and host): records a RESUME adds later keep the id.
      id = `import-${createHash('sha1').update(JSON.stringify([r.timing.start, r.host])).digest('hex').slice(0, 16)}`;
      seen = new Set();
    }
    seen.add(r.testId);
    ids.set(r, id);
  }
  return (record) => record.run?.id ?? runFolderIdOf(record.logDir) ?? ids.get(record) ?? '';
}
