// Semantic rules of disagg/wideep configs: each rule valid and invalid, with its message and the
// key path of the offending value (the core turns that path into file:line:col).
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { servingRules } from '../../framework/types/serving/rules.ts';
import { disaggType } from '../../framework/types/disagg.ts';
import { parseYaml } from '../../framework/config/load.ts';
import { validateConfig } from '../../framework/config/validate.ts';
import { formatIssue } from '../../framework/config/issue.ts';
import { baseConfig } from '../fixtures/serving/base-config.ts';

const rules = (patch: Record<string, unknown> = {}) => servingRules(baseConfig(patch));

describe('a valid config', () => {
  test('has no findings', () => {
    expect(rules()).toEqual([]);
  });
});

describe('MTP: gen.max_num_tokens >= gen.max_batch_size * (T + 1)', () => {
  const mtp = (layers: number, tokens: number) =>
    rules({ worker_config: { gen: { max_batch_size: 32, max_num_tokens: tokens, speculative_config: { decoding_type: 'MTP', num_nextn_predict_layers: layers } } } });

  test('too few tokens for MTP 3 is named with the numbers', () => {
    expect(mtp(3, 32)).toEqual([
      { path: ['worker_config', 'gen', 'max_num_tokens'], message: '32 is below max_batch_size * (mtp + 1) = 128 (upstream\'s config_validator refuses it too)' },
    ]);
  });
  test('exactly enough, more than enough, and MTP off pass', () => {
    expect(mtp(3, 128)).toEqual([]);
    expect(mtp(1, 512)).toEqual([]);
    expect(mtp(0, 32)).toEqual([]);
    expect(rules({ worker_config: { gen: { speculative_config: null } } })).toEqual([]);
  });
});

describe('streaming', () => {
  test('false is refused', () => {
    expect(rules({ benchmark: { streaming: false } })).toEqual([
      { path: ['benchmark', 'streaming'], message: 'must be true (TTFT, TPOT and ITL are measured on streamed tokens) (upstream\'s config_validator refuses it too)' },
    ]);
  });
});

describe('max_seq_len bounds', () => {
  test('ctx.max_seq_len must exceed input_length', () => {
    expect(rules({ worker_config: { ctx: { max_seq_len: 1024 } } })).toEqual([
      { path: ['worker_config', 'ctx', 'max_seq_len'], message: '1024 must be greater than input_length = 1024 (upstream\'s config_validator refuses it too)' },
    ]);
    expect(rules({ worker_config: { ctx: { max_seq_len: 1025 } } })).toEqual([]);
  });
  test('gen.max_seq_len must exceed input_length + output_length', () => {
    expect(rules({ worker_config: { gen: { max_seq_len: 2048 } } })).toEqual([
      { path: ['worker_config', 'gen', 'max_seq_len'], message: '2048 must be greater than input_length + output_length = 2048 (upstream\'s config_validator refuses it too)' },
    ]);
    expect(rules({ worker_config: { gen: { max_seq_len: 2049 } } })).toEqual([]);
  });
  test('without context servers the ctx bound does not apply', () => {
    expect(
      rules({ benchmark: { mode: 'gen_only_no_context' }, hardware: { num_ctx_servers: 0 }, worker_config: { ctx: { max_seq_len: 10 } } }),
    ).toEqual([]);
  });
});

describe('concurrency bounds', () => {
  test('with attention DP the bound is max_batch_size * tensor_parallel_size', () => {
    expect(rules({ benchmark: { concurrency_list: '64 128' } })).toEqual([]);
    expect(rules({ benchmark: { concurrency_list: '64 129 256' } })).toEqual([
      { path: ['benchmark', 'concurrency_list'], message: 'concurrency 129 exceeds gen max_batch_size * tensor_parallel_size = 128 (attention DP) (upstream\'s config_validator refuses it too)' },
      { path: ['benchmark', 'concurrency_list'], message: 'concurrency 256 exceeds gen max_batch_size * tensor_parallel_size = 128 (attention DP) (upstream\'s config_validator refuses it too)' },
    ]);
  });
  test('without attention DP the bound is max_batch_size', () => {
    const noDp = { worker_config: { gen: { enable_attention_dp: false } } };
    expect(rules({ ...noDp, benchmark: { concurrency_list: '32' } })).toEqual([]);
    expect(rules({ ...noDp, benchmark: { concurrency_list: '33' } })).toEqual([
      { path: ['benchmark', 'concurrency_list'], message: 'concurrency 33 exceeds gen max_batch_size = 32 (upstream\'s config_validator refuses it too)' },
    ]);
  });
  test('a list form points at the offending item', () => {
    expect(rules({ benchmark: { concurrency_list: [8, 200] } })).toEqual([
      { path: ['benchmark', 'concurrency_list', 1], message: 'concurrency 200 exceeds gen max_batch_size * tensor_parallel_size = 128 (attention DP) (upstream\'s config_validator refuses it too)' },
    ]);
  });
  test('an empty list is refused', () => {
    expect(rules({ benchmark: { concurrency_list: '  ' } })).toEqual([
      { path: ['benchmark', 'concurrency_list'], message: 'is empty: give at least one concurrency' },
    ]);
  });
  test("the seed's minimal example breaks it (36 > gen max_batch_size 32 without attention DP)", () => {
    const seedLike = { benchmark: { concurrency_list: '1 2 4 8 16 36' }, worker_config: { gen: { enable_attention_dp: false } } };
    expect(rules(seedLike).map((v) => v.message)).toEqual(['concurrency 36 exceeds gen max_batch_size = 32 (upstream\'s config_validator refuses it too)']);
  });
});

describe('context servers and server shapes', () => {
  test('e2e and gen_only need context servers and their worker config', () => {
    const noCtx = baseConfig({ hardware: { num_ctx_servers: 0 } });
    delete (noCtx.worker_config as Record<string, unknown>).ctx;
    for (const mode of ['e2e', 'gen_only']) {
      (noCtx.benchmark as Record<string, unknown>).mode = mode;
      expect(servingRules(noCtx)).toEqual([
        { path: ['hardware', 'num_ctx_servers'], message: `must be at least 1 in mode ${mode} (only gen_only_no_context runs without context servers)` },
        { path: ['worker_config', 'ctx'], message: `is required in mode ${mode} (only gen_only_no_context runs without context servers)` },
      ]);
    }
    (noCtx.benchmark as Record<string, unknown>).mode = 'gen_only_no_context';
    expect(servingRules(noCtx)).toEqual([]);
  });
  test('a server that neither fills whole nodes nor divides one is refused', () => {
    expect(rules({ worker_config: { gen: { tensor_parallel_size: 6 } } })).toEqual([
      {
        path: ['worker_config', 'gen', 'tensor_parallel_size'],
        message: 'a server of 6 GPUs neither fills whole nodes of 4 GPUs nor divides one (gpus_per_node); world = tp * pp * cp = 6',
      },
    ]);
    expect(rules({ worker_config: { ctx: { tensor_parallel_size: 2, pipeline_parallel_size: 4 } } })).toEqual([]);
  });
});

describe('ports', () => {
  test('the router port must not be a worker port', () => {
    expect(rules({ launch: { base_port: 8332 } })).toEqual([
      { path: ['launch', 'router_port'], message: '8333 is one of the worker ports 8332-8333: move the router or launch.base_port' },
    ]);
    expect(rules({ launch: { base_port: 65535 } })).toEqual([
      { path: ['launch', 'base_port'], message: '65535 + 2 servers runs past port 65535' },
    ]);
  });
});

describe('shell strings', () => {
  test('env strings must be NAME=value words', () => {
    expect(rules({ environment: { worker_env_var: 'A=1 B="two words" C=' } })).toEqual([]);
    expect(rules({ environment: { worker_env_var: 'A=1 oops', server_env_var: 'X="unterminated' } })).toEqual([
      { path: ['environment', 'worker_env_var'], message: '"oops" is not of the form NAME=value' },
      { path: ['environment', 'server_env_var'], message: 'unterminated " quote in "X=\\"unterminated"' },
    ]);
  });
  test('a placeholder env string is left for the environment to fill', () => {
    expect(rules({ environment: { worker_env_var: '<worker_env>' } })).toEqual([]);
  });
  test('env mappings need valid names; extra sbatch args must split', () => {
    expect(rules({ accuracy: { env_var: { 'BAD-NAME': 'x', HF_HOME: '/hf' } }, slurm: { extra_args: "--comment='x" } })).toEqual([
      { path: ['slurm', 'extra_args'], message: `unterminated ' quote in "--comment='x"` },
      { path: ['accuracy', 'env_var', 'BAD-NAME'], message: 'is not a valid environment variable name' },
    ]);
  });
});

describe('command templates', () => {
  test('known placeholders and client presets pass', () => {
    expect(rules({ commands: { worker: 'my-server --model {model} --host {host} --port {port}', client: 'serve-bench', router: ['router', '-c', '{config}'] } })).toEqual([]);
  });
  test('an unknown placeholder names what the command knows', () => {
    const [finding] = rules({ commands: { router: 'router --port {port} --c {concurrency}' } });
    expect(finding.path).toEqual(['commands', 'router']);
    expect(finding.message).toMatch(/^unknown placeholder \{concurrency\}; router knows \{model\} .*\{health_timeout\}$/);
  });
  test('an unterminated quote is reported', () => {
    expect(rules({ commands: { client: "bench --x 'y" } })).toEqual([
      { path: ['commands', 'client'], message: `unterminated ' quote in "bench --x 'y"` },
    ]);
  });
});

describe('metrics override', () => {
  const override = (extractor_pattern: string, metric_names: string[]) => ({ log_file: 'x.log', extractor_pattern, metric_names });
  test('a pattern with one group per name passes', () => {
    expect(rules({ benchmark: { metrics: override('TTFT:\\s+([0-9.]+)', ['CUSTOM_TTFT']) } })).toEqual([]);
  });
  test('a pattern that does not compile, or has the wrong group count, is refused', () => {
    const bad = rules({ benchmark: { metrics: override('TTFT: ([0-9.]+', ['A']) } });
    expect(bad).toHaveLength(1);
    expect(bad[0].path).toEqual(['benchmark', 'metrics', 'extractor_pattern']);
    expect(bad[0].message).toMatch(/^extractor_pattern does not compile: /);
    const count = rules({ benchmark: { metrics: override('a ([0-9]+) b ([0-9]+)', ['A']) } });
    expect(count[0].message).toMatch(/^extractor_pattern has 2 value capture group\(s\) but metric_names has 1 \(A\)/);
  });
  test('the override in both places is refused', () => {
    const both = rules({ benchmark: { metrics: override('a ([0-9]+)', ['A']) }, metadata: { metrics: override('b ([0-9]+)', ['B']) } });
    expect(both).toEqual([{ path: ['metadata', 'metrics'], message: 'the metrics override is also set in benchmark.metrics: keep only that one' }]);
  });
});

describe('performance references', () => {
  test('valid references pass, malformed ones are named', () => {
    expect(rules({ benchmark: { references: { SERVER_MEDIAN_TTFT: [150, -0.1, 0.1] } } })).toEqual([]);
    const [finding] = rules({ benchmark: { references: { SERVER_MEDIAN_TTFT: [150, 0.1, 0.1] } } });
    expect(finding).toEqual({ path: ['benchmark', 'references'], message: "reference 'SERVER_MEDIAN_TTFT': lower must be a number <= 0 (a fraction of ref)" });
  });
});

describe('accuracy datasets', () => {
  const gsm8k = { dataset_name: 'gsm8k', expected_value: 0.9454 };
  test('enabled with a task producing every dataset passes, in both spellings of tasks', () => {
    expect(rules({ metadata: { accuracy: { datasets: [gsm8k] } }, accuracy: { enable_accuracy_test: true, tasks: { gsm8k: { model: 'local-completions' } } } })).toEqual([]);
    expect(rules({ metadata: { accuracy: { datasets: [gsm8k] } }, accuracy: { enable_accuracy_test: true, tasks: 'gsm8k,mmlu' } })).toEqual([]);
  });
  test('enabled without tasks or datasets is refused', () => {
    expect(rules({ accuracy: { enable_accuracy_test: true } })).toEqual([
      { path: ['accuracy', 'tasks'], message: 'enable_accuracy_test is true but no task is given' },
      { path: ['metadata', 'accuracy', 'datasets'], message: 'enable_accuracy_test is true but no dataset has an expected value to judge against' },
    ]);
  });
  test('a dataset no task runs, a duplicate dataset and a bad task name are named', () => {
    expect(
      rules({
        metadata: { accuracy: { datasets: [gsm8k, { ...gsm8k, expected_value: 0.9 }, { dataset_name: 'mmlu', expected_value: 0.8 }] } },
        accuracy: { enable_accuracy_test: true, tasks: 'gsm8k,../x' },
      }),
    ).toEqual([
      { path: ['metadata', 'accuracy', 'datasets', 1], message: 'gsm8k (flexible-extract) is listed twice' },
      { path: ['accuracy', 'tasks'], message: 'task name "../x" must be letters, digits, _ . - (it names a log file)' },
      { path: ['metadata', 'accuracy', 'datasets', 2, 'dataset_name'], message: 'no accuracy task runs mmlu (tasks: gsm8k, ../x)' },
    ]);
  });
});

describe('what the job does not do', () => {
  test('installing the engine is refused, not ignored', () => {
    expect(rules({ environment: { trtllm_repo: '', build_wheel: false, trtllm_wheel_path: '' }, benchmark: { use_nv_sa_benchmark: false } })).toEqual([]);
    const install = 'installing the engine in the job is not supported: use a container image (environment.container_image) that has it';
    expect(rules({ environment: { trtllm_repo: '/src/trtllm', build_wheel: true, trtllm_wheel_path: '/w.whl' } })).toEqual([
      { path: ['environment', 'trtllm_repo'], message: install },
      { path: ['environment', 'trtllm_wheel_path'], message: install },
      { path: ['environment', 'build_wheel'], message: install },
    ]);
  });
});

describe('the benchmark client a config selects (as upstream)', () => {
  test('use_nv_sa_benchmark runs the built-in SA client; gen_only and a ratio above 1 are refused as upstream would', () => {
    expect(rules({ benchmark: { use_nv_sa_benchmark: true, benchmark_ratio: 0.8 } })).toEqual([]);
    expect(rules({ benchmark: { use_nv_sa_benchmark: true, benchmark_ratio: 0 } })).toEqual([]);
    const genOnly = rules({ benchmark: { use_nv_sa_benchmark: true, benchmark_ratio: 0.8, mode: 'gen_only' } });
    expect(genOnly).toHaveLength(1);
    expect(genOnly[0].path).toEqual(['benchmark', 'use_nv_sa_benchmark']);
    expect(genOnly[0].message).toMatch(/does not support mode gen_only \(upstream's submit.py stops with "SA benchmark client script is not supported for gen_only mode"\)/);
    expect(rules({ benchmark: { use_nv_sa_benchmark: true, benchmark_ratio: 1.5 } })[0].message).toMatch(/1.5 is above 1: .*numpy randint with low > high/);
    expect(rules({ benchmark: { use_nv_sa_benchmark: true } })[0]).toMatchObject({ path: ['benchmark', 'benchmark_ratio'], message: expect.stringMatching(/KeyError/) });
    // The user's own client command wins over the built-in one, and its needs are the user's.
    expect(rules({ benchmark: { use_nv_sa_benchmark: true, mode: 'gen_only' }, commands: { client: 'sa-bench --port {port}' } })).toEqual([]);
  });

  test('aiperf needs the mooncake trace it replays', () => {
    expect(rules({ commands: { client: 'aiperf' }, benchmark: { dataset_file: '/data/trace.jsonl' } })).toEqual([]);
    expect(rules({ commands: { client: 'aiperf' } })).toEqual([
      { path: ['benchmark', 'dataset_file'], message: expect.stringMatching(/required with commands.client: aiperf: .*run_benchmark_aiperf.sh/) },
    ]);
  });
});

describe('max_seq_len: required where upstream\'s validator reads it', () => {
  const without = (role: 'ctx' | 'gen') => {
    const config = baseConfig();
    delete ((config.worker_config as Record<string, Record<string, unknown>>)[role]).max_seq_len;
    return config;
  };
  test('missing outside perf-sanity: refused, naming upstream\'s KeyError', () => {
    for (const role of ['ctx', 'gen'] as const) {
      const found = servingRules(without(role), { file: '/x.yaml', category: 'perf' });
      expect(found).toEqual([{ path: ['worker_config', role, 'max_seq_len'], message: expect.stringMatching(/upstream's utils\/config_validator.py reads it and fails with a KeyError/) }]);
    }
  });
  test('missing in perf-sanity (run upstream without that validator): accepted', () => {
    expect(servingRules(without('gen'), { file: '/x.yaml', category: 'perf-sanity' })).toEqual([]);
  });
});

describe('through the validator', () => {
  test('a rule finding is located at file:line:col with its key path', () => {
    const yaml = [
      'metadata: {model_name: m, precision: fp4, supported_gpus: [GB200]}',
      'slurm: {partition: <partition>, account: <account>, job_time: "01:00:00"}',
      'benchmark: {mode: e2e, streaming: true, concurrency_list: "8", input_length: 1024, output_length: 1024}',
      'hardware: {gpus_per_node: 4, num_ctx_servers: 1, num_gen_servers: 1}',
      'environment: {model_path: /m}',
      'worker_config:',
      '  ctx: {tensor_parallel_size: 4, max_batch_size: 4, max_num_tokens: 4608, max_seq_len: 1044}',
      '  gen:',
      '    tensor_parallel_size: 4',
      '    max_batch_size: 32',
      '    max_num_tokens: 32',
      '    max_seq_len: 2068',
      '    speculative_config: {decoding_type: MTP, num_nextn_predict_layers: 3}',
      '',
    ].join('\n');
    const issues = validateConfig(disaggType, parseYaml(yaml, 'x.yaml'), 'x.yaml', path.resolve('x.yaml'));
    expect(issues.map(formatIssue)).toEqual(['x.yaml:11:5 worker_config.gen.max_num_tokens: 32 is below max_batch_size * (mtp + 1) = 128 (upstream\'s config_validator refuses it too)']);
  });
});
