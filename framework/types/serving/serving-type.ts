// What the disagg and wideep test types share: one schema, one set of rules and overrides, one
// job builder; they differ in name and default metrics.
import type { CsvInfo, JobBuildContext, TestType } from '../../contract/test-type.ts';
import { formatKeyPath } from '../../config/issue.ts';
import { pytestFunctionOf } from '../../config/ids.ts';
import { gpuResources } from '../../config/gpu-resources.ts';
import type { UnresolvedPlaceholderError } from './job/job-builder.ts';
import { metricsOverride, servingConfig } from './serving-config.ts';
import { servingSchema } from './schema.ts';
import { engineOf } from './engines/engines.ts';
import { servingRules } from './rules.ts';
import { servingEnvOverrides } from './overrides.ts';
import { servingHeadline } from './headline.ts';
import { expectedPerfMetrics, servingMetricSpecs, servingVerdict } from './metrics.ts';
import { InputError } from '../../../runners/common/errors.ts';

/** What upstream's config_loader assumes when metadata.supported_gpus is missing. */
export const UPSTREAM_DEFAULT_GPUS = ['GB200', 'GB300', 'H100', 'B200', 'B300'];

/** Upstream's GPU_TYPE when unset (utils/common.py EnvManager.get_gpu_type). */
export const UPSTREAM_DEFAULT_GPU_TYPE = 'GB200';

export interface ServingTypeOptions {
  name: string;
  description: string;
  /** Default perf/stress metrics read from the client's result blocks. */
  perfMetrics: string[];
}

/** The message of a job that cannot be built yet, naming the variable that fills each value. */
function placeholderMessage(error: UnresolvedPlaceholderError): string {
  const byPath = new Map(servingEnvOverrides.map((o) => [formatKeyPath(o.path), o.env]));
  const items = error.unresolved.map((u) => {
    const env = byPath.get(u.path);
    return `${u.path} is still ${u.value}${env ? ` (set ${env})` : ''}`;
  });
  return `the job cannot be built: ${items.join('; ')}`;
}

/** The job builder (~25 modules) is loaded by the first job built: a listing or a plan never needs it. */
async function buildJob(ctx: JobBuildContext) {
  const { buildServingJob, UnresolvedPlaceholderError } = await import('./job/job-builder.ts');
  try {
    return await buildServingJob(ctx, { gpu: ctx.gpuType === undefined ? undefined : { name: ctx.gpuType, ...gpuResources(ctx.gpuType) } });
  } catch (error) {
    if (error instanceof UnresolvedPlaceholderError) throw new InputError(placeholderMessage(error), {}, { cause: error });
    throw error;
  }
}

/**
 * The CSV rows as upstream's result saver writes them (reporting/report.py
 * `_convert_to_perf_result_format`): named `<pytest node name>_con:<N>`, the node name being
 * `test_benchmark[<id>]` (perf; also perf-sanity and any other category here) or
 * `test_stress[<id>]` (test_disagg.py's request.node.name); one row per metric of the config's
 * metric_names (the type's defaults, or metrics override), none for accuracy tests (upstream's
 * test_accuracy writes no CSV). Request counts, the other block lines and accuracy rows only with
 * DISAGG_CSV_EXTRA_ROWS=1.
 */
export function servingCsvInfo(perfMetrics: string[], raw: Record<string, unknown>, category: string, testId: string): CsvInfo {
  const config = servingConfig(raw);
  const { model_name, precision } = config.metadata;
  if (category === 'accuracy') return { model: model_name, precision, metricNames: [] };
  const override = metricsOverride(config);
  return {
    model: model_name,
    precision,
    rowName: `${pytestFunctionOf(category)}[${testId}]`,
    metricNames: override ? override.metric_names : expectedPerfMetrics(perfMetrics, config),
  };
}

/**
 * What makes two runs of a serving config the same test in the history: upstream's disagg match
 * keys (test_perf_sanity.py upload_test_results_to_database: s_benchmark_mode, l_num_ctx_servers,
 * l_num_gen_servers, the ctx/gen servers' tp, ep, max_batch_size and cache transceiver backend,
 * the client's isl and osl), named without their type prefix.
 */
function servingIdentity(raw: Record<string, unknown>): Record<string, string | number> {
  const config = servingConfig(raw);
  const identity: Record<string, string | number> = {
    model_name: config.metadata.model_name,
    benchmark_mode: config.benchmark.mode,
    num_ctx_servers: config.hardware.num_ctx_servers,
    num_gen_servers: config.hardware.num_gen_servers,
    isl: config.benchmark.input_length,
    osl: config.benchmark.output_length,
  };
  for (const role of ['ctx', 'gen'] as const) {
    const worker = config.worker_config[role];
    if (!worker || (role === 'ctx' && config.hardware.num_ctx_servers === 0)) continue;
    identity[`${role}_tp`] = worker.tensor_parallel_size ?? 1;
    identity[`${role}_ep`] = Number(worker.moe_expert_parallel_size ?? 1);
    if (worker.max_batch_size !== undefined) identity[`${role}_max_batch_size`] = worker.max_batch_size;
    const transceiver = worker.cache_transceiver_config as { backend?: string } | undefined;
    identity[`${role}_cache_transceiver_backend`] = transceiver?.backend ?? 'DEFAULT';
  }
  return identity;
}

export function servingTestType(options: ServingTypeOptions): TestType {
  return {
    name: options.name,
    description: options.description,
    schema: servingSchema(`${options.name} test config`),
    rules: servingRules,
    envOverrides: servingEnvOverrides,
    // An engine that runs on CPUs (llamacpp) needs no GPU unless the config lists some.
    supportedGpus: (config) => servingConfig(config).metadata?.supported_gpus ?? (engineOf(servingConfig(config)).runsOnCpu ? undefined : UPSTREAM_DEFAULT_GPUS),
    assumedGpuType: UPSTREAM_DEFAULT_GPU_TYPE,
    metrics: servingMetricSpecs(options.perfMetrics),
    buildJob,
    verdict: servingVerdict(options.perfMetrics),
    references: (config) => servingConfig(config).benchmark.references,
    csvInfo: (config, category, testId) => servingCsvInfo(options.perfMetrics, config, category, testId),
    regression: (config) => (servingConfig(config).benchmark as { regression?: unknown }).regression,
    identity: servingIdentity,
    headline: servingHeadline,
  };
}
