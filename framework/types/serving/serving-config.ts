// The typed view of a disagg/wideep config and the few facts derived from it that the rules, the
// metrics, the verdict and the job builder must agree on (concurrencies, modes, sizes, tasks).
import type { AccuracyDatasetConfig } from '../../metrics/accuracy.ts';
import type { MetricsOverride } from '../../metrics/extractors/regex.ts';
import { DisaggBenchError } from '../../../runners/common/errors.ts';
import type { ErrorCategory } from '../../../runners/common/errors.ts';

export type BenchmarkMode = 'e2e' | 'gen_only' | 'gen_only_no_context';
export const benchmarkModes: readonly BenchmarkMode[] = ['e2e', 'gen_only', 'gen_only_no_context'];

/** One role's LLM-API options (worker_config.ctx / .gen); the engine owns every other key. */
export interface WorkerConfig {
  tensor_parallel_size?: number;
  pipeline_parallel_size?: number;
  context_parallel_size?: number;
  enable_attention_dp?: boolean;
  max_batch_size?: number;
  max_num_tokens?: number;
  max_seq_len?: number;
  speculative_config?: { decoding_type?: string; num_nextn_predict_layers?: number } | null;
  [key: string]: unknown;
}

/** A dataset of metadata.accuracy.datasets (the accuracy rule's own type; the schema requires dataset_name). */
export type AccuracyDataset = AccuracyDatasetConfig & { dataset_name: string };

export interface AccuracyTaskSpec {
  model?: string;
  model_args_extra?: string;
  extra_kwargs?: Record<string, unknown>;
}

/** Command templates (see job/command-template.ts for placeholders, job/commands.ts for defaults). */
export type CommandTemplate = string | string[];

export interface ServingConfig {
  metadata: {
    model_name: string;
    precision?: string;
    model_dir_name?: string;
    supported_gpus?: string[];
    dataset_file?: string;
    accuracy?: { datasets?: AccuracyDataset[] };
    metrics?: MetricsOverride;
    [key: string]: unknown;
  };
  slurm: {
    partition?: string;
    account?: string;
    job_time: string;
    job_name?: string;
    extra_args?: string;
    numa_bind?: boolean;
    set_segment?: boolean | number;
    /** false: extra_args and set_segment are the config's own, not the GPU type's (job-builder.ts). */
    use_gpu_type_args?: boolean;
    [key: string]: unknown;
  };
  benchmark: {
    mode: BenchmarkMode;
    streaming: boolean;
    concurrency_list: string | number | number[];
    input_length: number;
    output_length: number;
    multi_round?: number;
    /** The SA client's --random-range-ratio (use_nv_sa_benchmark). */
    benchmark_ratio?: number;
    use_nv_sa_benchmark?: boolean;
    dataset_file?: string;
    enable_benchmark?: boolean;
    failed_requests_tolerance?: number;
    /** Newer run_benchmark.sh's exact_warmup_rounds: concurrency * this many prompts before each measured run. */
    exact_warmup_rounds?: number;
    env_var?: string | Record<string, unknown>;
    /** Performance references (framework/metrics/references.ts gives the form). */
    references?: Record<string, unknown>;
    metrics?: MetricsOverride;
    [key: string]: unknown;
  };
  hardware: { gpus_per_node: number; num_ctx_servers: number; num_gen_servers: number };
  environment: {
    container_image?: string;
    container_mount?: string;
    model_path: string;
    work_dir?: string;
    worker_env_var?: string;
    server_env_var?: string;
    ctx_worker_env_var?: string;
    gen_worker_env_var?: string;
    [key: string]: unknown;
  };
  profiling?: { nsys_on?: boolean; ctx_profile_range?: string; gen_profile_range?: string };
  accuracy?: {
    enable_accuracy_test?: boolean;
    env_var?: string | Record<string, unknown>;
    model?: string;
    model_args_extra?: string;
    tasks?: string | Record<string, AccuracyTaskSpec | null>;
  };
  worker_config: { ctx?: WorkerConfig; gen: WorkerConfig };
  commands?: { worker?: CommandTemplate; router?: CommandTemplate; client?: CommandTemplate; warmup?: CommandTemplate; accuracy?: CommandTemplate };
  launch?: {
    /** `direct` or a registered launcher's name (framework/scheduler/launch/). */
    launcher?: string;
    /** A serving engine's name (engines/engines.ts); absent: the first, TensorRT-LLM. */
    engine?: string;
    mpi?: string | null;
    base_port?: number;
    router_port?: number;
    health_timeout_s?: number;
    health_interval_s?: number;
    container_name?: string;
    numa_command?: string;
  };
}

/** The config as its typed view; only call on schema-valid configs. */
export function servingConfig(config: Record<string, unknown>): ServingConfig {
  return config as unknown as ServingConfig;
}

export class ConcurrencyListError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  override name = 'ConcurrencyListError';
}

/**
 * benchmark.concurrency_list: the reference's space-separated string ("1 2 4 8"), a single
 * number (YAML reads `concurrency_list: 1024` as one), or a YAML list of integers.
 */
export function parseConcurrencyList(value: unknown): number[] {
  const items: unknown[] =
    typeof value === 'string' ? value.trim().split(/\s+/).filter(Boolean) : Array.isArray(value) ? value : [value];
  if (items.length === 0) throw new ConcurrencyListError('is empty: give at least one concurrency');
  return items.map((item) => {
    const n = typeof item === 'number' ? item : typeof item === 'string' && /^\d+$/.test(item) ? Number(item) : NaN;
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new ConcurrencyListError(`${JSON.stringify(item)} is not a positive integer`);
    }
    return n;
  });
}

/** The named clients of commands.ts's presets; 'custom' is a config's own command. */
export const namedClients = ['benchmark_serving', 'nv-sa', 'serve-bench', 'aiperf'] as const;
export type BenchmarkClient = (typeof namedClients)[number] | 'custom';

/**
 * Which client the job runs: commands.client when it names one (or is a command of its own),
 * else upstream's choice: the SA client when benchmark.use_nv_sa_benchmark, else benchmark_serving.
 */
export function benchmarkClient(config: ServingConfig): BenchmarkClient {
  const given = config.commands?.client;
  if (given === undefined) return config.benchmark.use_nv_sa_benchmark === true ? 'nv-sa' : 'benchmark_serving';
  const name = typeof given === 'string' ? given.trim() : undefined;
  return namedClients.find((c) => c === name) ?? 'custom';
}

/**
 * The concurrency the client runs with and that labels the results: the listed value is per
 * generation server, so it is multiplied by num_gen_servers (as upstream's run_benchmark.sh and
 * run_benchmark_nv_sa.sh do, whose `Benchmarking with concurrency <c>` markers and CSV names carry
 * the multiplied value); run_benchmark_aiperf.sh runs the listed values as they are.
 */
export function effectiveConcurrencies(config: ServingConfig): number[] {
  const listed = parseConcurrencyList(config.benchmark.concurrency_list);
  return benchmarkClient(config) === 'aiperf' ? listed : listed.map((c) => c * config.hardware.num_gen_servers);
}

/**
 * The UCX warm-up's request count, as upstream's submit.py passes it to run_benchmark.sh:
 * `2 * ctx_world_size * gen_world_size` in e2e mode, 0 (no warm-up) otherwise.
 */
export function ucxWarmupRequests(config: ServingConfig): number {
  return config.benchmark.mode === 'e2e' ? 2 * worldSize(config.worker_config.ctx) * worldSize(config.worker_config.gen) : 0;
}

/** gen_only_no_context benchmarks the generation servers alone: no context server is started. */
export function launchesContextServers(mode: BenchmarkMode): boolean {
  return mode !== 'gen_only_no_context';
}

/** GPUs (ranks) of one server: tp * pp * cp. */
export function worldSize(worker: WorkerConfig | undefined): number {
  return (
    (worker?.tensor_parallel_size ?? 1) * (worker?.pipeline_parallel_size ?? 1) * (worker?.context_parallel_size ?? 1)
  );
}

/** MTP depth T (speculative_config.num_nextn_predict_layers), 0 when MTP is off. */
export function mtpLayers(worker: WorkerConfig | undefined): number {
  const spec = worker?.speculative_config;
  return spec && typeof spec === 'object' ? (spec.num_nextn_predict_layers ?? 0) : 0;
}

export interface AccuracyTask {
  name: string;
  model: string;
  modelArgsExtra: string;
  extraKwargs: Record<string, unknown>;
}

/** Task names become log file names (7_accuracy_eval_<task>.log), so they are kept plain. */
export const TASK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * The accuracy tasks in both spellings users have: `tasks: {gsm8k: {model, model_args_extra,
 * extra_kwargs}}` and the older `tasks: gsm8k` (comma-separated) with model/model_args_extra
 * next to it. Empty unless enable_accuracy_test is true.
 */
export function accuracyTasks(config: ServingConfig): AccuracyTask[] {
  const acc = config.accuracy;
  if (!acc?.enable_accuracy_test || acc.tasks === undefined) return [];
  const model = acc.model ?? 'local-completions';
  const extra = acc.model_args_extra ?? '';
  if (typeof acc.tasks === 'string') {
    return acc.tasks
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean)
      .map((name) => ({ name, model, modelArgsExtra: extra, extraKwargs: {} }));
  }
  return Object.entries(acc.tasks).map(([name, spec]) => ({
    name,
    model: spec?.model ?? model,
    modelArgsExtra: spec?.model_args_extra ?? extra,
    extraKwargs: spec?.extra_kwargs ?? {},
  }));
}

/** The metrics override: benchmark.metrics (the seed's place) or metadata.metrics (older files). */
export function metricsOverride(config: ServingConfig): MetricsOverride | undefined {
  return config.benchmark.metrics ?? config.metadata.metrics;
}
