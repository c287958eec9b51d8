// A results.json record as its readers read it: the report (results/report/), the history
// (framework/history/rows.ts), RESUME and comparisons all take a record's fields as the types
// TestRecord gives them. A record that is not so (`metrics: 7`, a verdict of another word) makes
// every later report of that folder fail, so the run checks each record before it submits
// anything (suite/output-path.ts) and the report names the record at fault instead of breaking.
import type { TestRecord } from './json.ts';

const VERDICTS: ReadonlySet<string> = new Set(['passed', 'failed', 'skipped']);

const isString = (v: unknown): v is string => typeof v === 'string';
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const shown = (v: unknown): string => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
};

/** The first thing a reader could not take in `record`, as `<field> ...`; undefined when it is usable. */
export function recordProblem(record: unknown): string | undefined {
  if (!isObject(record)) return `is ${shown(record)}, not an object`;
  const r = record as Partial<Record<keyof TestRecord, unknown>>;
  for (const key of ['testId', 'type', 'category', 'configPath', 'host'] as const) {
    if (!isString(r[key])) return `${key} is ${shown(r[key])}, expected a string`;
  }
  if (r.jobId !== null && !isString(r.jobId)) return `jobId is ${shown(r.jobId)}, expected a string or null`;
  if (!isString(r.verdict) || !VERDICTS.has(r.verdict)) return `verdict is ${shown(r.verdict)}, expected "passed", "failed" or "skipped"`;
  if (!Array.isArray(r.failures) || !r.failures.every(isString)) return `failures is ${shown(r.failures)}, expected a list of strings`;
  if (!Array.isArray(r.metrics)) return `metrics is ${shown(r.metrics)}, expected a list of metrics`;
  for (const [k, m] of r.metrics.entries()) {
    const problem = metricProblem(m);
    if (problem) return `metrics[${k}]${problem}`;
  }
  if (!isObject(r.timing)) return `timing is ${shown(r.timing)}, expected {start, end, durationSec}`;
  if (!isString(r.timing.start) || !isString(r.timing.end)) return 'timing.start and timing.end must be strings (ISO 8601 times)';
  if (typeof r.timing.durationSec !== 'number') return `timing.durationSec is ${shown(r.timing.durationSec)}, expected a number`;
  for (const key of ['schedulerState', 'skipReason', 'gpuType', 'logDir'] as const) {
    if (r[key] !== undefined && !isString(r[key])) return `${key} is ${shown(r[key])}, expected a string`;
  }
  if (r.saving !== undefined && typeof r.saving !== 'boolean') return `saving is ${shown(r.saving)}, expected true or false`;
  for (const key of ['csvRows', 'run', 'regression'] as const) {
    if (r[key] !== undefined && !isObject(r[key])) return `${key} is ${shown(r[key])}, expected an object`;
  }
  if (isObject(r.run) && !isString(r.run.id)) return `run.id is ${shown(r.run.id)}, expected a string`;
  if (isObject(r.regression) && !Array.isArray(r.regression.findings)) return `regression.findings is ${shown(r.regression.findings)}, expected a list`;
  return undefined;
}

function metricProblem(m: unknown): string | undefined {
  if (!isObject(m)) return ` is ${shown(m)}, expected {name, value, unit, labels}`;
  if (!isString(m.name)) return `.name is ${shown(m.name)}, expected a string`;
  if (typeof m.value !== 'number') return `.value is ${shown(m.value)}, expected a number`;
  if (m.unit !== undefined && !isString(m.unit)) return `.unit is ${shown(m.unit)}, expected a string`;
  if (!isObject(m.labels)) return `.labels is ${shown(m.labels)}, expected an object`;
  if (m.rounded !== undefined && (typeof m.rounded !== 'number' || !(m.rounded > 0))) return `.rounded is ${shown(m.rounded)}, expected a step > 0 (0.01: printed with 2 decimals)`;
  if (m.printed !== undefined && typeof m.printed !== 'number') return `.printed is ${shown(m.printed)}, expected a number (the value as the log printed it)`;
  if (m.source !== undefined && !isString(m.source)) return `.source is ${shown(m.source)}, expected a string (where the value was read)`;
  for (const [label, value] of Object.entries(m.labels)) {
    if (!isString(value) && typeof value !== 'number') return `.labels.${label} is ${shown(value)}, expected a string or a number`;
  }
  return undefined;
}
