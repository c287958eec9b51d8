// Upstream's warm-ups before the measured client runs (examples/disaggregated/slurm/benchmark/
// run_benchmark.sh, run_benchmark_nv_sa.sh, run_benchmark_aiperf.sh), so that connection set-up is
// not part of the first concurrency's figures:
// 1. UCX warm-up, e2e mode only: submit.py passes `ucx_warmup_requests = 2 * ctx_world_size *
//    gen_world_size`; the script runs benchmark_serving with that many random 100-token prompts
//    (10 out, non-streaming) between `warming up ucx connections with small requests... N` and
//    `UCX warmup done`. Its result block lands in 6_bench.log before the first measured one.
// 2. Exact-shape warm-up (newer run_benchmark.sh, `exact_warmup_rounds`): per concurrency c, the
//    client itself with `c * rounds` prompts into warmup_concurrency_<c>/, between `Warming up exact
//    request shape with concurrency c ... n prompts` and `Exact-shape warmup with concurrency c
//    done`. With a dataset, its first `c * rounds` rows feed the warm-up and the next ones the
//    measured run (request_datasets/{warmup,measurement}_concurrency_<c>.jsonl); the script stops
//    when the dataset is too short, and when a warm-up request failed.
// The parser (framework/metrics/extractors/serving.ts) never records a warm-up's numbers.
import path from 'node:path';
import { templatePlaceholders } from './command-template.ts';
import { commandTemplate } from './commands.ts';
import { ucxWarmupRequests, type ServingConfig } from '../serving-config.ts';
import { isPlaceholder } from '../../../../runners/common/placeholder.ts';

export interface ExactWarmup {
  /** Prompts of the warm-up: concurrency * exact_warmup_rounds. */
  prompts: number;
  /** Where the client writes the warm-up's result (warmup_concurrency_<c>/). */
  resultDir: string;
  /** The dataset split between warm-up and measured run, when the client reads one. */
  split?: { source: string; warmup: string; measurement: string };
}

export interface WarmupPlan {
  /** Requests of the UCX warm-up; 0: none. */
  ucxRequests: number;
  /** The exact-shape warm-up before the measured run at this concurrency, if any. */
  exact(concurrency: number): ExactWarmup | undefined;
}

/** True when the client reads the config's dataset (its command has {dataset_file} and the config names one). */
export function clientUsesDataset(config: ServingConfig): boolean {
  const file = config.benchmark.dataset_file;
  if (typeof file !== 'string' || file.trim() === '' || isPlaceholder(file)) return false;
  return templatePlaceholders(commandTemplate(config, 'client')).includes('dataset_file');
}

export function warmupPlan(config: ServingConfig, logDir: string, usesDataset: boolean): WarmupPlan {
  const rounds = config.benchmark.exact_warmup_rounds ?? 0;
  const datasets = path.join(logDir, 'request_datasets');
  return {
    ucxRequests: ucxWarmupRequests(config),
    exact: (concurrency) => {
      if (rounds <= 0) return undefined;
      const warmup: ExactWarmup = { prompts: concurrency * rounds, resultDir: path.join(logDir, `warmup_concurrency_${concurrency}`) };
      if (usesDataset) {
        warmup.split = {
          source: config.benchmark.dataset_file!,
          warmup: path.join(datasets, `warmup_concurrency_${concurrency}.jsonl`),
          measurement: path.join(datasets, `measurement_concurrency_${concurrency}.jsonl`),
        };
      }
      return warmup;
    },
  };
}
