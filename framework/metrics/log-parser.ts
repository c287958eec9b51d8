// Reads a finished job's logs into metrics: per MetricSpec, the log(s) its glob names in the
// test's log folder, through the registered extractor. Never throws for a bad log: a missing,
// empty or unreadable log, an unknown extractor or a requested metric with no value is a problem
// (prefixed with the log's path relative to the folder), and the verdict decides. A completer
// (extractors/index.ts) then reads what the log's tool saved beside it (serving: result.json).
import path from 'node:path';
import fg from 'fast-glob';
import type { ExtractResult, Metric, MetricSpec } from './metric.ts';
import { extractorNames, getCompleter, getExtractor } from './extractors/index.ts';
import { FileReadError, READ_LIMITS, readTextFile } from '../../runners/common/read-file.ts';

const byNumbersInName = new Intl.Collator('en', { numeric: true, sensitivity: 'variant', caseFirst: 'upper' });

async function extractOne(logDir: string, spec: MetricSpec): Promise<ExtractResult> {
  const metrics: Metric[] = [];
  const problems: string[] = [];
  const extractor = getExtractor(spec.extractor);
  if (!extractor) {
    return { metrics, problems: [`${spec.logFile}: unknown extractor '${spec.extractor}' (known: ${extractorNames().join(', ')})`] };
  }
  // Whatever the name matches (a FIFO or a folder named like the log is said, not skipped); links
  // are read but not walked into, so a link loop in a log folder cannot make the glob endless.
  // Numbers in names in numeric order: concurrency_8/ before concurrency_16/ (the order they ran).
  const files = (await fg(spec.logFile, { cwd: logDir, onlyFiles: false, dot: true, followSymbolicLinks: false })).sort(byNumbersInName.compare);
  if (files.length === 0) {
    if (!spec.optional) problems.push(`${spec.logFile}: no such log in ${logDir}`);
    return { metrics, problems };
  }
  for (const file of files) {
    let text: string;
    try {
      text = await readTextFile(path.join(logDir, file), READ_LIMITS.log);
    } catch (error) {
      problems.push(error instanceof FileReadError ? `${file} ${error.reason}` : `${file}: cannot read: ${(error as Error).message}`);
      continue;
    }
    if (text.trim() === '') {
      problems.push(`${file}: log is empty`);
      continue;
    }
    const damaged = nulLineProblem(text);
    if (damaged) problems.push(`${file}:${damaged}`);
    let result: ExtractResult;
    try {
      result = finiteMetricsOnly(extractor(text, spec, file));
      const complete = getCompleter(spec.extractor);
      if (complete) result = finiteMetricsOnly(await complete(result, logDir, file));
    } catch (error) {
      problems.push(`${file}: extractor '${spec.extractor}' failed: ${(error as Error).message}`);
      continue;
    }
    const wanted = spec.names ? [...spec.names, ...(spec.optionalNames ?? [])] : undefined;
    const kept = wanted ? result.metrics.filter((m) => wanted.includes(m.name)) : result.metrics;
    // One by one: a long log may yield more metrics than a spread into push() can take.
    for (const metric of kept) metrics.push(metric);
    for (const problem of result.problems) problems.push(`${file}: ${problem}`);
  }
  const missing = (spec.names ?? []).filter((name) => !metrics.some((m) => m.name === name));
  // Said only when nothing else explains it (a truncated or empty log already did).
  if (missing.length > 0 && problems.length === 0) {
    problems.push(`${spec.logFile}: no value for ${missing.join(', ')}`);
  }
  return { metrics, problems };
}

/**
 * `<line>: ...` for the first line holding a NUL byte, or undefined. A text log holds none; one
 * that does was damaged (a crash leaves zeroed blocks, two writers overwrite each other), and the
 * extractors' patterns silently miss the value on such a line (`Median TTFT (ms):  1\u000023`):
 * the round it belonged to would vanish without a word. The test fails naming the line.
 */
export function nulLineProblem(text: string): string | undefined {
  const at = text.indexOf('\u0000');
  if (at < 0) return undefined;
  const start = text.lastIndexOf('\n', at) + 1;
  const end = text.indexOf('\n', at);
  const line = text.slice(start, end < 0 ? text.length : end).replace(/\r$/, '');
  let lineNumber = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < start; i = text.indexOf('\n', i + 1)) lineNumber += 1;
  let count = 0;
  for (let i = at; i >= 0; i = text.indexOf('\u0000', i + 1)) count += 1;
  const shown = line.length > 120 ? `${line.slice(0, 117)}...` : line;
  const more = count > 1 ? ` (${count} NUL bytes in the log)` : '';
  return `${lineNumber}: a NUL byte in the line ${JSON.stringify(shown).replace(/\\u0000/g, '\\0')}${more}: the log is damaged (a crash or two writers?), and a value on such a line cannot be read`;
}

/**
 * An extractor's result with every metric that is no finite number (a log's `1.31e9991554`, `inf`,
 * `nan`) taken out and said as a problem: such a value would be recorded as null or Infinity in
 * the CSV and JSON and compared with references as if measured.
 */
export function finiteMetricsOnly(result: ExtractResult): ExtractResult {
  const bad = result.metrics.filter((m) => typeof m.value !== 'number' || !Number.isFinite(m.value));
  if (bad.length === 0) return result;
  const labels = (m: Metric) => (Object.keys(m.labels).length ? ` (${Object.entries(m.labels).map(([k, v]) => `${k} ${v}`).join(', ')})` : '');
  return {
    metrics: result.metrics.filter((m) => !bad.includes(m)),
    problems: [...result.problems, ...bad.map((m) => `${m.name}${labels(m)} is ${String(m.value)}, not a finite number; not recorded`)],
  };
}

/** Metrics of every spec, in spec order, and every problem found along the way. */
export async function extractMetrics(logDir: string, specs: MetricSpec[]): Promise<ExtractResult> {
  const results = await Promise.all(specs.map((spec) => extractOne(logDir, spec)));
  return {
    metrics: results.flatMap((r) => r.metrics),
    problems: results.flatMap((r) => r.problems),
  };
}
