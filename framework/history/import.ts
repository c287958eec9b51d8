// `history import`: results.json files and perf_script_test_results.csv files (upstream's or
// this project's) into the history, every record keeping its own dates. A record that carries its
// run context (written by a run of this version) keeps it; one without gets a stable run id (its
// run folder's, else its run's in the file: record-run.ts; a CSV row group's, upstream-csv.ts
// importedRunId; importing twice adds nothing), the kind and label asked for, and the identity of
// its config under WORK_DIR when there is one.
import { READ_LIMITS, readTextFileSync } from '../../runners/common/read-file.ts';
import { readResultsRecords } from '../results/report/load.ts';
import { holdsResult, type RecordRunContext, type TestRecord } from '../results/json.ts';
import type { ConfigIdentity } from './config-identity.ts';
import type { HistoryEntry } from './rows.ts';
import { importedRunId, readUpstreamCsv } from './upstream-csv.ts';
import { readPending } from './pending.ts';
import { runIdsOfFile } from './record-run.ts';
import { DisaggBenchError } from '../../runners/common/errors.ts';

export class ImportFileError extends DisaggBenchError {
  override name = 'ImportFileError';
  constructor(file: string) {
    super(`${file}: no history entry in it; expected one JSON entry per line, as \`disagg-bench history export --format history\` writes`, { file });
  }
}

export interface ImportOptions {
  kind: RecordRunContext['kind'];
  label?: string;
  /** GPU type for CSV rows (the file has none). */
  gpuType?: string;
  identityOf: (testId: string) => ConfigIdentity | undefined;
}

export interface ImportedFile {
  file: string;
  entries: HistoryEntry[];
  /** Test ids imported without an identity (no config of that id under WORK_DIR). */
  withoutConfig: string[];
}

/** CSV by its header, results.json otherwise. */
const isCsv = (file: string) => /\.csv$/i.test(file) || readTextFileSync(file, READ_LIMITS.record).slice(0, 200).startsWith('network_name,');
/** `history export --format history` (and the pending file): one history entry per line. */
const isHistoryLines = (file: string) => /\.jsonl$/i.test(file);

export async function readImportFile(file: string, options: ImportOptions): Promise<ImportedFile> {
  if (isHistoryLines(file)) {
    const entries = readPending(file);
    if (entries.length === 0 && readTextFileSync(file, READ_LIMITS.record).trim() !== '') throw new ImportFileError(file);
    return { file, entries, withoutConfig: [] };
  }
  const csv = isCsv(file);
  const records: TestRecord[] = csv ? readUpstreamCsv(file, { gpuType: options.gpuType }) : await readResultsRecords(file);
  // A results.json is one run per run (record-run.ts); upstream's CSV accumulates every run's rows
  // with nothing to tell the runs apart: one run per row group (its test and times).
  const runIdOf = csv ? importedRunId : runIdsOfFile(records);
  const withoutConfig = new Set<string>();
  // A skipped test's record holds no result (results/json.ts holdsResult): nothing to remember.
  const entries = records.filter(holdsResult).map((record): HistoryEntry => {
    if (record.run) return { record, run: record.run, source: `import ${file}` };
    const config = options.identityOf(record.testId);
    if (!config) withoutConfig.add(record.testId);
    const run: RecordRunContext = {
      id: runIdOf(record),
      kind: options.kind,
      ...(options.label ? { label: options.label } : {}),
      ...(config?.identity ? { identity: config.identity } : {}),
      ...(config?.thresholds && Object.keys(config.thresholds).length ? { thresholds: config.thresholds } : {}),
    };
    return { record: { ...record, run }, run, source: `import ${file}` };
  });
  return { file, entries, withoutConfig: [...withoutConfig] };
}
