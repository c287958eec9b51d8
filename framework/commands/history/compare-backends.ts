// `disagg-bench history compare-backends [--default-backend NIXL] [--threshold 5] [--html f]`
import { writeFile } from 'node:fs/promises';
import { stringify } from 'csv-stringify/sync';
import { BACKEND_CSV_COLUMNS, backendCsvRows, backendHtml, compareBackends, rowsOfRecords, type BackendRow } from '../../history/compare-backends.ts';
import { resolveRun } from '../../history/run-ref.ts';
import { knownMetric, readUpstreamCsv } from '../../history/upstream-csv.ts';
import { historySettings, onStore, parseOptions, percentOption, UsageError } from './common.ts';
import { printJson } from '../support/json-output.ts';

export const usage = `usage: disagg-bench history compare-backends [--run ID|LABEL | --csv-path perf_script_test_results.csv]
       [--default-backend NIXL] [--threshold 5] [--output pairs.csv] [--html report.html] [--json]
  The default KV-cache transfer backend against UCX, as upstream's compare_backends.py: disagg_perf
  tests whose names differ only in ccb-<BACKEND> are paired per metric (ccb-DEFAULT = the default
  backend); a pair fails when the default backend is slower than UCX by more than the threshold.
  Exit 1 when any pair fails. Source: the latest record of every test in the history, one run
  (--run), or upstream's CSV (--csv-path, also --csv: its first row of each test and metric, as
  upstream reads it).
  --default-backend  the backend ccb-DEFAULT means and the one judged (default NIXL)
  --threshold        percent (default 5)
  --output           the pairs as CSV (upstream's columns); default: printed
  --html             a self-contained HTML page of the pairs
  --json             the comparison as one JSON object on standard output (pairs, counts), nothing else`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(
    argv,
    { run: { type: 'string' }, 'csv-path': { type: 'string' }, csv: { type: 'string' }, 'default-backend': { type: 'string' }, threshold: { type: 'string' }, output: { type: 'string' }, html: { type: 'string' }, json: { type: 'boolean' } },
    usage,
  );
  if (values.help) return console.log(usage), 0;
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}\n${usage}`);
  const threshold = percentOption('threshold', values.threshold, 5);
  const csv = values['csv-path'] ?? values.csv;
  let rows: BackendRow[];
  if (csv) {
    rows = rowsOfRecords(readUpstreamCsv(csv)).map((row) => ({ ...row, higherIsBetter: knownMetric(row.metric).higherIsBetter }));
  } else {
    const settings = historySettings();
    rows = await onStore(settings, async (store) => rowsOfRecords(values.run ? (await resolveRun(values.run, async () => store)).records : await store.latestRecords()));
  }
  const result = compareBackends(rows, { threshold, defaultBackend: values['default-backend'] });
  const failed = result.pairs.filter((p) => p.status === 'Fail').length;
  if (values.json) {
    if (values.html) await writeFile(values.html, backendHtml(result, new Date()));
    printJson({ ...result, failed });
    return failed > 0 ? 1 : 0;
  }
  console.log(`=== Backend Comparison Statistics ===\nDefault backend: ${result.defaultBackend}\nComparison pairs: ${result.pairs.length}\nSingle-backend cases (skipped): ${result.singleBackendSkipped}${result.unmeasuredSkipped ? `\nPairs with a figure printed rounded to zero (skipped, no measurement): ${result.unmeasuredSkipped}` : ''}`);
  if (result.pairs.length === 0) {
    console.log('No backend comparison pairs found in disagg_perf tests: nothing to compare');
    return 0;
  }
  const table = [BACKEND_CSV_COLUMNS, ...backendCsvRows(result)];
  if (values.output) await writeFile(values.output, stringify(table, { escape_formulas: true, record_delimiter: 'unix' }));
  else console.log(stringify(table, { escape_formulas: true, record_delimiter: 'unix' }).trimEnd());
  if (values.html) await writeFile(values.html, backendHtml(result, new Date()));
  console.log(`Threshold: ${threshold}%\nTotal: ${result.pairs.length}\nPass: ${result.pairs.length - failed}\nFail: ${failed} (${result.defaultBackend} slower than UCX by more than ${threshold}%)`);
  return failed > 0 ? 1 : 0;
}
