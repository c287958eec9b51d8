// The disagg/wideep JSON Schemas compiled by ajv (draft 2020-12, allErrors, strict off, as the
// validator runs them): the committed examples pass, every section's known keys are type-checked,
// unknown keys are errors except inside worker_config.ctx/gen.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import { parse } from 'yaml';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';
import { describe, expect, test } from 'vitest';
import { disaggType } from '../../framework/types/disagg.ts';
import { wideepType } from '../../framework/types/wideep.ts';
import { servingRules } from '../../framework/types/serving/rules.ts';
import { baseConfig } from '../fixtures/serving/base-config.ts';

const root = path.resolve(import.meta.dirname, '../..');
const ajv = new Ajv2020({ allErrors: true, strict: false });
const validateDisagg = ajv.compile(disaggType.schema);
const validateWideep = ajv.compile(wideepType.schema);

/** The errors as `path keyword` strings, e.g. `/benchmark/mode enum`, `/slurm/job_time required`. */
function errorsOf(config: unknown): string[] {
  validateDisagg(config);
  return (validateDisagg.errors ?? []).map((e: ErrorObject) => {
    const extra = e.keyword === 'required' ? `/${e.params.missingProperty}` : e.keyword === 'additionalProperties' ? `/${e.params.additionalProperty}` : '';
    return `${e.instancePath}${extra} ${e.keyword}`;
  });
}

const valid = (patch: Record<string, unknown>) => expect(errorsOf(baseConfig(patch))).toEqual([]);

describe('the committed example configs', () => {
  const files = fg.sync(['test_configs/disagg/**/*.yaml', 'test_configs/wideep/**/*.yaml'], { cwd: root });

  test('there are examples of both types and every category the reference has here', () => {
    expect(files.some((f) => f.startsWith('test_configs/disagg/perf/'))).toBe(true);
    expect(files.some((f) => f.startsWith('test_configs/disagg/accuracy/'))).toBe(true);
    expect(files.some((f) => f.startsWith('test_configs/wideep/perf/'))).toBe(true);
  });

  test.each(files)('%s passes its schema and its rules', (file) => {
    const config = parse(readFileSync(path.join(root, file), 'utf8'));
    const validate = file.startsWith('test_configs/wideep/') ? validateWideep : validateDisagg;
    expect(validate(config) ? [] : validate.errors).toEqual([]);
    expect(servingRules(config)).toEqual([]);
  });
});

describe('sections and keys', () => {
  test("the seed's minimal example passes the schema, placeholders included", () => {
    const seed = parse(`
metadata: {model_name: "deepseek-r1-fp4", precision: "fp4", supported_gpus: ["GB200"]}
slurm: {partition: "<partition>", account: "<account>", job_time: "02:00:00"}
benchmark: {mode: "e2e", streaming: true, concurrency_list: "1 2 4 8 16 36", input_length: 1024, output_length: 1024}
hardware: {gpus_per_node: 4, num_ctx_servers: 1, num_gen_servers: 4}
environment: {container_mount: "<container_mount>", container_image: "<container_image>", model_path: "<model_path>"}
worker_config:
  gen: {tensor_parallel_size: 8, moe_expert_parallel_size: 8, max_batch_size: 32, max_num_tokens: 32, max_seq_len: 2251}
  ctx: {tensor_parallel_size: 4, moe_expert_parallel_size: 4, max_batch_size: 4, max_num_tokens: 4608, max_seq_len: 2251}
`);
    expect(errorsOf(seed)).toEqual([]);
  });

  test('the required sections are required', () => {
    expect(errorsOf({})).toEqual([
      '/metadata required', '/slurm required', '/benchmark required', '/hardware required', '/environment required', '/worker_config required',
    ]);
  });

  test('an unknown top-level section and a misspelt key in a section are errors', () => {
    expect(errorsOf(baseConfig({ benchmarks: {} }))).toEqual(['/benchmarks additionalProperties']);
    expect(errorsOf(baseConfig({ benchmark: { concurency_list: '1' } }))).toEqual(['/benchmark/concurency_list additionalProperties']);
    expect(errorsOf(baseConfig({ environment: { container_imgae: 'x' } }))).toEqual(['/environment/container_imgae additionalProperties']);
  });

  test('every key the reference lists is accepted', () => {
    valid({
      metadata: {
        model_dir_name: 'DeepSeek-R1', script_file: 'disaggr_torch.slurm', benchmark_type: '1k1k', dataset_file: 'd.json', config_index: -1,
        accuracy: { datasets: [{ dataset_name: 'gsm8k', expected_value: 0.9454, threshold_type: 'hypothesis_test', filter_type: 'flexible-extract', alpha: 0.05, beta: 0.2, sigma: 50, num_samples: 1319, higher_is_better: true }] },
      },
      slurm: { script_file: 'x.slurm', job_name: 'bench', extra_args: '--gres=gpu:4', numa_bind: true, set_segment: true },
      benchmark: {
        use_nv_sa_benchmark: false, multi_round: 8, benchmark_ratio: 0.8, dataset_file: '<dataset_file>', env_var: 'A=1', enable_benchmark: true,
        failed_requests_tolerance: 2, metrics: { log_file: 'x.log', extractor_pattern: 'x ([0-9]+)', metric_names: ['X'] },
      },
      environment: {
        container_mount: '/a:/a', container_image: 'img', trtllm_repo: '', build_wheel: false, work_dir: '/w', worker_env_var: 'A=1',
        server_env_var: 'B=2', ctx_worker_env_var: 'C=3', gen_worker_env_var: 'D=4', trtllm_wheel_path: '', cuda_architectures: '100a', log_dir: '/l',
      },
      profiling: { nsys_on: true, ctx_profile_range: '10-30', gen_profile_range: '200-250' },
      accuracy: { enable_accuracy_test: true, env_var: { HF_HOME: '/hf' }, tasks: { gsm8k: { model: 'local-completions', model_args_extra: 'a=1', extra_kwargs: { trust_remote_code: true } } } },
      commands: { worker: 'w {model}', router: ['r', '{config}'], client: 'serve-bench', accuracy: 'lm_eval --tasks {task}' },
      launch: { launcher: 'direct', mpi: null, base_port: 9000, router_port: 9500, health_timeout_s: 60, health_interval_s: 2, container_name: 'c', numa_command: 'numactl -m 0' },
    });
  });

  test('the older accuracy spelling (tasks as a string, model next to it) is accepted', () => {
    valid({ accuracy: { enable_accuracy_test: false, model: 'local-completions', tasks: 'gsm8k', model_args_extra: 'num_concurrent=512' } });
  });
});

describe('types and forms', () => {
  test('job_time is HH:MM:SS or D-HH:MM:SS', () => {
    valid({ slurm: { job_time: '1-02:00:00' } });
    valid({ slurm: { job_time: '00:45:00' } });
    for (const bad of ['2h', '02:00', '02:60:00', 7200]) {
      expect(errorsOf(baseConfig({ slurm: { job_time: bad } }))).toContainEqual(expect.stringMatching(/^\/slurm\/job_time (pattern|type)$/));
    }
  });

  test('concurrency_list: a space-separated string, one integer or a list of integers', () => {
    valid({ benchmark: { concurrency_list: '1 2 4 8 16 36' } });
    valid({ benchmark: { concurrency_list: 1024 } });
    valid({ benchmark: { concurrency_list: [1, 2, 4] } });
    expect(errorsOf(baseConfig({ benchmark: { concurrency_list: '1 2 x' } }))).toEqual(['/benchmark/concurrency_list pattern']);
    expect(errorsOf(baseConfig({ benchmark: { concurrency_list: '0 4' } }))).toEqual(['/benchmark/concurrency_list pattern']);
    expect(errorsOf(baseConfig({ benchmark: { concurrency_list: [4, 0] } }))).toEqual(['/benchmark/concurrency_list/1 minimum']);
    expect(errorsOf(baseConfig({ benchmark: { concurrency_list: [] } }))).toEqual(['/benchmark/concurrency_list minItems']);
  });

  test('benchmark.mode is one of the three modes', () => {
    expect(errorsOf(baseConfig({ benchmark: { mode: 'ctx_only' } }))).toEqual(['/benchmark/mode enum']);
  });

  test('hardware counts are integers in range', () => {
    expect(errorsOf(baseConfig({ hardware: { gpus_per_node: 0, num_ctx_servers: -1, num_gen_servers: '1' } }))).toEqual([
      '/hardware/gpus_per_node minimum', '/hardware/num_ctx_servers minimum', '/hardware/num_gen_servers type',
    ]);
  });

  test('worker_config: known keys are type-checked, unknown keys pass through', () => {
    valid({ worker_config: { gen: { enable_layerwise_nvtx_marker: true, some_future_option: { nested: [1, 2] } } } });
    valid({ worker_config: { gen: { cuda_graph_config: null }, ctx: { cuda_graph_config: { enable_padding: true, batch_sizes: [1, 2] } } } });
    expect(
      errorsOf(baseConfig({ worker_config: { gen: { tensor_parallel_size: 0, cuda_graph_config: 'yes', cache_transceiver_config: { backend: 'TCP' } } } })),
    ).toEqual([
      '/worker_config/gen/tensor_parallel_size minimum',
      '/worker_config/gen/cuda_graph_config type',
      '/worker_config/gen/cache_transceiver_config/backend enum',
    ]);
    expect(errorsOf(baseConfig({ worker_config: { ctx: { max_batch_size: '4', kv_cache_config: { free_gpu_memory_fraction: 1.5 } } } }))).toEqual([
      '/worker_config/ctx/max_batch_size type',
      '/worker_config/ctx/kv_cache_config/free_gpu_memory_fraction maximum',
    ]);
    for (const backend of ['NIXL', 'UCX', 'DEFAULT']) valid({ worker_config: { gen: { cache_transceiver_config: { backend } } } });
  });

  test('worker_config holds only ctx and gen, and gen is required', () => {
    const config = baseConfig({ worker_config: { router: {} } });
    delete (config.worker_config as Record<string, unknown>).gen;
    expect(errorsOf(config)).toEqual(['/worker_config/gen required', '/worker_config/router additionalProperties']);
  });

  test('accuracy datasets need a name and an expected value; only the hypothesis test is known', () => {
    expect(
      errorsOf(baseConfig({ metadata: { accuracy: { datasets: [{ name: 'gsm8k', expected_value: 0.9, threshold_type: 'absolute' }] } } })),
    ).toEqual([
      '/metadata/accuracy/datasets/0/dataset_name required',
      '/metadata/accuracy/datasets/0/name additionalProperties',
      '/metadata/accuracy/datasets/0/threshold_type enum',
    ]);
  });

  test('accuracy task names must be plain (they name log files)', () => {
    expect(errorsOf(baseConfig({ accuracy: { tasks: { '../gsm8k': null } } }))).toEqual([
      '/accuracy/tasks pattern',
      '/accuracy/tasks propertyNames',
    ]);
  });

  test('commands are a non-empty string or a list of words; launch values are checked', () => {
    expect(errorsOf(baseConfig({ commands: { worker: '', client: [] } }))).toEqual(['/commands/worker minLength', '/commands/client minItems']);
    // A launcher's name is checked against the registered launchers by the rules (tests/scheduler/launchers.test.ts).
    expect(errorsOf(baseConfig({ launch: { launcher: 'S S H', base_port: 70000, container_name: 'a b', engine: 'vllm' } }))).toEqual([
      '/launch/launcher pattern', '/launch/engine enum', '/launch/base_port maximum', '/launch/container_name pattern',
    ]);
  });

  test('env vars are a NAME=value string or a mapping of scalars', () => {
    valid({ accuracy: { env_var: 'HF_HOME=/hf' } });
    expect(errorsOf(baseConfig({ accuracy: { env_var: { HF_HOME: ['/hf'] } } }))).toEqual(['/accuracy/env_var/HF_HOME type']);
  });
});
