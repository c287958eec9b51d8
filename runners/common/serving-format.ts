// The serving client's result block, byte for byte as TensorRT-LLM's benchmark_serving prints it
// (`{:<40} {:<10}` lines, titles centred with `{s:{c}^{n}}` in 50 columns). Our own serve-bench
// client prints through formatServingResult, so the one extractor (serving.ts) reads both; the
// label table below is shared with that extractor.

/** Latency statistics of one section (all in ms); percentiles keyed by their number: { '99': 412.9 }. */
export interface LatencyStats {
  mean: number;
  median: number;
  /** Printed as `Std Dev X (ms):` when present. */
  std?: number;
  min?: number;
  max?: number;
  percentiles: Record<string, number>;
}

/** One concurrency's result, the fields benchmark_serving prints. */
export interface ServingResult {
  /** Requests sent; printed first when present (newer clients). */
  totalRequests?: number;
  successfulRequests: number;
  failedRequests: number;
  durationSec: number;
  totalInputTokens: number;
  totalGeneratedTokens: number;
  /** req/s */
  requestThroughput: number;
  /** req/s; printed only when goodput SLOs were given. */
  requestGoodput?: number;
  /** tok/s */
  outputTokenThroughput: number;
  /** tok/s */
  totalTokenThroughput: number;
  /** Mean over requests of output tokens / request latency, tok/s. */
  userThroughput: number;
  ttft?: LatencyStats;
  tpot?: LatencyStats;
  itl?: LatencyStats;
  e2el?: LatencyStats;
}

type SummaryKey = Exclude<keyof ServingResult, LatencyKey>;
export type LatencyKey = 'ttft' | 'tpot' | 'itl' | 'e2el';

/** A summary line of the block and the metric it becomes. */
export interface ServingSummaryField {
  key: SummaryKey;
  label: string;
  metric: string;
  unit: string;
  higherIsBetter?: boolean;
  /** int: printed `{:<10}`; float: `{:<10.2f}`. */
  kind: 'int' | 'float';
}

export const SERVING_SUMMARY_FIELDS: readonly ServingSummaryField[] = [
  { key: 'totalRequests', label: 'Total requests:', metric: 'SERVER_TOTAL_REQUESTS', unit: 'count', kind: 'int' },
  { key: 'successfulRequests', label: 'Successful requests:', metric: 'SERVER_SUCCESSFUL_REQUESTS', unit: 'count', higherIsBetter: true, kind: 'int' },
  { key: 'failedRequests', label: 'Failed requests:', metric: 'SERVER_FAILED_REQUESTS', unit: 'count', higherIsBetter: false, kind: 'int' },
  { key: 'durationSec', label: 'Benchmark duration (s):', metric: 'SERVER_DURATION', unit: 's', higherIsBetter: false, kind: 'float' },
  { key: 'totalInputTokens', label: 'Total input tokens:', metric: 'SERVER_TOTAL_INPUT_TOKENS', unit: 'count', kind: 'int' },
  { key: 'totalGeneratedTokens', label: 'Total generated tokens:', metric: 'SERVER_TOTAL_GENERATED_TOKENS', unit: 'count', kind: 'int' },
  { key: 'requestThroughput', label: 'Request throughput (req/s):', metric: 'SERVER_REQUEST_THROUGHPUT', unit: 'req/s', higherIsBetter: true, kind: 'float' },
  { key: 'requestGoodput', label: 'Request goodput (req/s):', metric: 'SERVER_REQUEST_GOODPUT', unit: 'req/s', higherIsBetter: true, kind: 'float' },
  { key: 'outputTokenThroughput', label: 'Output token throughput (tok/s):', metric: 'SERVER_OUTPUT_TOKEN_THROUGHPUT', unit: 'tok/s', higherIsBetter: true, kind: 'float' },
  { key: 'totalTokenThroughput', label: 'Total Token throughput (tok/s):', metric: 'SERVER_TOTAL_TOKEN_THROUGHPUT', unit: 'tok/s', higherIsBetter: true, kind: 'float' },
  { key: 'userThroughput', label: 'User throughput (tok/s):', metric: 'SERVER_USER_THROUGHPUT', unit: 'tok/s', higherIsBetter: true, kind: 'float' },
];

/** Latency sections in print order: key, the short name in labels and metric names, the title. */
export const SERVING_LATENCY_SECTIONS: readonly { key: LatencyKey; short: string; title: string }[] = [
  { key: 'ttft', short: 'TTFT', title: 'Time to First Token' },
  { key: 'tpot', short: 'TPOT', title: 'Time per Output Token (excl. 1st token)' },
  { key: 'itl', short: 'ITL', title: 'Inter-token Latency' },
  { key: 'e2el', short: 'E2EL', title: 'End-to-end Latency' },
];

/** Statistic label prefixes and the word they become in metric names (SERVER_<WORD>_TTFT). */
export const SERVING_STAT_WORDS: Readonly<Record<string, string>> = {
  Mean: 'MEAN',
  Median: 'MEDIAN',
  'Std Dev': 'STD',
  Min: 'MIN',
  Max: 'MAX',
};

export const SERVING_BANNER_TITLE = ' Serving Benchmark Result ';
export const SERVING_LINE_WIDTH = 50;
const LABEL_WIDTH = 40;
const VALUE_WIDTH = 10;

/** Python's `'{s:{c}^{n}}'.format(...)`: centred, the odd fill character goes to the right. */
export function centreTitle(title: string, fill: string, width = SERVING_LINE_WIDTH): string {
  const pad = Math.max(0, width - title.length);
  const left = Math.floor(pad / 2);
  return fill.repeat(left) + title + fill.repeat(pad - left);
}

/**
 * Python's `'%.{digits}f'`: like toFixed, but exact binary ties round half to even
 * (Python gives 0.12 for 0.125 where toFixed gives 0.13), and nan/inf spelled as Python does.
 */
export function pythonFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  const rounded = x.toFixed(digits);
  const exact = Math.abs(x).toFixed(100); // exact decimal expansion of the double
  const dot = exact.indexOf('.');
  const rest = exact.slice(dot + 1 + digits);
  if (!/^50*$/.test(rest)) return rounded;
  const truncated = (x < 0 ? '-' : '') + exact.slice(0, digits > 0 ? dot + 1 + digits : dot);
  const lastDigit = Number(truncated[truncated.length - 1]);
  return lastDigit % 2 === 0 ? truncated : rounded;
}

function valueText(value: number, kind: 'int' | 'float'): string {
  return kind === 'int' && Number.isInteger(value) ? String(value) : pythonFixed(value, 2);
}

/** One `{:<40} {:<10}` line (trailing spaces included, as Python prints them). */
export function formatServingLine(label: string, value: string): string {
  return `${label.padEnd(LABEL_WIDTH)} ${value.padEnd(VALUE_WIDTH)}`;
}

function formatLatency(short: string, title: string, stats: LatencyStats): string[] {
  const lines = [centreTitle(title, '-')];
  const line = (word: string, v: number) => formatServingLine(`${word} ${short} (ms):`, pythonFixed(v, 2));
  lines.push(line('Mean', stats.mean), line('Median', stats.median));
  if (stats.std !== undefined) lines.push(line('Std Dev', stats.std));
  if (stats.min !== undefined) lines.push(line('Min', stats.min));
  if (stats.max !== undefined) lines.push(line('Max', stats.max));
  const percentiles = Object.entries(stats.percentiles).sort(([a], [b]) => Number(a) - Number(b));
  for (const [p, v] of percentiles) lines.push(line(`P${p}`, v));
  return lines;
}

/**
 * Which client's block: 'trtllm' (TensorRT-LLM's benchmark_serving today) or 'sa' (the SemiAnalysis
 * bench_serving of use_nv_sa_benchmark, which prints no Total/Failed requests, no User throughput
 * and no failure banner).
 */
export type ServingBlockStyle = 'trtllm' | 'sa';
const notInSaBlock = new Set<keyof ServingResult>(['totalRequests', 'failedRequests', 'userThroughput']);

/** The whole block for one concurrency, newline-terminated, exactly as the client prints it. */
export function formatServingResult(result: ServingResult, style: ServingBlockStyle = 'trtllm'): string {
  const lines = [centreTitle(SERVING_BANNER_TITLE, '=')];
  for (const field of SERVING_SUMMARY_FIELDS) {
    const value = result[field.key];
    if (value === undefined || (style === 'sa' && notInSaBlock.has(field.key))) continue;
    lines.push(formatServingLine(field.label, valueText(value, field.kind)));
  }
  if (style === 'trtllm' && result.failedRequests > 0) {
    lines.push('=======================!FAILED REQUESTS!=======================');
    lines.push(`Total failed requests: ${result.failedRequests}`);
    lines.push('=====================!CHECK LOG FOR ERRORS!====================');
  }
  for (const section of SERVING_LATENCY_SECTIONS) {
    const stats = result[section.key];
    if (stats) lines.push(...formatLatency(section.short, section.title, stats));
  }
  lines.push('='.repeat(SERVING_LINE_WIDTH));
  return lines.join('\n') + '\n';
}
