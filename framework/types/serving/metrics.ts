// Which metrics a disagg/wideep job yields and how its test is judged from them.
import type { MetricSpec } from '../../metrics/metric.ts';
import type { Verdict, VerdictContext } from '../../contract/test-type.ts';
import { checkServingResults } from '../../metrics/serving-checks.ts';
import { evaluateAccuracy } from '../../metrics/accuracy.ts';
import { jobFiles } from './job/job-files.ts';
import { SERVING_GATED_METRICS } from './headline.ts';
import { engineOf } from './engines/engines.ts';
import { benchmarkClient, effectiveConcurrencies, metricsOverride, servingConfig, type ServingConfig } from './serving-config.ts';

/** disagg perf/stress: the reference's defaults. */
export const disaggPerfMetrics = ['SERVER_MEDIAN_TTFT', 'SERVER_MEDIAN_E2EL'];

/** wideep perf/stress: SERVER_{MEAN,MEDIAN,P99}_{TTFT,TPOT,ITL,E2EL}, in upstream's order (config_loader's metric_names). */
export const wideepPerfMetrics = ['TTFT', 'TPOT', 'ITL', 'E2EL'].flatMap((metric) =>
  ['MEAN', 'MEDIAN', 'P99'].map((stat) => `SERVER_${stat}_${metric}`),
);

/** Read for the verdict (failed and successful requests per concurrency), on top of the defaults. */
export const verdictMetrics = ['SERVER_FAILED_REQUESTS', 'SERVER_SUCCESSFUL_REQUESTS'];

/** Where aiperf leaves its summary per concurrency (run_benchmark_aiperf.sh's --artifact-dir). */
export const AIPERF_SUMMARY = 'concurrency_*/**/profile_export_aiperf.json';

/**
 * The default metrics this config's client yields: aiperf has no ITL of benchmark_serving's
 * definition (see extractors/aiperf.ts), so *_ITL is not expected from it.
 */
export function expectedPerfMetrics(perfMetrics: string[], config: ServingConfig): string[] {
  const names = [...perfMetrics, ...(engineOf(config).extraMetrics ?? []).filter((name) => !perfMetrics.includes(name))];
  return benchmarkClient(config) === 'aiperf' ? names.filter((name) => !name.endsWith('_ITL')) : names;
}

/**
 * perf/stress: the client's result blocks in 6_bench.log (aiperf: its JSON summaries), unless the config overrides them
 * (benchmark.metrics, read by the 'regex' extractor). accuracy: lm-eval's tables in
 * 7_accuracy_eval_*.log (the override is about the benchmark and does not apply).
 */
export function servingMetricSpecs(perfMetrics: string[]) {
  return (config: Record<string, unknown>, category: string): MetricSpec[] => {
    if (category === 'accuracy') return [{ logFile: jobFiles.accuracy('*'), extractor: 'lm-eval' }];
    const override = metricsOverride(servingConfig(config));
    if (override) {
      return [{
        logFile: override.log_file,
        extractor: 'regex',
        pattern: override.extractor_pattern,
        names: override.metric_names,
        unit: override.unit,
        higherIsBetter: override.higher_is_better,
      }];
    }
    const names = [...expectedPerfMetrics(perfMetrics, servingConfig(config)), ...verdictMetrics];
    // the headline's gated figures, where the client prints them (not every version prints each)
    const optionalNames = SERVING_GATED_METRICS.filter((name) => !names.includes(name));
    if (benchmarkClient(servingConfig(config)) === 'aiperf') return [{ logFile: AIPERF_SUMMARY, extractor: 'aiperf', names, optionalNames }];
    return [{ logFile: jobFiles.bench, extractor: 'serving', names, optionalNames }, ...(engineOf(servingConfig(config)).extraMetricSpecs ?? [])];
  };
}

/**
 * Beyond the generic checks (logs present and complete): accuracy runs all pass the hypothesis
 * test; a benchmark has a result, with every default metric, at every concurrency it ran (as the
 * markers print it: listed value * num_gen_servers) and no more failed requests than
 * benchmark.failed_requests_tolerance (default 0). All reasons at once.
 */
export function servingVerdict(perfMetrics: string[]) {
  return (ctx: VerdictContext): Verdict => {
    const config = servingConfig(ctx.config);
    const failures: string[] = [];
    if (ctx.category === 'accuracy') {
      if (!config.accuracy?.enable_accuracy_test) {
        failures.push('accuracy.enable_accuracy_test is not true, so this accuracy test evaluated nothing');
      }
      failures.push(...evaluateAccuracy(ctx.metrics, config.metadata.accuracy?.datasets ?? []).failures);
    } else if (!metricsOverride(config) && config.benchmark.enable_benchmark !== false) {
      const concurrencies = effectiveConcurrencies(config);
      const serving = checkServingResults(ctx.metrics, {
        concurrencies,
        maxFailedRequests: config.benchmark.failed_requests_tolerance ?? 0,
      });
      failures.push(...serving);
      for (const c of concurrencies) {
        const here = ctx.metrics.filter((m) => Number(m.labels.concurrency) === c);
        if (here.length === 0) continue; // already reported as a missing concurrency
        const missing = expectedPerfMetrics(perfMetrics, config).filter((name) => !here.some((m) => m.name === name));
        if (missing.length > 0) failures.push(`concurrency ${c}: no ${missing.join(', ')} in the benchmark log`);
      }
    }
    return { passed: failures.length === 0, failures };
  };
}
