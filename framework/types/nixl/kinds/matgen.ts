// Kind `matgen`: a KV-cache transfer workload from a matgen recipe. The job generates the matrices
// into its log folder (`disagg-bench matgen`, seeded: reproducible), then runs the sequential CT
// perftest on them; with sleep_before_launch, the simulated prefill compute is slept, scaled by
// sleep_scale so a run stays short.
//   matgen:
//     model: llama-405b            # or hidden_size, num_layers, num_heads, num_kv_heads, dtype_size
//     num_prefill_nodes: 1
//     num_decode_nodes: 1
//     prefill_tp: 4
//     decode_tp: 8
//     ppn: 8                        # ranks per node: benchmark.ranks = (prefill + decode nodes) * ppn
//     pair_workers: round-robin    # 2 prefill workers (tp 4) and 1 decode worker (tp 8): kvbench refuses unequal counts
//     num_user_requests: 4
//     isl_mean: 64                  # (plus isl_scale, min_isl, max_isl, batch_size, max_batch_mem, compute_model, seed...)
//     mem_type: cpu
//     sleep_before_launch: true     # sleep each batch's prefill compute (kvbench's sequential test never does)
//     sleep_scale: 0.001            # (plus the sequential test's isolation_iters, warmup_iters...)
// Keys are matgen's options with `_` for `-`.
import path from 'node:path';
import type { NixlKind, NixlKindContext, RankCommand } from '../kind.ts';
import type { RuleViolation } from '../../../contract/test-type.ts';
import { nixlConfig } from '../common.ts';
import { disaggBenchCommand } from '../job/job-script.ts';
import { rankArgv } from '../job/rank-command.ts';
import { checkMatgenOptions, computeModels, MODEL_PRESETS, workerPairings } from '../../../../runners/xfer/matgen.ts';
import { parseMatgenArgs } from '../../../../runners/xfer/benches/matgen-cli.ts';
import { memTypes } from '../../../../runners/xfer/benches/traffic-pattern.ts';
import { checkMemType, checkSequentialRunOptions, sequentialCommand, sequentialHeadline, sequentialMetrics, sequentialRunProperties, type SequentialRunOptions } from './traffic-patterns.ts';
import { backendNames } from '../../../../runners/xfer/backends/types.ts';
import { int, sectionSchema } from './kind-values.ts';

const SECTION = 'matgen';
const positive = { type: 'number', exclusiveMinimum: 0 };

/** matgen's options, by config key (the command's flag is the key with `-` for `_`). */
const recipeProperties = {
  model: { enum: Object.keys(MODEL_PRESETS) },
  hidden_size: int(1), num_layers: int(1), num_heads: int(1), num_kv_heads: int(1), dtype_size: int(1),
  num_user_requests: int(1), batch_size: int(1),
  num_prefill_nodes: int(1), num_decode_nodes: int(1),
  prefill_tp: int(1), prefill_pp: int(1), prefill_cp: int(1), decode_tp: int(1), decode_pp: int(1), decode_cp: int(1),
  isl_mean: positive, isl_scale: { type: 'number', minimum: 0 }, min_isl: int(1), max_isl: int(1), max_batch_mem: positive,
  ppn: int(1), rail_optimized: { type: 'boolean' }, compute_model: { enum: computeModels }, seed: int(0),
  pair_workers: { enum: workerPairings },
  mem_type: { enum: [...memTypes, ...memTypes.map((m) => m.toUpperCase())] },
  xfer_op: { enum: ['WRITE', 'READ', 'write', 'read'] },
  shards: int(1),
};

type MatgenSection = Record<keyof typeof recipeProperties, unknown> & SequentialRunOptions;
const section = (config: Record<string, unknown>) => config[SECTION] as MatgenSection;

/** The matgen command's arguments for the recipe (no --results-dir). */
export function matgenArgs(s: MatgenSection): string[] {
  const args: string[] = [];
  for (const key of Object.keys(recipeProperties) as (keyof typeof recipeProperties)[]) {
    const value = s[key];
    if (value === undefined || value === false) continue;
    args.push(`--${key.replace(/_/g, '-')}`);
    if (value !== true) args.push(String(value));
  }
  return args;
}

/** The sequential CT perftest on the matrices the prelude generates. */
const matricesDir = (logDir: string) => path.join(logDir, 'matrices');
const MATGEN_RUN = sequentialCommand((logDir) => path.join(matricesDir(logDir), 'metadata.yaml'));

export const matgenKind: NixlKind = {
  name: 'matgen',
  rankLog: 'sequential_ct_perftest.log',
  section: SECTION,
  sectionSchema: sectionSchema({ ...recipeProperties, ...sequentialRunProperties }, ['num_prefill_nodes', 'num_decode_nodes']),
  backends: backendNames,
  rules(config) {
    const { benchmark } = nixlConfig(config);
    const s = section(config);
    const out: RuleViolation[] = checkMemType(benchmark.backend, s.mem_type as string | undefined, [SECTION, 'mem_type']);
    try {
      const { options } = parseMatgenArgs([...matgenArgs(s), '--results-dir', '.']);
      checkMatgenOptions(options);
      const ranks = (options.prefillNodes + options.decodeNodes) * options.ranksPerNode;
      if (ranks !== benchmark.ranks) {
        out.push({ path: ['benchmark', 'ranks'], message: `the recipe has (${options.prefillNodes} prefill + ${options.decodeNodes} decode nodes) * ppn ${options.ranksPerNode} = ${ranks} ranks, not ${benchmark.ranks}` });
      }
    } catch (err) {
      out.push({ path: [SECTION], message: (err as Error).message.split('\n')[0].replace(/^matgen: /, '') });
    }
    return [...out, ...checkSequentialRunOptions(s, SECTION)];
  },
  metrics: sequentialMetrics,
  headline: (_config, metrics) => sequentialHeadline(metrics),
  rankCommand(ctx: NixlKindContext): RankCommand {
    const s = section(ctx.config);
    const generate = disaggBenchCommand(ctx.packageRoot, ['matgen', ...matgenArgs(s), '--results-dir', matricesDir(ctx.logDir)]);
    return {
      prelude: [`${generate} 2>&1 | tee "$LOG_DIR/matgen.log"`],
      argv: rankArgv(MATGEN_RUN, s, ctx),
      logFile: 'sequential_ct_perftest.log',
    };
  },
};
