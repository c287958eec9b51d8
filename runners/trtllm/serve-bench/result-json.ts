// The --save-result file: every number of the run, under benchmark_serving's key names where the
// meaning is the same (duration, completed, mean_ttft_ms, p99_e2el_ms...), plus what this client
// adds (failed, failure_reasons, token count sources, endpoint, seed).
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { latencyMetricNames, type ServeBenchOptions } from './options.ts';
import type { RunSummary } from './summarize.ts';
import { maxOf, mean, minOf, percentile } from '../../common/stats.ts';

export function resultJson(options: ServeBenchOptions, seed: number, summary: RunSummary, startedAt: Date): Record<string, unknown> {
  const r = summary.result;
  const json: Record<string, unknown> = {
    date: startedAt.toISOString(),
    client: 'disagg-bench serve-bench',
    backend: options.backend,
    model_id: options.model,
    endpoint: options.url.href,
    num_prompts: options.numPrompts,
    request_rate: 'inf',
    burstiness: 1.0,
    max_concurrency: options.maxConcurrency,
    random_input_len: options.inputLen,
    random_output_len: options.outputLen,
    random_range_ratio: options.rangeRatio,
    // How lengths were drawn from the ratio (prompts.ts) and what the prompt was made of.
    random_range_mode: options.nvSa ? 'sa' : 'symmetric',
    prompt_kind: options.tokenIdVocab !== null ? 'token_ids' : 'words',
    ...(options.tokenIdVocab !== null ? { random_vocab_size: options.tokenIdVocab } : {}),
    nv_sa: options.nvSa,
    ignore_eos: options.ignoreEos,
    seed,
    duration: r.durationSec,
    completed: r.successfulRequests,
    failed: r.failedRequests,
    total_input_tokens: r.totalInputTokens,
    total_output_tokens: r.totalGeneratedTokens,
    request_throughput: r.requestThroughput,
    output_throughput: r.outputTokenThroughput,
    total_token_throughput: r.totalTokenThroughput,
    user_throughput: r.userThroughput,
    failure_reasons: summary.failures,
    // Successful requests whose counts came from the server's usage (the rest: words / chunks).
    token_counts_from_usage: { prompt: summary.usageReported.promptTokens, completion: summary.usageReported.completionTokens },
  };
  for (const metric of latencyMetricNames) {
    const stats = summary.latencies[metric];
    json[`mean_${metric}_ms`] = stats.mean;
    json[`median_${metric}_ms`] = stats.median;
    json[`std_${metric}_ms`] = stats.std;
    json[`min_${metric}_ms`] = stats.min;
    json[`max_${metric}_ms`] = stats.max;
    for (const [p, value] of Object.entries(stats.percentiles)) json[`p${p}_${metric}_ms`] = value;
  }
  if (summary.kvHandovers.length > 0) json.kv_handover = kvHandoverJson(summary.kvHandovers);
  // The drawn lengths, so a run's workload can be checked and repeated (seed above).
  json.requested_input_lens = summary.requested.map((r) => r.inputLen);
  json.requested_output_lens = summary.requested.map((r) => r.outputLen);
  if (options.saveDetailed) {
    json.input_lens = summary.perRequest.map((q) => q.inputTokens);
    json.output_lens = summary.perRequest.map((q) => q.outputTokens);
    json.ttfts_ms = summary.perRequest.map((q) => q.ttftMs);
    json.e2els_ms = summary.perRequest.map((q) => q.e2elMs);
    json.itls_ms = summary.perRequest.map((q) => q.itlsMs);
    json.errors = summary.perRequest.map((q) => q.error);
  }
  return json;
}

/** The distribution of the KV hand-overs the server reported per request: bytes, the transfer's time and the whole hand-over's (ms). */
function kvHandoverJson(handovers: RunSummary['kvHandovers']): Record<string, unknown> {
  const describe = (xs: number[]) => ({ mean: mean(xs), median: percentile(xs, 50), p99: percentile(xs, 99), min: minOf(xs), max: maxOf(xs) });
  return {
    requests: handovers.length,
    bytes: describe(handovers.map((h) => h.bytes)),
    transfer_ms: describe(handovers.map((h) => h.transferMs)),
    handover_ms: describe(handovers.map((h) => h.handoverMs)),
  };
}

export async function writeResultJson(path: string, json: Record<string, unknown>): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(json, null, 2)}\n`);
}
