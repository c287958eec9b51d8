// `disagg-bench history import [<results.json|folder|perf_script_test_results.csv|history.jsonl>...]`
import { configIdentities } from '../../history/config-identity.ts';
import { readImportFile, type ImportedFile } from '../../history/import.ts';
import { clearPending, keepAside, pendingFileOf, readPending } from '../../history/pending.ts';
import { isHistoryStoreError } from '../../history/errors.ts';
import { EnvironmentError } from '../../../runners/common/errors.ts';
import { RUN_KINDS, type RunKind } from '../../settings.ts';
import { judgeStoredRuns } from '../../history/alert-run.ts';
import { alertsLine } from '../../history/run-end.ts';
import { historySettings, onStore, parseOptions, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history import [<results.json|folder|perf_script_test_results.csv|history.jsonl>...] [--kind post-merge|pre-merge|local] [--label L] [--gpu-type T]
  Appends every record to the history (DISAGG_HISTORY), each with its own dates, and first the
  records a run kept aside because the store was busy or down (the pending file beside it).
  Each imported run is then judged against the runs before it, as a run's end judges itself: its
  verdict is kept with its records and a post-merge run opens and closes alerts (history alerts).
  Records written by a run of this version, and \`history export --format history\` files (any
  store's: this is how a history moves between DuckDB and PostgreSQL), keep their run; others get
  a stable run id (importing twice adds nothing): their run folder's (runs/<run id>/), else one
  per run of the file (in order of start, a test seen a second time starts the next run; a CSV:
  one per test and time, its rows name no run), the kind and label given, and the identity of
  their config under WORK_DIR when it is there.
  A store held by another process (or a server out of reach): the files' records are kept in the
  pending file too, appended by the next run or import; the command says so and exits 3.
  CSV rows may be named as upstream's (test_benchmark[<id>]_con:<N>) or as this project's (<id>_con:<N>).
  --kind      run kind of records without one (default DISAGG_RUN_KIND, else local: only post-merge records feed baselines)
  --label     DISAGG_RUN_LABEL of records without one
  --gpu-type  GPU type of CSV rows (the file has none)`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, { kind: { type: 'string' }, label: { type: 'string' }, 'gpu-type': { type: 'string' } }, usage);
  if (values.help) return console.log(usage), 0;
  if (values.kind !== undefined && !(RUN_KINDS as readonly string[]).includes(values.kind)) throw new UsageError(`--kind ${JSON.stringify(values.kind)}: expected ${RUN_KINDS.join(', ')}`);
  const settings = historySettings();
  const pendingFile = pendingFileOf(settings.history.target, settings.outputPath);
  const pending = readPending(pendingFile);
  if (positionals.length === 0 && pending.length === 0) throw new UsageError(`name at least one file to import (no records are pending in ${pendingFile ?? 'the store'})\n${usage}`);
  let identities: ReturnType<typeof configIdentities> | undefined;
  // Loading the configs costs a second: only records without a run context need them.
  const identityOf = (testId: string) => (identities ??= configIdentities(settings.workDir, settings.history.thresholdPercent))(testId);
  const files: ImportedFile[] = [];
  for (const file of positionals) {
    files.push(await readImportFile(file, { kind: (values.kind as RunKind | undefined) ?? settings.history.runKind, label: values.label, gpuType: values['gpu-type'], identityOf }));
  }
  const fromFiles = files.flatMap((f) => f.entries);
  const entries = [...pending, ...fromFiles];
  const result = await onStore(
    settings,
    async (store) => {
      const appended = await store.append(entries);
      // Imported runs are judged as a run's end judges itself, oldest first: their verdicts kept, their alerts opened.
      const judged = await judgeStoredRuns(store, [...new Set(entries.map((e) => e.run.id))], settings);
      return { ...appended, judged, store: store.description };
    },
    { create: true, lockWaitSec: settings.history.gate.lockWaitSec },
  ).catch((error: unknown) => {
    if (!isHistoryStoreError(error)) throw error;
    // The pending records are still in their file; the files' join them when the store is only busy or out of reach.
    throw new EnvironmentError(keepAside(error, settings.history.target, pendingFile, fromFiles));
  });
  clearPending(pendingFile);
  if (pending.length) console.log(`${pendingFile}: ${pending.length} pending record(s)`);
  for (const f of files) {
    console.log(`${f.file}: ${f.entries.length} record(s)`);
    if (f.withoutConfig.length) console.log(`  no config under ${settings.workDir} for ${f.withoutConfig.join(', ')}: imported without a config identity (they match runs of the same id, GPU type and labels only if those runs' configs add no identity)`);
  }
  console.log(`${result.store}: ${result.tests} record(s) and ${result.metrics} metric value(s) appended, ${result.alreadyThere} already there${result.judged.judged ? `; ${result.judged.judged} run(s) judged${alertsLine(result.judged)}` : ''}`);
  return 0;
}
