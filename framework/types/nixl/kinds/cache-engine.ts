// Kind `cache-engine`: LMCache's CacheEngine test over NIXL (LMCache tests/disagg/
// test_nixl_cache_engine.py) on the engine, `disagg-bench cache-engine`; 2 ranks, rank 0 stores
// chunks gathered from its paged KV cache, rank 1 receives them, retrieves them into its own paged
// cache at the same slot_mapping and checks every piece.
//   cache_engine:
//     num_chunks: 6                    # LMCache's --num-chunks (default 10)
//     num_rounds: 2                    # --num-rounds (default 1)
//     num_layers: 2                    # the paged cache (LMCache's: 32 layers of 8 heads x 128, 10,000 blocks of 16)
//     num_heads: 1
//     head_size: 64
//     block_size: 16
//     num_blocks: 128
//     chunk_size: 256                  # tokens per chunk (LMCache's 256)
//     dtype: bf16
//     buffer_size: 256K                # each side's NIXL buffer (LMCache's 1 GiB)
//     seed: 42                         # slot_mapping's shuffle
//     memory: host                     # host | gpu (default: what the backend moves)
// Metrics (lmcache extractor; LMCache's own lines, GB/s = 1e9 B/s, GiB/s = 2^30 B/s): per {round}
// STORE_TIME_S, THROUGHPUT_GBPS/_GIBPS (store()), RETRIEVE_TIME_S, RETRIEVAL_THROUGHPUT_GBPS/_GIBPS;
// MEAN_THROUGHPUT_GBPS/_GIBPS, THROUGHPUT_STD_GBPS, MIN/MAX_THROUGHPUT_GBPS; VERIFIED_ROUNDS.
import type { NixlKind, NixlKindContext, RankCommand } from '../kind.ts';
import type { RuleViolation } from '../../../contract/test-type.ts';
import type { Metric, MetricSpec } from '../../../metrics/metric.ts';
import { nixlConfig } from '../common.ts';
import { distinct, named } from '../../../metrics/headline-picks.ts';
import { DTYPE_BYTES, kvpipeBackends } from '../../../../runners/xfer/benches/kvpipe/kvpipe-options.ts';
import { parseCacheEngineArgs } from '../../../../runners/xfer/benches/cache-engine/cache-engine-options.ts';
import { checkBackendMemory, sizeSchema, sectionSchema, int, memorySchema, checkTwoRanks } from './kind-values.ts';
import { flagArgs, rankArgv, type FlagCommand } from '../job/rank-command.ts';

interface CacheEngineSection {
  num_chunks?: number;
  num_rounds?: number;
  num_layers?: number;
  num_heads?: number;
  head_size?: number;
  block_size?: number;
  num_blocks?: number;
  chunk_size?: number;
  dtype?: string;
  buffer_size?: number | string;
  seed?: number;
  memory?: 'host' | 'gpu';
}

const SECTION = 'cache_engine';
const LOG = 'cache_engine.log';
const section = (config: Record<string, unknown>) => (config[SECTION] ?? {}) as CacheEngineSection;

/** The command's flags from the section (the backend comes from benchmark.backend). */
const CACHE_ENGINE_COMMAND: FlagCommand<CacheEngineSection> = {
  command: 'cache-engine',
  flags: [
    ['--num-chunks', 'num_chunks'],
    ['--num-rounds', 'num_rounds'],
    ['--num-layers', 'num_layers'],
    ['--num-heads', 'num_heads'],
    ['--head-size', 'head_size'],
    ['--block-size', 'block_size'],
    ['--num-blocks', 'num_blocks'],
    ['--chunk-size', 'chunk_size'],
    ['--dtype', 'dtype'],
    ['--buffer-size', 'buffer_size', 'size'],
    ['--seed', 'seed'],
    ['--memory', 'memory'],
  ],
};

export const cacheEngineKind: NixlKind = {
  name: 'cache-engine',
  rankLog: LOG,
  section: SECTION,
  sectionSchema: sectionSchema({
    num_chunks: int(1),
    num_rounds: int(1),
    num_layers: int(1),
    num_heads: int(1),
    head_size: int(1),
    block_size: int(1),
    num_blocks: int(1),
    chunk_size: int(1),
    dtype: { enum: Object.keys(DTYPE_BYTES) },
    buffer_size: sizeSchema,
    seed: int(0),
    memory: memorySchema,
  }),
  backends: kvpipeBackends,
  rules(config) {
    const { benchmark } = nixlConfig(config);
    const s = section(config);
    const out: RuleViolation[] = [];
    checkTwoRanks('cache-engine', 'rank 0 stores, rank 1 retrieves', benchmark.ranks, out);
    checkBackendMemory(benchmark.backend, s.memory, [SECTION, 'memory'], out);
    // the command's own checks (LMCache's "Number of chunks must be <= ...", a chunk that does not fit the buffer...)
    try {
      parseCacheEngineArgs(flagArgs(CACHE_ENGINE_COMMAND.flags, s, benchmark.backend));
    } catch (err) {
      out.push({ path: [SECTION], message: (err as Error).message });
    }
    return out;
  },
  metrics(): MetricSpec[] {
    return [
      {
        logFile: LOG,
        extractor: 'lmcache',
        names: [
          'STORE_TIME_S', 'THROUGHPUT_GBPS', 'THROUGHPUT_GIBPS', 'RETRIEVE_TIME_S', 'RETRIEVAL_THROUGHPUT_GBPS', 'RETRIEVAL_THROUGHPUT_GIBPS',
          'MEAN_THROUGHPUT_GBPS', 'MEAN_THROUGHPUT_GIBPS', 'THROUGHPUT_STD_GBPS', 'MIN_THROUGHPUT_GBPS', 'MAX_THROUGHPUT_GBPS', 'VERIFIED_ROUNDS',
        ],
      },
    ];
  },
  rankCommand(ctx: NixlKindContext): RankCommand {
    return { argv: rankArgv(CACHE_ENGINE_COMMAND, section(ctx.config), ctx), logFile: LOG };
  },
  // store throughput (the mean over rounds), then each round's retrieval throughput
  headline: (_config, metrics) => distinct(named(metrics, 'MEAN_THROUGHPUT_GBPS'), named(metrics, 'RETRIEVAL_THROUGHPUT_GBPS')),
  verdict(config, metrics: Metric[]) {
    const rounds = section(config).num_rounds ?? 1;
    const count = (name: string) => metrics.filter((m) => m.name === name).length;
    const failures: string[] = [];
    const verified = metrics.find((m) => m.name === 'VERIFIED_ROUNDS')?.value ?? 0;
    if (verified !== rounds) failures.push(`the receiver verified ${verified} of ${rounds} round(s) ("Data verification successful" in ${LOG})`);
    if (count('STORE_TIME_S') !== rounds) failures.push(`the sender stored ${count('STORE_TIME_S')} of ${rounds} round(s) in ${LOG}`);
    if (count('RETRIEVE_TIME_S') !== rounds) failures.push(`the receiver retrieved ${count('RETRIEVE_TIME_S')} of ${rounds} round(s) in ${LOG}`);
    return failures;
  },
};
