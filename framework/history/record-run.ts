// The run a results.json record belongs to when it carries no run context (a file written before
// records carried one): the run folder its logs are in (`disagg-bench run` keeps each run in
// OUTPUT_PATH/runs/<run id>/, its logs below), else one run for the whole file. So an import of a
// run's results.json is one run of all its tests, never one run per test, and `history
// regressions FILE` judges the file's latest run. Stable: importing the file again finds the same
// ids (the store holds each run and test once).
import { createHash } from 'node:crypto';
import { RUNS_FOLDER } from '../results/index/runs-folder.ts';
import type { TestRecord } from '../results/json.ts';

/** The run id a run folder gives a log folder `<root>/runs/<run id>/<logs>/<test id>`, if it is one. */
export function runFolderIdOf(logDir: string | undefined): string | undefined {
  const parts = (logDir ?? '').split(/[\\/]+/).filter(Boolean);
  return parts.length >= 4 && parts.at(-4) === RUNS_FOLDER ? parts.at(-3) : undefined;
}

/** The id of every record of one file: its own run's, else its run folder's, else the file's one id. */
export function runIdsOfFile(records: readonly TestRecord[]): (record: TestRecord) => string {
  const loose = records.filter((r) => !r.run && !runFolderIdOf(r.logDir));
  // The file's earliest record (and its host) names it: records a later RESUME adds keep the id.
  const first = loose.reduce<TestRecord | undefined>((min, r) => (!min || r.timing.start < min.timing.start ? r : min), undefined);
  const fileId = first ? `import-${createHash('sha1').update(JSON.stringify([first.timing.start, first.host])).digest('hex').slice(0, 16)}` : '';
  return (record) => record.run?.id ?? runFolderIdOf(record.logDir) ?? fileId;
}
