// Kind `sweep`: nixlbench's block-size sweep on the engine, nixlbench's option names.
//   sweep:
//     op_type: [READ, WRITE]            # or one op
//     initiator_seg_type: DRAM          # DRAM | VRAM (VRAM with cuda or nccl)
//     target_seg_type: DRAM
//     scheme: pairwise                  # pairwise | manytoone | onetomany | tp
//     start_block_size: 4K              # bytes or K/M/G (binary)
//     max_block_size: 64M
//     start_batch_size: 1
//     max_batch_size: 1
//     num_iter: 20                      # nixlbench default 1000
//     warmup_iter: 5                    # nixlbench default 100
//     large_blk_iter_ftr: 16
//     num_threads: 1
//     pipeline_depth: 1                 # requests in flight per thread
//     check_consistency: true
//     expect: { 64M: 46.48 }            # GB/s per block size, checked within tolerance
//     tolerance: 0.1
// Metrics per {block_size, batch_size, op_type}: BW_GBPS (GB/s), AVG_LAT_US and the Prep/Post/Tx
// columns (us); AGG_BW_GBPS and NETWORK_UTIL_PCT for pairwise runs of more than 2 ranks.
import type { NixlKind, NixlKindContext, RankCommand } from '../kind.ts';
import type { RuleViolation } from '../../../contract/test-type.ts';
import type { Metric, MetricSpec } from '../../../metrics/metric.ts';
import { nixlConfig } from '../common.ts';
import { atLargest, distinct, peakAcross } from '../../../metrics/headline-picks.ts';
import { checkExpectedBandwidth } from '../../../../runners/xfer/benches/sweep/sweep-expect.ts';
import { schemes, segTypes, type Scheme } from '../../../../runners/xfer/benches/sweep/sweep-options.ts';
import { sweepRoles } from '../../../../runners/xfer/benches/sweep/sweep-plan.ts';
import { nixlbenchBufferError } from '../../../../runners/xfer/benches/sweep/sweep-buffer-rules.ts';
import { checkBackendMemory, checkSize, sizeBytes, sizeSchema, sectionSchema, int } from './kind-values.ts';
import { rankArgv, type FlagCommand } from '../job/rank-command.ts';
import { backendNames } from '../../../../runners/xfer/backends/types.ts';

interface SweepSection {
  op_type?: string | string[];
  initiator_seg_type?: 'DRAM' | 'VRAM';
  target_seg_type?: 'DRAM' | 'VRAM';
  scheme?: Scheme;
  start_block_size?: number | string;
  max_block_size?: number | string;
  start_batch_size?: number;
  max_batch_size?: number;
  num_iter?: number;
  warmup_iter?: number;
  large_blk_iter_ftr?: number;
  num_threads?: number;
  pipeline_depth?: number;
  total_buffer_size?: number | string;
  num_initiator_dev?: number;
  num_target_dev?: number;
  check_consistency?: boolean;
  expect?: Record<string, number>;
  tolerance?: number;
  link_bw?: number;
}

const SECTION = 'sweep';
const section = (config: Record<string, unknown>) => (config[SECTION] ?? {}) as SweepSection;
const op = { enum: ['READ', 'WRITE'] };
const ops = (s: SweepSection) => (Array.isArray(s.op_type) ? s.op_type : [s.op_type ?? 'WRITE']);
const DEFAULTS = { start: 4096, max: 64 * 1024 ** 2, total: 8 * 1024 ** 3 };

const TIMES = ['AVG_LAT_US', 'AVG_PREP_US', 'P99_PREP_US', 'AVG_POST_US', 'P99_POST_US', 'AVG_TX_US', 'P99_TX_US'];

/** nixlbench's flags; `expect` becomes one `--expect <bytes>:<GB/s>` per block size. */
const SWEEP_COMMAND: FlagCommand<SweepSection> = {
  command: 'sweep',
  flags: [
    ['--op_type', (s) => ops(s).join(',')],
    ['--initiator_seg_type', 'initiator_seg_type'],
    ['--target_seg_type', 'target_seg_type'],
    ['--scheme', 'scheme'],
    ['--start_block_size', 'start_block_size', 'size'],
    ['--max_block_size', 'max_block_size', 'size'],
    ['--start_batch_size', 'start_batch_size'],
    ['--max_batch_size', 'max_batch_size'],
    ['--num_iter', 'num_iter'],
    ['--warmup_iter', 'warmup_iter'],
    ['--large_blk_iter_ftr', 'large_blk_iter_ftr'],
    ['--num_threads', 'num_threads'],
    ['--pipeline_depth', 'pipeline_depth'],
    ['--total_buffer_size', 'total_buffer_size', 'size'],
    ['--num_initiator_dev', 'num_initiator_dev'],
    ['--num_target_dev', 'num_target_dev'],
    ['--tolerance', 'tolerance'],
    ['--link_bw', 'link_bw'],
    ['--expect', (s) => Object.entries(s.expect ?? {}).map(([block, gbps]) => `${sizeBytes(block)}:${gbps}`), 'repeat'],
    ['--check_consistency', 'check_consistency', 'switch'],
  ],
};

/**
 * A block-size sweep's headline (the engine's and nixlbench's tables alike): per operation and
 * batch size, the bandwidth at the largest block, then the peak bandwidth where another block had it.
 */
export function sweepHeadline(metrics: readonly Metric[]): Metric[] {
  return distinct(atLargest(metrics, 'BW_GBPS', 'block_size'), peakAcross(metrics, 'BW_GBPS', 'block_size'));
}

export const sweepKind: NixlKind = {
  name: 'sweep',
  rankLog: 'sweep.log',
  section: SECTION,
  sectionSchema: sectionSchema({
    op_type: { oneOf: [op, { type: 'array', items: op, minItems: 1 }] },
    initiator_seg_type: { enum: [...segTypes] },
    target_seg_type: { enum: [...segTypes] },
    scheme: { enum: [...schemes] },
    start_block_size: sizeSchema,
    max_block_size: sizeSchema,
    start_batch_size: int(1),
    max_batch_size: int(1),
    num_iter: int(1),
    warmup_iter: int(0),
    large_blk_iter_ftr: int(1),
    num_threads: int(1),
    pipeline_depth: int(1),
    total_buffer_size: sizeSchema,
    num_initiator_dev: int(1),
    num_target_dev: int(1),
    check_consistency: { type: 'boolean' },
    expect: { type: 'object', additionalProperties: { type: 'number', exclusiveMinimum: 0 } },
    tolerance: { type: 'number', minimum: 0 },
    link_bw: { type: 'number', exclusiveMinimum: 0 },
  }),
  backends: backendNames,
  rules(config) {
    const { benchmark } = nixlConfig(config);
    const s = section(config);
    const out: RuleViolation[] = [];
    const start = checkSize(s.start_block_size, [SECTION, 'start_block_size'], out) ?? DEFAULTS.start;
    const max = checkSize(s.max_block_size, [SECTION, 'max_block_size'], out) ?? DEFAULTS.max;
    const total = checkSize(s.total_buffer_size, [SECTION, 'total_buffer_size'], out) ?? DEFAULTS.total;
    if (start > max) out.push({ path: [SECTION, 'start_block_size'], message: `start_block_size ${start} exceeds max_block_size ${max}` });
    if ((s.start_batch_size ?? 1) > (s.max_batch_size ?? 1)) out.push({ path: [SECTION, 'start_batch_size'], message: 'start_batch_size exceeds max_batch_size' });
    for (const key of ['initiator_seg_type', 'target_seg_type'] as const) {
      checkBackendMemory(benchmark.backend, s[key] === undefined ? undefined : s[key] === 'VRAM' ? 'gpu' : 'host', [SECTION, key], out);
    }
    if (benchmark.backend === 'nccl' && (s.num_threads ?? 1) > 1) out.push({ path: [SECTION, 'num_threads'], message: 'nccl is two-sided: num_threads must be 1' });
    for (const key of Object.keys(s.expect ?? {})) checkSize(key, [SECTION, 'expect', key], out);
    try {
      sweepRoles(benchmark.ranks, s.scheme ?? 'pairwise', s.num_initiator_dev, s.num_target_dev);
      const buffer = nixlbenchBufferError({
        totalBufferSize: total, maxBlockSize: max, maxBatchSize: s.max_batch_size ?? 1, numThreads: s.num_threads ?? 1, numInitiatorDev: s.num_initiator_dev, numTargetDev: s.num_target_dev,
      });
      if (buffer) out.push({ path: [SECTION, 'total_buffer_size'], message: `${buffer} (nixlbench's check)` });
    } catch (err) {
      out.push({ path: ['benchmark', 'ranks'], message: (err as Error).message });
    }
    return out;
  },
  metrics(config): MetricSpec[] {
    const s = section(config);
    const aggregate = (s.scheme ?? 'pairwise') === 'pairwise' && nixlConfig(config).benchmark.ranks > 2;
    return [{ logFile: 'sweep.log', extractor: 'nixlbench', names: ['BW_GBPS', ...(aggregate ? ['AGG_BW_GBPS', 'NETWORK_UTIL_PCT'] : []), ...TIMES] }];
  },
  rankCommand(ctx: NixlKindContext): RankCommand {
    return { argv: rankArgv(SWEEP_COMMAND, section(ctx.config), ctx), logFile: 'sweep.log' };
  },
  headline: (_config, metrics) => sweepHeadline(metrics),
  verdict(config, metrics: Metric[]) {
    const s = section(config);
    const expected = Object.entries(s.expect ?? {}).map(([block, gbps]) => ({ blockSize: sizeBytes(block), gbps }));
    const measured = metrics
      .filter((m) => m.name === 'BW_GBPS')
      .map((m) => ({ blockSize: Number(m.labels.block_size), batchSize: Number(m.labels.batch_size), gbps: m.value, op: m.labels.op_type as string | undefined }));
    const failures = checkExpectedBandwidth(expected, measured, s.tolerance ?? 0.1).map((miss) => `expected bandwidth: ${miss}`);
    for (const o of ops(s)) {
      if (!measured.some((m) => m.op === o)) failures.push(`no ${o} table in sweep.log`);
    }
    return failures;
  },
};
