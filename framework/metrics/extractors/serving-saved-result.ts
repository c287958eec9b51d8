// The serving figures at full precision. benchmark_serving prints its result block rounded
// (`{:<10.2f}`: `Median TTFT (ms): 12.34`; energy `.4f`) and, with `--save-result` (which every
// client preset passes), writes the same figures unrounded to <result_dir>/result.json, where
// result_dir is concurrency_<c>/ beside the bench log. Each figure the extractor marked rounded is
// replaced by the file's value when the file holds it: the metric then names its source and keeps
// the print (Metric.printed) for upstream's CSV, which is filled from the print. Otherwise the print
// stays, marked rounded. No file (a client that saves none): the prints, silently. A file that
// does not read, or whose figures are not the prints unrounded (a folder left from another run, a
// second run at the same concurrency), is one problem naming the file, and that concurrency keeps
// its prints: a figure is never taken from a file that contradicts the log.
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { ExtractResult, Metric } from '../metric.ts';
import { FileReadError, READ_LIMITS, readTextFile } from '../../../runners/common/read-file.ts';

/** The file the client writes per concurrency (the presets' `--result-filename result.json`). */
export const SAVED_RESULT_FILE = 'result.json';

/** Where each summary figure lies in result.json (benchmark_serving's keys; the first found counts). */
const SUMMARY_KEYS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  SERVER_DURATION: [['duration']],
  SERVER_REQUEST_THROUGHPUT: [['request_throughput']],
  // upstream's key carries a colon (`"request_goodput:"`); written null without --goodput
  SERVER_REQUEST_GOODPUT: [['request_goodput:'], ['request_goodput']],
  SERVER_OUTPUT_TOKEN_THROUGHPUT: [['output_throughput']],
  SERVER_TOTAL_TOKEN_THROUGHPUT: [['total_token_throughput']],
  SERVER_USER_THROUGHPUT: [['user_throughput']],
  SERVER_TOTAL_ENERGY: [['energy', 'total_energy_j']],
  SERVER_OUTPUT_TOKENS_PER_SECOND_PER_WATT: [['energy', 'output_tps_per_w']],
  SERVER_TOTAL_GPU_POWER: [['energy', 'total_gpu_power_w']],
  // counts are printed exact; compared only, to tell a file of another run
  SERVER_SUCCESSFUL_REQUESTS: [['completed']],
  SERVER_TOTAL_INPUT_TOKENS: [['total_input_tokens']],
  SERVER_TOTAL_GENERATED_TOKENS: [['total_output_tokens']],
};

const STATISTIC = /^SERVER_(MEAN|MEDIAN|STD|MIN|MAX|P\d+(?:_\d+)?)_(TTFT|TPOT|ITL|E2EL|AVG_DECODED_TOKENS_PER_ITER)$/;

/**
 * The key paths of a metric in result.json: process_one_metric's `<stat>_<figure>_ms` (P99.9 as
 * `p99.9`), and for decoded tokens per iteration (no unit) also the nested
 * `avg_decoded_tokens_per_iter.{mean,...,percentiles.p99}`.
 */
export function savedResultKeys(metric: string): readonly (readonly string[])[] {
  const summary = SUMMARY_KEYS[metric];
  if (summary) return summary;
  const stat = STATISTIC.exec(metric);
  if (!stat) return [];
  const word = stat[1].toLowerCase().replace(/^(p\d+)_(\d+)$/, '$1.$2');
  if (stat[2] !== 'AVG_DECODED_TOKENS_PER_ITER') return [[`${word}_${stat[2].toLowerCase()}_ms`]];
  const nested = word.startsWith('p') ? ['avg_decoded_tokens_per_iter', 'percentiles', word] : ['avg_decoded_tokens_per_iter', word];
  return [[`${word}_avg_decoded_tokens_per_iter`], nested];
}

function lookUp(json: unknown, keys: readonly string[]): unknown {
  let at = json;
  for (const key of keys) {
    if (at === null || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** The figure's number in the file and its key, or undefined where the file holds none (null, absent, NaN). */
function savedValue(json: unknown, metric: string): { value: number; key: string } | undefined {
  for (const keys of savedResultKeys(metric)) {
    const value = lookUp(json, keys);
    if (typeof value === 'number' && Number.isFinite(value)) return { value, key: keys.join('.') };
  }
  return undefined;
}

/** The print is the saved value rounded to its step (half a step either way, and a little for binary). */
function printedFrom(metric: Metric, saved: number): boolean {
  const step = metric.rounded ?? 0;
  return Math.abs(saved - metric.value) <= step / 2 + Math.max(Math.abs(saved), 1) * 1e-9;
}

/** Python's json.dump writes NaN and Infinity bare; they are read as no value (null). */
function parsePythonJson(text: string): unknown {
  return JSON.parse(text.replace(/([:[,]\s*)-?(?:NaN|Infinity)(?=\s*[,}\]])/g, '$1null'));
}

type Read = { json: unknown } | { missing: true } | { problem: string };

async function readSavedResult(file: string): Promise<Read> {
  try {
    await lstat(file);
  } catch {
    return { missing: true };
  }
  let text: string;
  try {
    text = await readTextFile(file, READ_LIMITS.log);
  } catch (error) {
    return { problem: error instanceof FileReadError ? error.reason : `cannot be read: ${(error as Error).message}` };
  }
  try {
    const json = parsePythonJson(text);
    if (json === null || typeof json !== 'object' || Array.isArray(json)) return { problem: 'is JSON but no object of figures' };
    return { json };
  } catch (error) {
    return { problem: `is not JSON (${(error as Error).message}; cut off while the client wrote it?)` };
  }
}

/**
 * The serving extractor's metrics with every rounded figure of a concurrency whose
 * concurrency_<c>/result.json (beside `logFile`, relative to `logDir`) holds it at full precision
 * replaced by that value; the problems say which files could not be used and why.
 */
export async function exactServingFigures(result: ExtractResult, logDir: string, logFile: string): Promise<ExtractResult> {
  const problems = [...result.problems];
  const byConcurrency = new Map<number, Metric[]>();
  for (const metric of result.metrics) {
    const c = Number(metric.labels.concurrency);
    if (!Number.isInteger(c)) continue;
    const here = byConcurrency.get(c);
    if (here) here.push(metric);
    else byConcurrency.set(c, [metric]);
  }
  const exact = new Map<Metric, Metric>();
  for (const [concurrency, metrics] of byConcurrency) {
    if (!metrics.some((m) => m.rounded !== undefined)) continue;
    const relative = path.join(path.dirname(logFile), `concurrency_${concurrency}`, SAVED_RESULT_FILE);
    const read = await readSavedResult(path.join(logDir, relative));
    if ('missing' in read) continue;
    const keep = `the printed figures of concurrency ${concurrency} are recorded, marked rounded`;
    if ('problem' in read) {
      problems.push(`${relative} ${read.problem}; ${keep}`);
      continue;
    }
    const found = metrics.flatMap((m) => {
      const saved = savedValue(read.json, m.name);
      return saved ? [{ metric: m, ...saved }] : [];
    });
    const disagreeing = found.filter((f) => (f.metric.rounded === undefined ? f.value !== f.metric.value : !printedFrom(f.metric, f.value)));
    if (disagreeing.length > 0) {
      const [first] = disagreeing;
      const more = disagreeing.length > 1 ? ` (and ${disagreeing.length - 1} more figure${disagreeing.length > 2 ? 's' : ''})` : '';
      problems.push(
        `${relative}: ${first.metric.name} is ${first.value} there but ${first.metric.value} in ${logFile}'s result block${more}, ` +
          `so the file is not this run's (left from another run, or a second run at this concurrency); ${keep}`,
      );
      continue;
    }
    for (const f of found) {
      if (f.metric.rounded === undefined) continue;
      const { rounded: _rounded, ...rest } = f.metric;
      exact.set(f.metric, { ...rest, value: f.value, printed: f.metric.value, source: `${relative} ${f.key}` });
    }
  }
  return { metrics: result.metrics.map((m) => exact.get(m) ?? m), problems };
}
