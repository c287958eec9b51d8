// Reads aiperf's summary export (profile_export_aiperf.json, one per concurrency_<c>/ folder, as
// upstream's run_benchmark_aiperf.sh leaves them): each metric is `{unit, avg, p50, p90, p99, min,
// max, std, ...}`, statistics missing where aiperf has none (aiperf's docs: JSON export schema).
// Only metrics whose definition is benchmark_serving's take its SERVER_* names:
// - time_to_first_token -> TTFT; request_latency -> E2EL (send to last token);
// - inter_token_latency -> TPOT: aiperf defines it per request as (latency - TTFT) / (OSL - 1),
//   which is benchmark_serving's TPOT, not its ITL (the gaps between chunks);
// - request_count (valid requests) -> SUCCESSFUL_REQUESTS, error_request_count -> FAILED_REQUESTS
//   (absent when nothing failed: 0), throughputs, duration and token totals.
// Everything else keeps aiperf's own name under AIPERF_* (e.g. AIPERF_AVG_INTER_CHUNK_LATENCY,
// AIPERF_AVG_OUTPUT_TOKEN_THROUGHPUT_PER_USER: aiperf's 1 / ITL, not benchmark_serving's user
// throughput).
import type { ExtractResult, Metric, MetricSpec } from '../metric.ts';
import { parseJsonReport } from './json-report.ts';

/** aiperf statistic key -> the word in a SERVER_<WORD>_<X> name. */
const STATS: Record<string, string> = { avg: 'MEAN', p50: 'MEDIAN', p90: 'P90', p95: 'P95', p99: 'P99', min: 'MIN', max: 'MAX', std: 'STD' };

/** Distributions with benchmark_serving's definition: aiperf tag -> the short name. */
const LATENCIES: Record<string, string> = { time_to_first_token: 'TTFT', request_latency: 'E2EL', inter_token_latency: 'TPOT' };

/** Scalars (their `avg`) with benchmark_serving's definition. */
const SCALARS: Record<string, { name: string; unit: string; higherIsBetter?: boolean }> = {
  request_count: { name: 'SERVER_SUCCESSFUL_REQUESTS', unit: 'count', higherIsBetter: true },
  error_request_count: { name: 'SERVER_FAILED_REQUESTS', unit: 'count', higherIsBetter: false },
  request_throughput: { name: 'SERVER_REQUEST_THROUGHPUT', unit: 'req/s', higherIsBetter: true },
  output_token_throughput: { name: 'SERVER_OUTPUT_TOKEN_THROUGHPUT', unit: 'tok/s', higherIsBetter: true },
  benchmark_duration: { name: 'SERVER_DURATION', unit: 's', higherIsBetter: false },
  total_isl: { name: 'SERVER_TOTAL_INPUT_TOKENS', unit: 'count' },
  total_osl: { name: 'SERVER_TOTAL_GENERATED_TOKENS', unit: 'count' },
};

/** aiperf's display units in ours. */
const UNITS: Record<string, string> = { 'requests/sec': 'req/s', 'tokens/sec': 'tok/s', 'tokens/sec/user': 'tok/s/user', sec: 's', requests: 'count', tokens: 'count' };

const isStats = (value: unknown): value is Record<string, unknown> & { unit: string } =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as { unit?: unknown }).unit === 'string';

/** The concurrency a summary belongs to, from its folder: concurrency_<c>/... */
export function aiperfConcurrency(file: string | undefined): number | undefined {
  const match = file ? /(?:^|\/)concurrency_(\d+)(?:\/|$)/.exec(file) : null;
  return match ? Number(match[1]) : undefined;
}

/** The registered 'aiperf' extractor; `file` is the summary's path relative to the log folder. */
export function extractAiperfMetrics(text: string, _spec?: MetricSpec, file?: string): ExtractResult {
  const out: ExtractResult = { metrics: [], problems: [] };
  const concurrency = aiperfConcurrency(file);
  if (concurrency === undefined) {
    out.problems.push(`not under a concurrency_<c>/ folder, so its concurrency is unknown; its values are ignored`);
    return out;
  }
  const { report, problem } = parseJsonReport(text, 'aiperf');
  if (!report) {
    out.problems.push(problem!);
    return out;
  }
  const labels = { concurrency };
  const push = (metric: Omit<Metric, 'labels'>) => out.metrics.push({ ...metric, labels });
  for (const [tag, value] of Object.entries(report)) {
    if (!isStats(value)) continue;
    const unit = UNITS[value.unit] ?? value.unit;
    const short = LATENCIES[tag];
    const scalar = SCALARS[tag];
    for (const [stat, word] of Object.entries(STATS)) {
      const v = value[stat];
      if (typeof v !== 'number' || !Number.isFinite(v)) continue;
      if (short) push({ name: `SERVER_${word}_${short}`, value: v, unit, higherIsBetter: false });
      else if (scalar && stat === 'avg') push({ name: scalar.name, value: v, unit: scalar.unit, higherIsBetter: scalar.higherIsBetter });
      else if (!scalar) push({ name: `AIPERF_${stat.toUpperCase()}_${tag.toUpperCase()}`, value: v, unit });
    }
  }
  if (!out.metrics.some((m) => m.name === 'SERVER_SUCCESSFUL_REQUESTS')) {
    out.problems.push('no request_count: aiperf recorded no valid request');
  }
  // aiperf leaves error_request_count out when no request failed.
  if (!out.metrics.some((m) => m.name === 'SERVER_FAILED_REQUESTS')) {
    out.metrics.push({ name: 'SERVER_FAILED_REQUESTS', value: 0, unit: 'count', higherIsBetter: false, labels });
  }
  return out;
}
