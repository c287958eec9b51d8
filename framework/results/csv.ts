// OUTPUT_PATH/perf_script_test_results.csv, the file existing dashboards read: the reference's
// columns in its order, one row per metric per label set, the header written once. As in the
// Python version's files, perf_metric holds the VALUE and metric_type the metric's NAME.
//
// Row names: the test type's row name (serving: upstream's `test_benchmark[<id>]`, see its csvInfo)
// + one `_<label>:<value>` per label, concurrency abbreviated `con` (serving rows read
// `test_benchmark[<id>]_con:8` as upstream's result saver writes them; accuracy rows, written only
// with DISAGG_CSV_EXTRA_ROWS, `<id>_dataset:gsm8k_filter:flexible-extract_metric:exact_match_run:1`).
// The command is `<command> --model=<m> --<precision>` plus `--<label>=<value>` per label
// (`--concurrency=8`). Float cells are written as pandas writes them (Python's repr: 100.0, 1e-05).
import { closeSync, openSync, readSync } from 'node:fs';
import { type FileHandle, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import type { Metric } from '../metrics/metric.ts';
import { withFileLock } from './file-lock.ts';
import { appendWholeSync, outputWriteError } from '../../runners/common/append-whole.ts';
import { writeWholeSync } from '../../runners/common/write-whole.ts';
import { splitCsvRecords } from './csv-read.ts';
import type { TestTiming } from './test-timing.ts';
import { DisaggBenchError } from '../../runners/common/errors.ts';
import { pythonFloatRepr } from './python-float.ts';
import type { ErrorCategory } from '../../runners/common/errors.ts';

export const PERF_CSV_FILE = 'perf_script_test_results.csv';

export const PERF_CSV_COLUMNS = [
  'network_name',
  'network_hash',
  'sm_clk',
  'mem_clk',
  'gpu_idx',
  'perf_case_name',
  'test_name',
  'original_test_name',
  'perf_metric',
  'total_time__sec',
  'start_timestamp',
  'end_timestamp',
  'state',
  'command',
  'threshold',
  'absolute_threshold',
  'metric_type',
] as const;

export type PerfCsvColumn = (typeof PERF_CSV_COLUMNS)[number];
export type PerfRow = Record<PerfCsvColumn, string | number>;

export interface PerfTestInfo {
  /** Name the rows are keyed by: the test id, or upstream's `test_benchmark[<id>]` for the serving types. */
  name: string;
  model?: string;
  precision?: string;
  /** First word of the command column; default 'disagg_benchmark'. */
  command?: string;
}

/** Locked clocks and GPU index for the CSV; empty cells when unknown (upstream writes 0 for a GPU without locked clocks). */
export interface GpuClocks {
  smClk?: number;
  memClk?: number;
  gpuIdx?: string | number;
}

const labelKey = (key: string) => (key === 'concurrency' ? 'con' : key);

/** 'YYYY-MM-DD HH:MM:SS' in UTC. */
export function csvTimestamp(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

/** The rows of one test: pure, no I/O. */
export function perfRowsFor(test: PerfTestInfo, metrics: Metric[], timing: TestTiming, gpu: GpuClocks = {}): PerfRow[] {
  const base = [test.command ?? 'disagg_benchmark'];
  if (test.model) base.push(`--model=${test.model}`);
  if (test.precision) base.push(`--${test.precision}`);
  return metrics.map((metric) => {
    const labels = Object.entries(metric.labels);
    const name = test.name + labels.map(([k, v]) => `_${labelKey(k)}:${v}`).join('');
    const command = [...base, ...labels.map(([k, v]) => `--${k}=${v}`)].join(' ');
    return {
      network_name: name,
      network_hash: name,
      sm_clk: gpu.smClk ?? '',
      mem_clk: gpu.memClk ?? '',
      gpu_idx: gpu.gpuIdx ?? '',
      perf_case_name: name,
      test_name: name,
      original_test_name: name,
      // upstream's CSV holds the figure as its client printed it (a full-precision value is ours)
      perf_metric: metric.printed ?? metric.value,
      total_time__sec: Number(timing.durationSec.toFixed(6)),
      start_timestamp: csvTimestamp(timing.start),
      end_timestamp: csvTimestamp(timing.end),
      state: 'valid',
      command,
      threshold: '',
      absolute_threshold: '',
      metric_type: metric.name,
    };
  });
}

/**
 * The metrics a test's rows hold: with `names`, those metrics in that order within each label set
 * (a run of consecutive metrics with the same labels: one concurrency's result), label sets in the
 * order they came; the others after them only when `extra`. Without `names`, every metric.
 */
export function csvMetrics(metrics: Metric[], names: string[] | undefined, extra = false): Metric[] {
  if (!names) return metrics;
  const rank = new Map(names.map((name, i) => [name, i]));
  const chosen: Metric[] = [];
  let group: Metric[] = [];
  let key: string | undefined;
  const flush = () => chosen.push(...group.sort((a, b) => rank.get(a.name)! - rank.get(b.name)!));
  for (const metric of metrics) {
    if (!rank.has(metric.name)) continue;
    const labels = JSON.stringify(metric.labels);
    if (labels !== key) {
      flush();
      group = [];
      key = labels;
    }
    group.push(metric);
  }
  flush();
  return extra ? [...chosen, ...metrics.filter((m) => !rank.has(m.name))] : chosen;
}

export class CsvHeaderMismatchError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  constructor(
    override readonly file: string,
    override readonly expected: string,
    readonly found: string,
  ) {
    super(
      `refusing to append to ${file}: its header differs from this version's columns\n` +
        `  expected: ${expected}\n  found:    ${found}\n` +
        `Move the file aside or point OUTPUT_PATH to another folder; the file was not modified.`,
      { file, place: 'its header', expected },
    );
    this.name = 'CsvHeaderMismatchError';
  }
}

/** Columns pandas writes as floats (upstream's `float(metric_value)`, `total_seconds()`). */
const FLOAT_COLUMNS = new Set<number>(['perf_metric', 'total_time__sec'].map((c) => PERF_CSV_COLUMNS.indexOf(c as PerfCsvColumn)));

// Numbers stay numbers so that negative values are not taken for formulas (csv-stringify escapes
// strings only); every text cell starting with = + - @ (or tab/CR) gets a leading quote.
const toCsv = (records: (string | number)[][]) =>
  stringify(records, {
    escape_formulas: true,
    record_delimiter: 'unix',
    eof: true,
    cast: { number: (value, context) => (context.index !== undefined && FLOAT_COLUMNS.has(context.index) ? pythonFloatRepr(value) : String(value)) },
  });

const HEADER_LINE = toCsv([[...PERF_CSV_COLUMNS]]).trimEnd();

/** First line and whether the file ends with a newline; undefined when missing or empty. */
async function inspect(file: string): Promise<{ header: string; endsWithNewline: boolean } | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return undefined;
    const head = Buffer.alloc(Math.min(size, 64 * 1024));
    await handle.read(head, 0, head.length, 0);
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    const text = head.toString('utf8').replace(/^\uFEFF/, '');
    return { header: text.split('\n')[0].replace(/\r$/, ''), endsWithNewline: last[0] === 0x0a };
  } finally {
    await handle.close();
  }
}

/**
 * Which rows of the CSV a test's result wrote: their names and the start/end timestamps they carry,
 * as they are in the file (formula escaping included). Kept in its results.json record, so that a
 * replay of the same job, or a resumed run saving a result it was killed while saving, finds
 * exactly these rows to replace: never another job's rows of the same test, never another test's.
 */
export interface CsvRowsIdentity {
  names: string[];
  start: string;
  end: string;
}

const NAME = PERF_CSV_COLUMNS.indexOf('network_name');
const START = PERF_CSV_COLUMNS.indexOf('start_timestamp');
const END = PERF_CSV_COLUMNS.indexOf('end_timestamp');

/** The identity of rows as they will be in the file; undefined for no rows. */
export function rowsIdentity(rows: PerfRow[]): CsvRowsIdentity | undefined {
  const records = splitCsvRecords(toCsv(rows.map((row) => PERF_CSV_COLUMNS.map((c) => row[c]))));
  if (records.length === 0) return undefined;
  return { names: records.map((r) => r.cells[NAME]), start: records[0].cells[START], end: records[0].cells[END] };
}

function belongsTo(identity: CsvRowsIdentity, names: Set<string>) {
  return (cells: string[]) => cells[START] === identity.start && cells[END] === identity.end && names.has(cells[NAME]);
}

/**
 * Why an existing CSV cannot take this version's rows (another header), checked before a run
 * submits anything; undefined when it can, or when there is no file yet.
 */
export function perfCsvHeaderProblem(file: string): string | undefined {
  let head: string;
  try {
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(64 * 1024);
      head = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : `cannot be read (${(error as NodeJS.ErrnoException).code})`;
  }
  const header = head.replace(/^\uFEFF/, '').split('\n')[0].replace(/\r$/, '');
  if (head.length === 0 || header === HEADER_LINE) return undefined;
  return `its header is not this version's columns (found: ${header.length > 120 ? `${header.slice(0, 120)}...` : header})`;
}

/**
 * Appends rows to OUTPUT_PATH/perf_script_test_results.csv under the file's lock, writing the
 * header first when the file is new. Returns the file's path.
 */
export async function appendPerfRows(outputPath: string, rows: PerfRow[]): Promise<string> {
  return (await replacePerfRows(outputPath, undefined, rows)).file;
}

/**
 * Writes a test's rows in place of the rows `earlier` names (none: a plain append), under the
 * file's lock. Without earlier rows in the file this is one append, all or nothing; with them the
 * file is rewritten whole (a new file renamed over it), every other line as it was.
 */
export async function replacePerfRows(outputPath: string, earlier: CsvRowsIdentity | undefined, rows: PerfRow[]): Promise<{ file: string; removed: number }> {
  const file = path.join(outputPath, PERF_CSV_FILE);
  let removed = 0;
  await withFileLock(file, async () => {
    const existing = await inspect(file).catch((error: unknown) => {
      throw outputWriteError(file, error); // a folder or an unreadable file: named, with why
    });
    if (existing && existing.header !== HEADER_LINE) throw new CsvHeaderMismatchError(file, HEADER_LINE, existing.header);
    const rowsText = toCsv(rows.map((row) => PERF_CSV_COLUMNS.map((c) => row[c])));
    if (existing && earlier && earlier.names.length > 0) {
      const records = splitCsvRecords(await readFile(file, 'utf8'));
      const isEarlier = belongsTo(earlier, new Set(earlier.names));
      const kept = records.filter((r, i) => i === 0 || !isEarlier(r.cells));
      removed = records.length - kept.length;
      if (removed > 0) {
        const body = kept.map((r) => r.text).join('');
        writeWholeSync(file, `${body}${body.endsWith('\n') ? '' : '\n'}${rowsText}`);
        return;
      }
    }
    if (rows.length === 0) {
      if (!existing) appendWholeSync(file, `${HEADER_LINE}\n`);
      return;
    }
    let text = rowsText;
    if (!existing) text = `${HEADER_LINE}\n${text}`;
    // A writer killed mid-line left a partial row: start ours on a fresh line.
    else if (!existing.endsWithNewline) text = `\n${text}`;
    appendWholeSync(file, text); // all or nothing, under the lock: every reader sees whole rows
  });
  return { file, removed };
}
