// TensorRT-LLM as a serving engine (the reference this project follows: upstream's disaggregated
// SLURM scripts, submit.py and run_benchmark.sh): trtllm-serve workers behind
// `trtllm-serve disaggregated`, its benchmark_serving client, lm-eval for accuracy.
import { stringify } from 'yaml';
import type { ServingEngine } from './engine.ts';
import type { Allocation, Role } from '../job/allocation.ts';
import { nodePlaceholder } from '../job/node-placeholder.ts';
import { parseConcurrencyList, type ServingConfig } from '../serving-config.ts';
import type { EnvAssignment } from '../../../../runners/common/shell.ts';

/** `trtllm-serve disaggregated -c`: the router's host and port, the servers' URLs per role. */
function routerConfig(allocation: Allocation): string {
  const urls = (role: Role) =>
    allocation.servers.filter((s) => s.role === role).map((s) => `${nodePlaceholder(s.nodes[0])}:${s.port}`);
  const ctx = urls('CTX');
  const gen = urls('GEN');
  return stringify({
    hostname: nodePlaceholder(allocation.router.node),
    port: allocation.router.port,
    backend: 'pytorch',
    context_servers: { num_instances: ctx.length, urls: ctx },
    generation_servers: { num_instances: gen.length, urls: gen },
  });
}

/**
 * The switches upstream's submit.py build_worker_environment sets on every worker, per benchmark
 * mode (exported to every step).
 */
function modeEnv(config: ServingConfig): EnvAssignment[] {
  switch (config.benchmark.mode) {
    case 'gen_only_no_context':
      return [{ name: 'TRTLLM_DISAGG_BENCHMARK_GEN_ONLY', value: '1' }];
    case 'gen_only':
      return [{ name: 'TRTLLM_DISABLE_KV_CACHE_TRANSFER_OVERLAP', value: '1' }];
    default:
      return [];
  }
}

/**
 * In gen_only mode the generation server holds requests until TLLM_BENCHMARK_REQ_QUEUES_SIZE are
 * queued. As upstream's submit.py build_worker_environment (`if role == "GEN"`), the first listed
 * concurrency, per server (not multiplied by num_gen_servers). Upstream takes
 * `concurrency_list.split(',')[0]`, which for a space-separated list of several values is the
 * whole list (the engine's int() refuses it); the first value is what it means.
 */
function generationEnv(config: ServingConfig): EnvAssignment[] {
  if (config.benchmark.mode !== 'gen_only') return [];
  const first = parseConcurrencyList(config.benchmark.concurrency_list)[0];
  return [{ name: 'TLLM_BENCHMARK_REQ_QUEUES_SIZE', value: String(first) }];
}

/** nsys in front of a worker: one report per rank, captured over the engine's profiling range. */
function nsys(outputBase: string, range: string): { words: string[]; env: EnvAssignment[] } {
  return {
    words: [
      'nsys', 'profile', '-e', 'NSYS_MPI_STORE_TEAMS_PER_RANK=1', '-o', `${outputBase}_%q{SLURM_PROCID}`, '-f', 'true',
      '-t', 'cuda,nvtx,python-gil', '-c', 'cudaProfilerApi', '--cuda-graph-trace', 'node',
      '--capture-range-end=stop', '--gpu-metrics-devices=none',
    ],
    env: [
      { name: 'TLLM_PROFILE_START_STOP', value: range },
      { name: 'TLLM_PROFILE_RECORD_GC', value: '1' },
      { name: 'TLLM_NVTX_DEBUG', value: '1' },
    ],
  };
}

export const trtllmEngine: ServingEngine = {
  name: 'trtllm',
  description: 'TensorRT-LLM: trtllm-serve workers behind trtllm-serve disaggregated',
  commands: {
    worker: 'trtllm-llmapi-launch trtllm-serve {model} --host {host} --port {port} --extra_llm_api_options {config}',
    router: 'trtllm-serve disaggregated -c {config} -t {health_timeout} -r {health_timeout}',
    accuracy:
      'lm_eval --model {accuracy_model} --tasks {task} --model_args {model_args} --output_path {output_dir} --log_samples --trust_remote_code {extra_args}',
  },
  benchmarkClient: 'python -m tensorrt_llm.serve.scripts.benchmark_serving --model {model}',
  healthPath: '/health',
  completionsPath: '/v1/completions',
  ports: { base: 8000, router: 8333 },
  health: { timeoutS: 1800, intervalS: 10 },
  // The engine's MPI ranks find each other through PMIx under srun.
  pmi: 'pmix',
  files: {
    workerConfig: { CTX: 'ctx_config.yaml', GEN: 'gen_config.yaml' },
    routerConfig: 'server_config.yaml',
    serverLog: (role, index) => `3_output_${role}_${index}.log`,
    routerLog: '4_output_server.log',
  },
  routerConfig,
  env: { everyStep: modeEnv, generationWorkers: generationEnv },
  profiler: { ranges: { CTX: '10-30', GEN: '200-250' }, wrap: nsys },
};
