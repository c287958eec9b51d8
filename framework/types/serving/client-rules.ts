// What the benchmark client a config selects needs (serving-config.ts's benchmarkClient): refused
// where upstream's submit.py refuses or its client would fail, with what upstream does.
import type { KeyPath, RuleViolation } from '../../contract/test-type.ts';
import { benchmarkClient, type ServingConfig } from './serving-config.ts';

const violation = (path: KeyPath, message: string): RuleViolation => ({ path, message });

/** use_nv_sa_benchmark: true (no commands.client): serve-bench's SA mode, run_benchmark_nv_sa.sh's arguments. */
function saClient(config: ServingConfig): RuleViolation[] {
  const bench = config.benchmark;
  const out: RuleViolation[] = [];
  if (bench.mode === 'gen_only') {
    out.push(violation(['benchmark', 'use_nv_sa_benchmark'],
      'the SA benchmark client does not support mode gen_only (upstream\'s submit.py stops with "SA benchmark client script is not supported for gen_only mode"): use mode e2e or set this to false'));
  }
  const ratio = bench.benchmark_ratio;
  if (ratio === undefined) {
    out.push(violation(['benchmark', 'benchmark_ratio'],
      'is required with use_nv_sa_benchmark: true: it is the SA client\'s --random-range-ratio (upstream\'s submit.py fails with a KeyError without it)'));
  } else if (ratio > 1) {
    out.push(violation(['benchmark', 'benchmark_ratio'],
      `${ratio} is above 1: the SA client draws lengths from [len * ratio, len] and upstream's fails there (numpy randint with low > high)`));
  }
  return out;
}

/** commands.client: aiperf replays a mooncake trace, as run_benchmark_aiperf.sh does. */
function aiperfClient(config: ServingConfig): RuleViolation[] {
  const file = config.benchmark.dataset_file;
  if (typeof file === 'string' && file.trim() !== '') return [];
  return [violation(['benchmark', 'dataset_file'],
    'is required with commands.client: aiperf: aiperf reads its requests from it (--input-file, a mooncake trace), as upstream\'s run_benchmark_aiperf.sh does')];
}

/** exact_warmup_rounds: only run_benchmark.sh has the exact-shape warm-up. */
function exactWarmup(config: ServingConfig, client: string, script: string): RuleViolation[] {
  if (!config.benchmark.exact_warmup_rounds) return [];
  return [violation(['benchmark', 'exact_warmup_rounds'],
    `is not supported with the ${client} client: upstream's ${script} has no exact-shape warm-up (only run_benchmark.sh, benchmark_serving's, has one); set it to 0 or leave it out`)];
}

/** commands.warmup runs only as the UCX warm-up, which only e2e mode sends. */
function warmupCommand(config: ServingConfig): RuleViolation[] {
  if (config.commands?.warmup === undefined || config.benchmark.mode === 'e2e') return [];
  return [violation(['commands', 'warmup'],
    `would never run: the UCX warm-up is sent in mode e2e only (upstream's submit.py passes 0 warm-up requests in mode ${config.benchmark.mode}); remove it`)];
}

export function clientRequirements(config: ServingConfig): RuleViolation[] {
  return [...clientOwnRequirements(config), ...warmupCommand(config)];
}

function clientOwnRequirements(config: ServingConfig): RuleViolation[] {
  switch (benchmarkClient(config)) {
    case 'nv-sa':
      return [...saClient(config), ...exactWarmup(config, 'SA', 'run_benchmark_nv_sa.sh')];
    case 'aiperf':
      return [...aiperfClient(config), ...exactWarmup(config, 'aiperf', 'run_benchmark_aiperf.sh')];
    default:
      return [];
  }
}

