// perf_script_test_results.csv (upstream's layout, which this project writes too) as records to
// import into the history. Row names come in both namings: upstream's disagg result saver writes
// `test_benchmark[<test id>]_con:<N>`, this project `<test id>_con:<N>` (accuracy rows
// `<id>_dataset:gsm8k_filter:strict-match_metric:exact_match_run:1`). The value is perf_metric,
// the metric's name metric_type, the time start_timestamp/end_timestamp (UTC). Rows of one test
// with the same start and end become one record. Units and directions are not in the file: known
// serving metrics get theirs (metrics/extractors/serving-format.ts), others none (never judged).
import { createHash } from 'node:crypto';
import { READ_LIMITS, readTextFileSync } from '../../runners/common/read-file.ts';
import { PERF_CSV_COLUMNS } from '../results/csv.ts';
import { splitCsvRecords } from '../results/csv-read.ts';
import type { TestRecord } from '../results/json.ts';
import type { Metric } from '../metrics/metric.ts';
import { SERVING_SUMMARY_FIELDS } from '../../runners/common/serving-format.ts';
import { DisaggBenchError } from '../../runners/common/errors.ts';

export class UpstreamCsvError extends DisaggBenchError {
  override name = 'UpstreamCsvError';
  constructor(message: string, where: { file: string; place: string; expected: string }) {
    super(message, where);
  }
}

/** The file's rows as cells (results/csv-read.ts: RFC 4180, LF or CRLF line ends), blank lines dropped. */
function csvRows(text: string): string[][] {
  return splitCsvRecords(text).map((r) => r.cells).filter((r) => !(r.length === 1 && r[0] === ''));
}

const LABEL_START = /_(?=[A-Za-z][A-Za-z0-9]*:)/;

/** `test_benchmark[<id>]_con:8` or `<id>_con:8` -> id and labels ({ concurrency: 8 }). */
export function parseRowName(name: string): { testId: string; labels: Metric['labels'] } {
  const wrapped = /^test_benchmark\[(.+)\](.*)$/.exec(name);
  let testId: string;
  let rest: string;
  if (wrapped) [testId, rest] = [wrapped[1], wrapped[2]];
  else {
    const at = name.search(LABEL_START);
    [testId, rest] = at < 0 ? [name, ''] : [name.slice(0, at), name.slice(at)];
  }
  const labels: Metric['labels'] = {};
  for (const part of rest.split(LABEL_START).filter(Boolean)) {
    const [key, ...value] = part.replace(/^_/, '').split(':');
    const text = value.join(':');
    labels[key === 'con' ? 'concurrency' : key] = /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
  }
  return { testId, labels };
}

const LATENCY = /^(DISAGG_)?SERVER_((MEAN|MEDIAN|STD|MIN|MAX|P\d+(_\d+)?)_)?(TTFT|TPOT|ITL|E2EL)$/;

/** Unit and direction of a metric known by name. */
export function knownMetric(name: string): Pick<Metric, 'unit' | 'higherIsBetter'> {
  const field = SERVING_SUMMARY_FIELDS.find((f) => f.metric === name);
  if (field) return { unit: field.unit, ...(field.higherIsBetter !== undefined ? { higherIsBetter: field.higherIsBetter } : {}) };
  if (LATENCY.test(name)) return { unit: 'ms', higherIsBetter: false };
  return { unit: '' };
}

const csvTime = (text: string) => {
  const t = Date.parse(`${text.trim().replace(' ', 'T')}Z`);
  return Number.isFinite(t) ? t : undefined;
};

/** The records of a CSV file; every bad row is named with its line. */
export function readUpstreamCsv(file: string, options: { gpuType?: string } = {}): TestRecord[] {
  const rows = csvRows(readTextFileSync(file, READ_LIMITS.record).replace(/^\uFEFF/, ''));
  const [header, ...body] = rows;
  const columns = header?.map((h) => h.trim()) ?? [];
  const missing = (['network_name', 'perf_metric', 'start_timestamp', 'end_timestamp', 'metric_type'] as const).filter((c) => !columns.includes(c));
  if (missing.length > 0) {
    throw new UpstreamCsvError(`${file}: not a perf_script_test_results.csv (its header lacks ${missing.join(', ')}; expected the columns ${PERF_CSV_COLUMNS.join(',')})`, {
      file, place: 'its header', expected: `the columns ${PERF_CSV_COLUMNS.join(',')}`,
    });
  }
  const col = (row: string[], name: string) => row[columns.indexOf(name)] ?? '';
  const records = new Map<string, TestRecord>();
  body.forEach((row, k) => {
    const line = k + 2;
    const name = col(row, 'network_name') || col(row, 'test_name');
    const value = Number(col(row, 'perf_metric'));
    const metric = col(row, 'metric_type').trim();
    const start = csvTime(col(row, 'start_timestamp'));
    const end = csvTime(col(row, 'end_timestamp'));
    if (!name || !metric || !Number.isFinite(value) || start === undefined || end === undefined) {
      throw new UpstreamCsvError(`${file}:${line}: expected a row name, a numeric perf_metric, a metric_type and timestamps 'YYYY-MM-DD HH:MM:SS'; found ${JSON.stringify(row.join(','))}`, {
        file, place: `${file}:${line}`, expected: 'a row name, a numeric perf_metric, a metric_type and timestamps',
      });
    }
    const { testId, labels } = parseRowName(name);
    const key = JSON.stringify([testId, start, end]);
    if (!records.has(key)) {
      const [type, category] = testId.split('_');
      records.set(key, {
        testId,
        type: type ?? '',
        category: category ?? '',
        configPath: '',
        jobId: null,
        verdict: 'passed', // the file holds rows of passing tests only
        failures: [],
        metrics: [],
        timing: { start: new Date(start).toISOString(), end: new Date(end).toISOString(), durationSec: Number(col(row, 'total_time__sec')) || (end - start) / 1000 },
        host: '',
        ...(options.gpuType ? { gpuType: options.gpuType } : {}),
      });
    }
    records.get(key)!.metrics.push({ name: metric, value, labels, ...knownMetric(metric) });
  });
  return [...records.values()];
}

/** A stable run id for a record that came without one: re-importing it finds the same id. */
export function importedRunId(record: TestRecord): string {
  const hash = createHash('sha1').update(JSON.stringify([record.testId, record.jobId, record.timing.start, record.timing.end])).digest('hex');
  return `import-${hash.slice(0, 16)}`;
}
