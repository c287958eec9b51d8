// From per-request outcomes to the run's numbers, with benchmark_serving's definitions:
// - tokens: input = usage.prompt_tokens, else the prompt's word count; output =
//   usage.completion_tokens, else the number of token chunks. Only successful requests count.
// - TPOT per request = (e2el - ttft) / (output tokens - 1), for requests with more than 1 token.
// - ITL = every gap between consecutive token chunks of every successful request.
// - User throughput = mean over successful requests of output tokens / e2el (tok/s): what one
//   user sees, as benchmark_serving's `tput_user`; not total output / duration.
import { summarizeFailures, type FailureSummaryLine, type RequestFailure } from './failure.ts';
import { latencyMetricNames, type LatencyMetricName } from './options.ts';
import type { BenchPrompt } from './prompts.ts';
import type { ServingResult } from '../../common/serving-format.ts';
import { describeLatencies, mean, type FullLatencyStats } from './statistics.ts';
import type { RequestOutcome } from './stream-request.ts';

export interface PerRequestRecord {
  inputTokens: number;
  /** 0 for a failed request. */
  outputTokens: number;
  ttftMs: number | null;
  e2elMs: number | null;
  itlsMs: number[];
  error: string | null;
}

export interface RunSummary {
  /** What the result block prints: only the sections of --percentile-metrics. */
  result: ServingResult;
  /** All four metrics, whatever was asked to print (for the JSON). */
  latencies: Record<LatencyMetricName, FullLatencyStats>;
  failures: FailureSummaryLine[];
  /** How many successful requests had their token counts from the server's usage. */
  usageReported: { promptTokens: number; completionTokens: number };
  perRequest: PerRequestRecord[];
  /** Each request's drawn lengths: prompt tokens (words) and max_tokens. */
  requested: Array<{ inputLen: number; outputLen: number }>;
  /** The KV hand-overs the server reported (a disaggregated server that reports them: kv_transfer), per successful request. */
  kvHandovers: Array<{ bytes: number; transferMs: number; handoverMs: number }>;
}

export interface SummaryInput {
  prompts: BenchPrompt[];
  outcomes: RequestOutcome[];
  durationS: number;
  percentileMetrics: LatencyMetricName[];
  metricPercentiles: number[];
}

export function summarizeRun(input: SummaryInput): RunSummary {
  const ttfts: number[] = [];
  const tpots: number[] = [];
  const itls: number[] = [];
  const e2els: number[] = [];
  const userThroughputs: number[] = [];
  const failures: RequestFailure[] = [];
  const perRequest: PerRequestRecord[] = [];
  const usageReported = { promptTokens: 0, completionTokens: 0 };
  let totalInput = 0;
  let totalOutput = 0;
  const kvHandovers: RunSummary['kvHandovers'] = [];

  input.outcomes.forEach((outcome, i) => {
    if (!outcome.ok) {
      failures.push(outcome.failure);
      perRequest.push({ inputTokens: input.prompts[i].words, outputTokens: 0, ttftMs: null, e2elMs: null, itlsMs: [], error: outcome.failure.message });
      return;
    }
    const inputTokens = outcome.promptTokens ?? input.prompts[i].words;
    const outputTokens = outcome.completionTokens ?? outcome.tokenChunks;
    if (outcome.promptTokens !== undefined) usageReported.promptTokens++;
    if (outcome.completionTokens !== undefined) usageReported.completionTokens++;
    totalInput += inputTokens;
    totalOutput += outputTokens;
    ttfts.push(outcome.ttftMs);
    e2els.push(outcome.e2elMs);
    if (outputTokens > 1) tpots.push((outcome.e2elMs - outcome.ttftMs) / (outputTokens - 1));
    for (const gap of outcome.itlsMs) itls.push(gap);
    if (outcome.e2elMs > 0) userThroughputs.push(outputTokens / (outcome.e2elMs / 1000));
    perRequest.push({ inputTokens, outputTokens, ttftMs: outcome.ttftMs, e2elMs: outcome.e2elMs, itlsMs: outcome.itlsMs, error: null });
    if (outcome.kvHandover) kvHandovers.push(outcome.kvHandover);
  });

  const completed = ttfts.length;
  const seconds = input.durationS;
  const samples: Record<LatencyMetricName, number[]> = { ttft: ttfts, tpot: tpots, itl: itls, e2el: e2els };
  const result: ServingResult = {
    successfulRequests: completed,
    failedRequests: failures.length,
    durationSec: seconds,
    totalInputTokens: totalInput,
    totalGeneratedTokens: totalOutput,
    requestThroughput: seconds > 0 ? completed / seconds : 0,
    outputTokenThroughput: seconds > 0 ? totalOutput / seconds : 0,
    totalTokenThroughput: seconds > 0 ? (totalInput + totalOutput) / seconds : 0,
    userThroughput: mean(userThroughputs),
  };
  const latencies = {} as Record<LatencyMetricName, FullLatencyStats>;
  for (const metric of latencyMetricNames) latencies[metric] = describeLatencies(samples[metric], input.metricPercentiles);
  for (const metric of input.percentileMetrics) result[metric] = latencies[metric];
  const requested = input.prompts.map((p) => ({ inputLen: p.words, outputLen: p.outputLen }));
  return { result, latencies, failures: summarizeFailures(failures), usageReported, perRequest, requested, kvHandovers };
}
