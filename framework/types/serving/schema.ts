// JSON Schema (draft 2020-12) of a disagg/wideep config: every key the reference lists. Unknown
// keys are errors in every section (a typo such as `concurency_list` must not pass silently),
// except inside worker_config.ctx/gen, which the serving engine owns and receives verbatim.
// Cross-key rules (MTP tokens, sequence lengths, concurrency bounds...) are in rules.ts.
import type { JsonSchema } from '../../contract/test-type.ts';
import { TASK_NAME, benchmarkModes } from './serving-config.ts';
import { secondsSchema } from '../../../runners/common/number-bounds.ts';
import { regressionSchema } from '../../metrics/regression-thresholds.ts';
import { engineNames } from './engines/engines.ts';

const str = { type: 'string' };
const nonEmpty = { type: 'string', minLength: 1 };
const bool = { type: 'boolean' };
const int = (minimum: number) => ({ type: 'integer', minimum });
const port = { type: 'integer', minimum: 1, maximum: 65535 };
const fraction = { type: 'number', exclusiveMinimum: 0, maximum: 1 };

/** A section: its keys, the required ones, and sentences for keys of older layouts (x-hints). */
function section(properties: Record<string, unknown>, required: string[] = [], hints?: Record<string, string>): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: false, ...(hints ? { 'x-hints': hints } : {}) };
}

/** `A=1 B=2` (the reference's form, checked in rules.ts) or a mapping {A: 1}. */
const envVars = { type: ['string', 'object'], additionalProperties: { type: ['string', 'number', 'boolean'] } };

/** A command template: one line (split like a shell would, no expansion) or a list of words. */
const commandTemplate = { type: ['string', 'array'], minLength: 1, minItems: 1, items: str };

const metricsOverride = section(
  {
    log_file: nonEmpty,
    extractor_pattern: nonEmpty,
    metric_names: { type: 'array', items: nonEmpty, minItems: 1 },
    unit: nonEmpty,
    higher_is_better: bool,
  },
  ['log_file', 'extractor_pattern', 'metric_names'],
);

const accuracyDataset = section(
  {
    dataset_name: nonEmpty,
    expected_value: { type: 'number', minimum: 0 },
    // The only rule the accuracy judge knows (framework/metrics/accuracy.ts).
    threshold_type: { enum: ['hypothesis_test'] },
    filter_type: nonEmpty,
    metric: nonEmpty,
    alpha: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    beta: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    sigma: { type: 'number', minimum: 0 },
    num_samples: int(1),
    higher_is_better: bool,
  },
  ['dataset_name', 'expected_value'],
);

/** What upstream does without a key it reads (see docs/trtllm-compatibility.md). */
const upstreamKeyError = (reader: string) =>
  `is required but missing: upstream's ${reader} reads it and fails with a KeyError without it`;

/**
 * One role's LLM-API options: the known keys are type-checked, every other key passes through.
 * max_seq_len is required by rules.ts outside perf-sanity (upstream's validator reads it there).
 */
const workerConfig: JsonSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['tensor_parallel_size', 'max_batch_size', 'max_num_tokens'],
  'x-hints': {
    tensor_parallel_size: upstreamKeyError('utils/common.py (extract_config_fields) and submit.py'),
    max_batch_size: upstreamKeyError('utils/common.py (extract_config_fields)'),
    max_num_tokens: upstreamKeyError('utils/common.py (extract_config_fields)'),
  },
  properties: {
    tensor_parallel_size: int(1),
    pipeline_parallel_size: int(1),
    context_parallel_size: int(1),
    moe_expert_parallel_size: int(1),
    enable_attention_dp: bool,
    enable_lm_head_tp_in_adp: bool,
    max_batch_size: int(1),
    max_num_tokens: int(1),
    max_seq_len: int(1),
    cuda_graph_config: {
      type: ['object', 'null'],
      properties: { enable_padding: bool, batch_sizes: { type: 'array', items: int(1) }, max_batch_size: int(1) },
    },
    print_iter_log: bool,
    kv_cache_config: {
      type: 'object',
      properties: { enable_block_reuse: bool, free_gpu_memory_fraction: fraction, dtype: nonEmpty },
    },
    moe_config: {
      type: 'object',
      properties: {
        backend: nonEmpty,
        // A mapping, or the path of a YAML file holding one.
        load_balancer: { type: ['object', 'string'], properties: { num_slots: int(0), layer_updates_per_iter: int(0) } },
        use_low_precision_moe_combine: bool,
      },
    },
    cache_transceiver_config: {
      type: 'object',
      // MPI is not in the reference's list but the engine's documentation accepts it.
      properties: { max_tokens_in_buffer: int(1), backend: { enum: ['NIXL', 'UCX', 'DEFAULT', 'MPI'] } },
    },
    stream_interval: int(1),
    num_postprocess_workers: int(0),
    speculative_config: {
      type: ['object', 'null'],
      properties: { decoding_type: nonEmpty, num_nextn_predict_layers: int(0) },
    },
    disable_overlap_scheduler: bool,
    allreduce_strategy: nonEmpty,
  },
};

export function servingSchema(title: string): JsonSchema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title,
    type: 'object',
    additionalProperties: false,
    required: ['metadata', 'slurm', 'benchmark', 'hardware', 'environment', 'worker_config'],
    'x-hints': {
      sequence:
        'is the older layout (input_length/output_length under sequence): upstream\'s current framework reads ' +
        'benchmark.input_length and benchmark.output_length and fails with a KeyError on this file; move both into benchmark',
    },
    properties: {
      metadata: section(
        {
          model_name: nonEmpty,
          precision: nonEmpty,
          model_dir_name: nonEmpty,
          supported_gpus: { type: 'array', items: nonEmpty, minItems: 1 },
          script_file: str,
          benchmark_type: str,
          dataset_file: str,
          config_index: { type: 'integer' },
          accuracy: section({ datasets: { type: 'array', items: accuracyDataset } }),
          metrics: metricsOverride,
        },
        // supported_gpus defaults to upstream's [GB200, GB300, H100, B200, B300] (serving-type.ts).
        ['model_name', 'precision'],
      ),
      slurm: section(
        {
          script_file: str,
          partition: str,
          account: str,
          job_time: { type: 'string', pattern: '^(\\d+-)?\\d{1,2}:[0-5]\\d:[0-5]\\d$' },
          job_name: nonEmpty,
          extra_args: str,
          numa_bind: bool,
          // true: one segment of all the job's nodes; a number: that segment size.
          set_segment: { type: ['boolean', 'integer'], minimum: 1 },
          // false: extra_args and set_segment are this config's, not the GPU type's (upstream's loader replaces them).
          use_gpu_type_args: bool,
        },
        ['partition', 'account', 'job_time'],
      ),
      benchmark: section(
        {
          mode: { enum: [...benchmarkModes] },
          use_nv_sa_benchmark: bool,
          multi_round: int(1),
          // Upstream's SA client's --random-range-ratio (perf-sanity configs use 0.0); unused otherwise.
          benchmark_ratio: { type: 'number', minimum: 0 },
          streaming: bool,
          // "1 2 4 8" (the reference's form), a single integer, or a list of integers.
          concurrency_list: {
            type: ['string', 'integer', 'array'],
            pattern: '^\\s*[1-9]\\d*(\\s+[1-9]\\d*)*\\s*$',
            minimum: 1,
            items: int(1),
            minItems: 1,
          },
          input_length: int(1),
          output_length: int(1),
          dataset_file: str,
          env_var: envVars,
          enable_benchmark: bool,
          failed_requests_tolerance: int(0),
          // Newer run_benchmark.sh's exact-shape warm-up: concurrency * this many prompts first.
          exact_warmup_rounds: int(0),
          metrics: metricsOverride,
          // Checked by rules.ts through framework/metrics/references.ts.
          references: { type: 'object' },
          // Thresholds against the performance history (framework/metrics/regression-thresholds.ts).
          regression: regressionSchema,
        },
        ['mode', 'streaming', 'concurrency_list', 'input_length', 'output_length'],
      ),
      hardware: section(
        // gpu_type: in one upstream config, read by none of upstream's framework versions checked
        // (the run's type is GPU_TYPE): accepted and unused (docs/trtllm-compatibility.md).
        { gpus_per_node: int(1), num_ctx_servers: int(0), num_gen_servers: int(1), gpu_type: nonEmpty },
        ['gpus_per_node', 'num_ctx_servers', 'num_gen_servers'],
      ),
      environment: section(
        {
          container_mount: str,
          container_image: str,
          model_path: nonEmpty,
          trtllm_repo: str,
          build_wheel: bool,
          work_dir: str,
          worker_env_var: str,
          server_env_var: str,
          ctx_worker_env_var: str,
          gen_worker_env_var: str,
          trtllm_wheel_path: str,
          cuda_architectures: str,
          log_dir: str,
        },
        ['model_path'],
        {
          dataset_file:
            "is the older layout's place of the dataset: upstream's current framework reads benchmark.dataset_file " +
            '(DATASET_DIR joined with metadata.dataset_file) and ignores this key; move it to benchmark.dataset_file',
        },
      ),
      profiling: section({
        nsys_on: bool,
        ctx_profile_range: { type: 'string', pattern: '^\\d+-\\d+$' },
        gen_profile_range: { type: 'string', pattern: '^\\d+-\\d+$' },
      }),
      accuracy: section({
        enable_accuracy_test: bool,
        env_var: envVars,
        // The older spelling: tasks as a string, model and model_args_extra next to it.
        model: nonEmpty,
        model_args_extra: str,
        tasks: {
          type: ['string', 'object'],
          propertyNames: { pattern: TASK_NAME.source },
          additionalProperties: {
            type: ['object', 'null'],
            properties: { model: nonEmpty, model_args_extra: str, extra_kwargs: { type: 'object' } },
            additionalProperties: false,
          },
        },
      }),
      worker_config: section({ ctx: workerConfig, gen: workerConfig }, ['gen'], {
        eplb_num_slots:
          "is the older layout's EPLB setting: upstream's current framework reads " +
          'worker_config.gen.moe_config.load_balancer.num_slots instead; move the value there',
      }),
      commands: section({ worker: commandTemplate, router: commandTemplate, client: commandTemplate, warmup: commandTemplate, accuracy: commandTemplate }),
      launch: section({
        // direct: no launcher (the local one); else a registered launcher (srun, local, mpirun...),
        // which the rules check: one registered from a site's own code comes after this schema.
        launcher: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' },
        engine: { enum: engineNames() },
        mpi: { type: ['string', 'null'], pattern: '^[A-Za-z0-9_]*$' },
        base_port: port,
        router_port: port,
        health_timeout_s: secondsSchema({ integer: true, minimum: 1 }),
        health_interval_s: int(1),
        container_name: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$' },
        numa_command: nonEmpty,
      }),
    },
  };
}
