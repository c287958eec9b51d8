// llama.cpp as a serving engine, embedded: `disagg-bench llama-server` context and generation
// servers (runners/llamacpp/) behind `disagg-bench llama-router`, the KV cache handed over through
// the project's transfer engine, the project's serve-bench as the benchmark client. Runs on any
// Linux x64 machine from `npm ci` (CPU), or on a GPU with a llama.cpp build of one's own.
import { stringify } from 'yaml';
import type { ServingEngine } from './engine.ts';
import type { Allocation, Role } from '../job/allocation.ts';
import { nodePlaceholder } from '../job/node-placeholder.ts';
import { KV_HANDOVER_METRICS } from '../../../metrics/extractors/kv-handover.ts';

const bin = 'node {package_root}/bin/disagg-bench.js';
const ROUTER_CONFIG = 'server_config.yaml';

/**
 * The deployment file the router and every server read: servers per role with their node, and the
 * hand-over's rendezvous store, served by the first context server on the port after the router's.
 * The backend is decided where the addresses are known (runners/llamacpp/kv-link.ts): shm when
 * every server is on this host, else UCX.
 */
function routerConfig(allocation: Allocation): string {
  const servers = (role: Role) =>
    allocation.servers.filter((s) => s.role === role).map((s) => ({ url: `${nodePlaceholder(s.nodes[0])}:${s.port}`, node: s.nodes[0] }));
  const first = allocation.servers.find((s) => s.role === 'CTX') ?? allocation.servers[0];
  return stringify({
    hostname: nodePlaceholder(allocation.router.node),
    port: allocation.router.port,
    context_servers: servers('CTX'),
    generation_servers: servers('GEN'),
    kv_transfer: {
      backend: 'auto',
      store_host: nodePlaceholder(first.nodes[0]),
      store_port: allocation.router.port + 1,
      job: `llamacpp-${allocation.router.port}`,
    },
  });
}

export const llamacppEngine: ServingEngine = {
  name: 'llamacpp',
  runsOnCpu: true,
  description: 'llama.cpp embedded: disagg-bench llama-server context and generation servers behind disagg-bench llama-router, the KV cache moved by the transfer engine',
  commands: {
    worker: `${bin} llama-server --role {role} --index {index} --model {model} --host {host} --port {port} --config {config} --cluster {log_dir}/${ROUTER_CONFIG}`,
    router: `${bin} llama-router --config {config} --host {host} --port {port}`,
    accuracy:
      'lm_eval --model {accuracy_model} --tasks {task} --model_args {model_args} --output_path {output_dir} --log_samples {extra_args}',
  },
  benchmarkClient: `${bin} serve-bench --model {model}`,
  // serve-bench streams only: its own warm-up, not benchmark_serving's --non-streaming one.
  warmupPreset: 'serve-bench',
  extraMetrics: ['SERVER_MEDIAN_ITL'],
  // Per request, the KV cache's bytes and its hand-over's time, as serve-bench saved them per concurrency.
  extraMetricSpecs: [{ logFile: 'concurrency_*/result.json', extractor: 'kv-handover', names: KV_HANDOVER_METRICS }],
  healthPath: '/health',
  completionsPath: '/v1/completions',
  ports: { base: 8000, router: 8333 },
  // A model of a few hundred MB loads in seconds: ask every second, give up after 10 minutes.
  health: { timeoutS: 600, intervalS: 1 },
  // One process per server: no MPI.
  pmi: 'none',
  files: {
    workerConfig: { CTX: 'ctx_config.yaml', GEN: 'gen_config.yaml' },
    routerConfig: ROUTER_CONFIG,
    serverLog: (role, index) => `3_output_${role}_${index}.log`,
    routerLog: '4_output_server.log',
  },
  routerConfig,
  env: { everyStep: () => [], generationWorkers: () => [] },
  profiler: {
    ranges: { CTX: '', GEN: '' },
    wrap: () => ({ words: [], env: [] }),
  },
};
