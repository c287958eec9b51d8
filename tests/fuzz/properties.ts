// Property-based fuzzing (fast-check) of the config loader and of every log parser:
// random and mutated YAML, random bytes, and mutated logs either load or give located problems,
// never an uncaught exception. Shared by the CI test (tests/reliability/property-fuzz.test.ts:
// fixed seed, bounded count) and the nightly-size script (scripts/fuzz.ts: any seed, large counts,
// each case under 1 s). Each case's time is measured here, for the script to judge; the CI test
// judges only what the code did, never how fast a loaded machine was.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import fc from 'fast-check';
import { parseYaml } from '../../framework/config/load.ts';
import { validateConfig } from '../../framework/config/validate.ts';
import { testType } from '../../framework/types/registry.ts';
import { decodeYamlBytes } from '../../runners/common/yaml-load.ts';
import { extractorNames, getExtractor } from '../../framework/metrics/extractors/index.ts';
import type { MetricSpec } from '../../framework/metrics/metric.ts';
import { finiteMetricsOnly } from '../../framework/metrics/log-parser.ts';
import { ctReport, formatCtReport } from '../../runners/xfer/benches/ct-report.ts';
import { sequentialReport, type PatternInfo } from '../../runners/xfer/benches/sequential-report.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

export interface FuzzStats {
  cases: number;
  /** The slowest case in ms, and a prefix of its input (to reproduce it by hand). */
  slowestMs: number;
  slowestInput: string;
  outcomes: Record<string, number>;
}

export const newStats = (): FuzzStats => ({ cases: 0, slowestMs: 0, slowestInput: '', outcomes: {} });

function timed(stats: FuzzStats, input: string, outcome: () => string): void {
  const start = performance.now();
  const what = outcome();
  const ms = performance.now() - start;
  stats.cases += 1;
  stats.outcomes[what] = (stats.outcomes[what] ?? 0) + 1;
  if (ms > stats.slowestMs) {
    stats.slowestMs = ms;
    stats.slowestInput = input.slice(0, 200);
  }
}

/** Pieces YAML is made of, and the values that broke loaders before. */
const YAML_TOKENS = [
  ':', ': ', ' ', '  ', '\n', '\r\n', '\r', '\t', '- ', '? ', '{', '}', '[', ']', ', ', '"', "'", '#', '|', '>', '---', '...', '&a ', '*a', '&m ', '*m',
  '<<: ', '"<<"', '!!str ', '!!binary ', '%YAML 1.2\n', 'key', 'metadata', 'benchmark', 'worker_config', 'ranks', 'iters', 'value', '1', '-1', '0x2', '1e300',
  '1e400', '.inf', '.nan', '9007199254740993', '9999999999999999999999', '~', 'null', 'true', '\uFFFD', '\u0000', '\u0085', '\u2028', '\uFEFF', '\\', '\\u0000',
  '__proto__', 'constructor', '&a [*a]', '<<: *a', '<<: [*a, *m]', '['.repeat(150), '{a: '.repeat(120),
];

const yamlFromTokens = fc.array(fc.constantFrom(...YAML_TOKENS), { maxLength: 60 }).map((t) => t.join(''));

/** The project's example configs, each with its test type and category. */
export function exampleConfigs(): Array<{ type: string; category: string; text: string }> {
  return fg.sync('test_configs/*/*/*.yaml', { cwd: repoRoot }).sort().map((rel) => {
    const [, type, category] = rel.split('/');
    return { type, category, text: readFileSync(path.join(repoRoot, rel), 'utf8') };
  });
}

type Edit = { op: 'delete' | 'duplicate' | 'insert' | 'replace' | 'truncate' | 'indent'; at: number; token: string };
const edits = fc.array(
  fc.record({
    op: fc.constantFrom<Edit['op']>('delete', 'duplicate', 'insert', 'replace', 'truncate', 'indent'),
    at: fc.nat(),
    token: fc.oneof(fc.constantFrom(...YAML_TOKENS), fc.string({ unit: 'binary', maxLength: 8 })),
  }),
  { minLength: 1, maxLength: 4 },
);

/** Line-level mutations: what an editor, a merge conflict or a bad copy does to a file. */
export function mutate(text: string, list: Edit[]): string {
  let lines = text.split('\n');
  for (const e of list) {
    const i = lines.length ? e.at % lines.length : 0;
    const line = lines[i] ?? '';
    switch (e.op) {
      case 'delete': lines = lines.filter((_, k) => k !== i); break;
      case 'duplicate': lines = [...lines.slice(0, i + 1), line, ...lines.slice(i + 1)]; break;
      case 'insert': { const c = e.at % (line.length + 1); lines[i] = line.slice(0, c) + e.token + line.slice(c); break; }
      case 'replace': lines[i] = line.replace(/:\s.*$/, `: ${e.token}`); break;
      case 'truncate': lines = lines.join('\n').slice(0, e.at % (text.length + 1)).split('\n'); break;
      case 'indent': lines[i] = ' '.repeat(e.at % 7) + line.trimStart(); break;
    }
  }
  return lines.join('\n');
}

const SINGLE_LINE = /^[^\n]+$/;

/**
 * Loads and validates one config text as the suite does; throws (failing the property) on an
 * uncaught exception, an issue without a place, or data that a later stage could not walk.
 */
export function checkConfig(text: string, type: string, category: string, stats: FuzzStats): void {
  const display = `test_configs/${type}/${category}/fuzz.yaml`;
  timed(stats, text, () => {
    const parsed = parseYaml(text, display);
    for (const issue of parsed.issues) {
      if (issue.file !== display || !(issue.line! >= 1) || !(issue.col! >= 1) || !SINGLE_LINE.test(issue.message)) {
        throw new Error(`parse issue not located in one line: ${JSON.stringify(issue)}`);
      }
    }
    if (parsed.issues.length > 0) return 'parse error';
    // Data the loader hands on is a tree: JSON and structuredClone walk it (no cycle, no bomb).
    structuredClone(parsed.data);
    JSON.stringify(parsed.data);
    const issues = validateConfig(testType(type)!, parsed, display, path.join(repoRoot, display), category);
    for (const issue of issues) {
      if (issue.file !== display || !(issue.line! >= 1) || !SINGLE_LINE.test(issue.message)) {
        throw new Error(`validation issue not located in one line: ${JSON.stringify(issue)}`);
      }
    }
    return issues.length > 0 ? 'invalid' : 'valid';
  });
}

/** Bytes as a file holds them: text or a located problem, never an exception. */
export function checkBytes(bytes: Uint8Array, stats: FuzzStats): void {
  timed(stats, Buffer.from(bytes).toString('latin1'), () => {
    const decoded = decodeYamlBytes(Buffer.from(bytes));
    if (decoded.problem) {
      if (!(decoded.problem.line >= 1 && decoded.problem.col >= 1) || !SINGLE_LINE.test(decoded.problem.message)) throw new Error(`undecodable bytes not located: ${JSON.stringify(decoded.problem)}`);
      return 'refused';
    }
    const parsed = parseYaml(decoded.text, 'fuzz.yaml');
    if (parsed.issues.some((i) => !(i.line! >= 1))) throw new Error(`parse issue not located: ${JSON.stringify(parsed.issues)}`);
    return parsed.issues.length ? 'parse error' : 'loaded';
  });
}

export const configArbitraries = () => {
  const examples = exampleConfigs();
  return {
    random: fc.tuple(yamlFromTokens, fc.constantFrom(...examples)).map(([text, ex]) => ({ text, type: ex.type, category: ex.category })),
    mutated: fc.tuple(fc.constantFrom(...examples), edits).map(([ex, list]) => ({ text: mutate(ex.text, list), type: ex.type, category: ex.category })),
    bytes: fc.uint8Array({ maxLength: 256 }),
  };
};

interface Seed {
  /** The log's path in its log folder (some formats take labels from it: concurrency_<c>/). */
  file: string;
  text: string;
}

/** Seed logs per extractor: the recorded upstream-format logs, and reports the benchmarks' own code writes. */
function logSeeds(): Record<string, Seed[]> {
  const fixtures = (glob: string): Seed[] =>
    fg.sync(glob, { cwd: path.join(repoRoot, 'tests/fixtures/logs') }).sort().map((f) => ({ file: f.split('/').slice(1).join('/'), text: readFileSync(path.join(repoRoot, 'tests/fixtures/logs', f), 'utf8') }));
  const text = (t: string): Seed => ({ file: 'fuzz.log', text: t });
  return {
    serving: fixtures('serving/**/*.log'),
    'lm-eval': fixtures('lm-eval/*.log'),
    regex: fixtures('serving/6_bench.log'),
    'ct-perftest': [text(JSON.stringify(CT_REPORT, null, 2)), text(formatCtReport(CT_REPORT)), text(KVBENCH_TABLE)],
    'sequential-ct-perftest': [text(JSON.stringify(SEQUENTIAL_REPORT, null, 2))],
    nixlbench: fixtures('nixl/{nixlbench,sweep}-*.log'),
    'nixl-ep': fixtures('nixl/{nixl-ep-seed,ep-shm}.log'),
    lmcache: fixtures('nixl/{lmcache,kvpipe}-*.log'),
    aiperf: fixtures('aiperf/**/*.json'),
    'rank-devices': [text('0: GPU of rank 1: device 0, NVIDIA H100 80GB HBM3, bus 00000000:1B:00.0, node gpu01, shared by 2 ranks\n')],
    // serve-bench's result.json with the generation servers' hand-over distribution
    'kv-handover': [
      {
        file: 'concurrency_4/result.json',
        text: JSON.stringify({ completed: 8, kv_handover: { requests: 8, bytes: { mean: 264192, median: 264192, p99: 270336, min: 258048, max: 270336 }, transfer_ms: { mean: 0.21, median: 0.2, p99: 0.4, min: 0.1, max: 0.4 }, handover_ms: { mean: 0.9, median: 0.85, p99: 1.6, min: 0.6, max: 1.6 } } }),
      },
    ],
  };
}

/** Extractors that report no problem by design (a log without their lines is a host-memory run). */
export const NEVER_COMPLAINS = ['rank-devices'];

const ms = 1e6;
const CT_REPORT = ctReport(
  { matrixFile: 'm.txt', ranks: 2, backend: 'shm', xferOp: 'READ', shards: 1, memType: 'cpu', iterations: 2, warmupIterations: 0, verifiedBuffers: true, bytesPerIteration: 3e6 },
  [{ rank: 1, bytes: 3e6, spans: [[0, 1 * ms], [2 * ms, 5 * ms]] }],
);
const pattern = (matrix: number[][]): PatternInfo => ({ matrixFile: 'm', matrix, op: 'WRITE', memType: 'cpu', shards: 1, sleepBeforeSec: 0, sleepAfterSec: 0, metadata: {} });
const SEQUENTIAL_REPORT = sequentialReport({
  patterns: [pattern([[0, 2e6], [0, 0]]), pattern([[0, 0], [1e6, 0]])],
  bytes: [[2e6, 0], [0, 1e6]],
  isolationMeanNs: [[1 * ms, null], [null, 0.5 * ms]],
  iterations: [{ startNs: 10 * ms, spans: [[[11 * ms, 13 * ms], null], [null, [14 * ms, 15 * ms]]] }],
  startNs: 0,
  preparedNs: 1 * ms,
  isolationStartNs: 2 * ms,
  finishedNs: 30 * ms,
  epochOffsetNs: 1e18,
  settings: {},
});
const KVBENCH_TABLE = [
  '0: 2025-08-26 10:00:00,000 - test.custom_traffic_perftest - INFO - Performance metrics:',
  '0:   Iters    Total time (s)    Avg latency/iter (s)    Total size (GB)',
  '0: -------  ----------------  ----------------------  -----------------',
  '0:      50          0.123456                0.002469           0.004205',
].join('\n');

const LOG_TOKENS = ['\n', ' ', ':', '|', '0', '1.5', '-1', 'inf', 'nan', 'NaN', '1e999', '99999999999999999999999', '\u0000', '\uFFFD', '{', '}', '"', ',', '=====', 'Benchmarking with concurrency', 'Failed requests:'];

export const logArbitraries = () => {
  const seeds = logSeeds();
  const names = extractorNames();
  const missing = names.filter((n) => !seeds[n]?.length);
  if (missing.length) throw new Error(`no seed log for extractor(s) ${missing.join(', ')}: add one to tests/fuzz/properties.ts`);
  const logEdits = fc.array(
    fc.record({
      op: fc.constantFrom<Edit['op']>('delete', 'duplicate', 'insert', 'truncate'),
      at: fc.nat(),
      token: fc.oneof(fc.constantFrom(...LOG_TOKENS), fc.string({ unit: 'binary', maxLength: 12 })),
    }),
    { minLength: 1, maxLength: 5 },
  );
  return {
    mutated: fc
      .constantFrom(...names)
      .chain((name) => fc.tuple(fc.constant(name), fc.constantFrom(...seeds[name]), fc.oneof(fc.constant([] as Edit[]), logEdits)))
      .map(([name, seed, list]) => ({ name, file: seed.file, text: mutate(seed.text, list) })),
    random: fc.tuple(fc.constantFrom(...names), fc.array(fc.constantFrom(...LOG_TOKENS), { maxLength: 80 })).map(([name, parts]) => ({ name, file: 'fuzz.log', text: parts.join('') })),
  };
};

/** One log through its extractor: metrics with finite values, problems as sentences, no exception. */
export function checkLog(name: string, file: string, text: string, stats: FuzzStats): void {
  const spec: MetricSpec = { logFile: file, extractor: name, ...(name === 'regex' ? { pattern: 'Median TTFT \\(ms\\):\\s+([0-9.]+)', names: ['TTFT'] } : {}) };
  timed(stats, text, () => {
    // As the log parser takes it (framework/metrics/log-parser.ts): a value that is no finite number is a problem.
    const result = finiteMetricsOnly(getExtractor(name)!(text, spec, file));
    for (const metric of result.metrics) {
      if (typeof metric.value !== 'number' || !Number.isFinite(metric.value)) throw new Error(`${name}: metric ${metric.name} = ${metric.value} is not a finite number`);
    }
    for (const problem of result.problems) {
      if (typeof problem !== 'string' || problem.trim() === '') throw new Error(`${name}: an empty problem`);
    }
    return result.problems.length ? `${name}: problems` : result.metrics.length ? `${name}: metrics` : `${name}: nothing`;
  });
}
