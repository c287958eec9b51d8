// The headline figures of a serving test (disagg, wideep): what upstream's perf pipeline gates on
// (test_perf_sanity.py REGRESSION_METRICS: output token throughput and total token throughput, and
// with speculative decoding the mean decoded tokens per iteration), then the median TTFT and E2EL
// that upstream's disagg CSV carries (and the median ITL where the test records it); each per
// concurrency, in the order the concurrencies ran.
import type { Metric } from '../../metrics/metric.ts';
import { named } from '../../metrics/headline-picks.ts';
import { metricsOverride, servingConfig } from './serving-config.ts';
import { engineOf } from './engines/engines.ts';

/** Upstream's gated figures, most important first (the last only where the client printed it). */
export const SERVING_GATED_METRICS = ['SERVER_OUTPUT_TOKEN_THROUGHPUT', 'SERVER_TOTAL_TOKEN_THROUGHPUT', 'SERVER_MEAN_AVG_DECODED_TOKENS_PER_ITER'];

/** The median ITL joins where the engine records it (extraMetrics): the defaults of upstream's types carry none. */
const headlineOrder = (itl: boolean) => [...SERVING_GATED_METRICS, 'SERVER_MEDIAN_TTFT', ...(itl ? ['SERVER_MEDIAN_ITL'] : []), 'SERVER_MEDIAN_E2EL'];

/**
 * Per concurrency, the gated figures then median TTFT and E2EL; an accuracy test's accuracy; a
 * config that replaces the metrics (benchmark.metrics) headlines the metrics it names.
 */
export function servingHeadline(metrics: readonly Metric[], config: Record<string, unknown>, category: string): Metric[] {
  if (category === 'accuracy') return named(metrics, 'ACCURACY');
  // No config at hand (an older record judged without it): no override, the type's figures.
  const override = Object.keys(config).length ? metricsOverride(servingConfig(config)) : undefined;
  if (override) return metrics.filter((m) => override.metric_names.includes(m.name));
  const concurrencies = [...new Set(metrics.map((m) => m.labels.concurrency).filter((c) => c !== undefined))];
  const order = headlineOrder((engineOf(servingConfig(config)).extraMetrics ?? []).includes('SERVER_MEDIAN_ITL'));
  return concurrencies.flatMap((concurrency) => order.flatMap((name) => named(metrics, name, { concurrency })));
}
