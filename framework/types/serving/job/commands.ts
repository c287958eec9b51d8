// The commands a serving job runs: their kinds, the placeholders each may use, the named clients
// and warm-ups, and which template runs when the config says nothing (the engine's own commands,
// from its table in ../engines/). Every command can be replaced by a template in the config's
// `commands` section or, for a whole run, by an environment variable (DISAGG_WORKER_CMD...), so
// the job runs against any OpenAI-compatible serving stack.
import type { CommandTemplate, ServingConfig } from '../serving-config.ts';
import { benchmarkClient } from '../serving-config.ts';
import { engineOf } from '../engines/engines.ts';

export type CommandKind = 'worker' | 'router' | 'client' | 'warmup' | 'accuracy';
export const commandKinds: readonly CommandKind[] = ['worker', 'router', 'client', 'warmup', 'accuracy'];

/** The variable that replaces a command for a whole run (applied like the other env overrides). */
export const commandEnvVars: Record<CommandKind, string> = {
  worker: 'DISAGG_WORKER_CMD',
  router: 'DISAGG_ROUTER_CMD',
  client: 'DISAGG_CLIENT_CMD',
  warmup: 'DISAGG_WARMUP_CMD',
  accuracy: 'DISAGG_ACCURACY_CMD',
};

const common = ['model', 'model_name', 'log_dir', 'package_root', 'input_length', 'output_length'] as const;

/**
 * Placeholders each command may use. {host}/{port} are the server's own for a worker and the
 * router's for the others; {model} is environment.model_path (the name the engine serves it under).
 */
export const commandPlaceholders: Record<CommandKind, readonly string[]> = {
  worker: [...common, 'host', 'port', 'config', 'role', 'index', 'server'],
  router: [...common, 'host', 'port', 'config', 'health_timeout'],
  client: [
    ...common, 'host', 'port', 'base_url', 'concurrency', 'num_prompts', 'multi_round', 'dataset_file', 'result_dir',
    'benchmark_ratio', 'benchmark_duration',
  ],
  warmup: [...common, 'host', 'port', 'base_url', 'num_prompts'],
  accuracy: [
    ...common, 'host', 'port', 'base_url', 'completions_url', 'task', 'accuracy_model', 'model_args',
    'model_args_extra', 'output_dir', 'extra_args',
  ],
};

const clientTail =
  '--num-prompts {num_prompts} --max-concurrency {concurrency} --trust-remote-code --ignore-eos --no-test-input' +
  ' --save-result --result-dir {result_dir} --result-filename result.json --percentile-metrics ttft,tpot,itl,e2el';

const serveBench = 'node {package_root}/bin/disagg-bench.js serve-bench --model {model} --backend openai --host {host} --port {port}';

/**
 * Named clients a config may pick with `commands.client: <name>` (serving-config.ts's
 * benchmarkClient says which one runs). benchmark_serving reads the config's dataset when it has
 * one (as the reference did) and random prompts otherwise; serve-bench is this project's own
 * client (same arguments, same result block); nv-sa is serve-bench in the SemiAnalysis client's
 * mode with run_benchmark_nv_sa.sh's arguments (use_nv_sa_benchmark: true); aiperf runs
 * run_benchmark_aiperf.sh's `aiperf profile` (a mooncake trace from dataset_file, per listed
 * concurrency, results in concurrency_<c>/profile_export_aiperf.json).
 */
export const clientPresets: Record<string, (config: ServingConfig) => string> = {
  benchmark_serving: (config) => {
    const client = `${engineOf(config).benchmarkClient} --backend openai --host {host} --port {port}`;
    return config.benchmark.dataset_file
      ? `${client} --dataset-name trtllm_custom --dataset-path {dataset_file} ${clientTail}`
      : `${client} --dataset-name random --random-ids --random-input-len {input_length} --random-output-len {output_length} ${clientTail}`;
  },
  'serve-bench':
    () =>
      `${serveBench} --dataset-name random --random-input-len {input_length} --random-output-len {output_length}` +
      ' --num-prompts {num_prompts} --max-concurrency {concurrency} --ignore-eos' +
      ' --save-result --result-dir {result_dir} --result-filename result.json --percentile-metrics ttft,tpot,itl,e2el',
  'nv-sa':
    () =>
      `${serveBench} --nv-sa --dataset-name random --num-prompts {num_prompts} --max-concurrency {concurrency}` +
      ' --trust-remote-code --ignore-eos --random-input-len {input_length} --random-output-len {output_length}' +
      ' --random-range-ratio {benchmark_ratio} --save-result --use-chat-template --result-dir {result_dir}' +
      ' --result-filename result.json --percentile-metrics ttft,tpot,itl,e2el',
  aiperf:
    () =>
      'aiperf profile -m {model} --tokenizer {model} --tokenizer-trust-remote-code --url http://{host}:{port}' +
      ' --endpoint-type chat --streaming --ui simple --input-file {dataset_file} --custom-dataset-type mooncake_trace' +
      ' --artifact-dir {result_dir} --concurrency {concurrency} --concurrency-ramp-duration 60' +
      ' --benchmark-duration {benchmark_duration} --benchmark-grace-period 60 --request-count {num_prompts}' +
      ' --workers-max 200 --request-timeout-seconds 1200 --profile-export-level records' +
      ' --extra-inputs ignore_eos:true --record-processors 8',
};

/**
 * The UCX warm-up of e2e mode (warmup.ts): upstream's run_benchmark.sh,
 * run_benchmark_nv_sa.sh and run_benchmark_aiperf.sh all run TensorRT-LLM's benchmark_serving with
 * these arguments (`--trust-remote-code` as the aiperf script has it); serve-bench sends the same
 * requests (it streams: it has no non-streaming mode).
 */
export const warmupPresets: Record<'benchmark_serving' | 'serve-bench', (config: ServingConfig) => string> = {
  benchmark_serving: (config) =>
    `${engineOf(config).benchmarkClient} --dataset-name random --random-ids` +
    ' --random-input-len 100 --random-output-len 10 --num-prompts {num_prompts} --host {host} --port {port}' +
    ' --ignore-eos --non-streaming --trust-remote-code',
  'serve-bench': () =>
    `${serveBench} --dataset-name random --random-ids --random-input-len 100 --random-output-len 10` +
    ' --num-prompts {num_prompts} --ignore-eos',
};

/**
 * The warm-up a config runs: commands.warmup (a preset's name or a command of its own), else as its
 * client: upstream's clients (benchmark_serving, the SA client, aiperf) warm up with
 * benchmark_serving as upstream's scripts do; serve-bench and a command of the config's own with
 * serve-bench (which needs nothing but the router).
 */
function warmupTemplate(config: ServingConfig): CommandTemplate {
  const given = config.commands?.warmup;
  const name = typeof given === 'string' ? given.trim() : undefined;
  if (name === 'benchmark_serving' || name === 'serve-bench') return warmupPresets[name](config);
  if (given !== undefined) return given;
  const client = benchmarkClient(config);
  if (client === 'serve-bench' || client === 'custom') return warmupPresets['serve-bench'](config);
  return warmupPresets[engineOf(config).warmupPreset ?? 'benchmark_serving'](config);
}

/** The template the job uses for a command: the config's (or a client preset's), else the engine's. */
export function commandTemplate(config: ServingConfig, kind: CommandKind): CommandTemplate {
  const given = config.commands?.[kind];
  if (kind === 'client') {
    const client = benchmarkClient(config);
    if (client !== 'custom') return clientPresets[client](config);
  }
  if (kind === 'warmup') return warmupTemplate(config);
  return given ?? engineOf(config).commands[kind as Exclude<CommandKind, 'client' | 'warmup'>];
}

/** The reference's memory binding on GB200 when slurm.numa_bind is true. */
export const DEFAULT_NUMA_COMMAND = 'numactl -m 0,1';
