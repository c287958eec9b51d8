// Kind `kvpipe`: the LMCache disaggregated-prefill pipe on the engine; 2 ranks, rank 0
// sends, rank 1 receives through its bounded buffer and verifies every object.
//   kvpipe:
//     buffer_size: 64M                 # default 4 GiB (host: capped to the node's memory)
//     num_objs: 16
//     obj_size: 8M                     # or obj_shape: [32, 2, 256, 1024] with dtype: bf16 (32 MiB)
//     batch_size: 4                    # objects per commit (default: what the buffer holds)
//     simulate_work: true              # pipe v2: sender 50 ms, receiver 20 ms per 10 objects (timed)
//     simulate_workload: true          # channel v2: sender 50 ms after each batch (not timed)
//     work_scale: 0.1
//     num_rounds: 2
//     memory: host                     # host | gpu (default: what the backend moves)
// Metrics (GB/s = 1e9 B/s, GiB/s = 2^30 B/s): THROUGHPUT_GBPS / THROUGHPUT_GIBPS and SEND_TIME_S
// per {round}, MEAN_THROUGHPUT_GBPS / _GIBPS, per-commit PURE_THROUGHPUT_GBPS_{AVG,MIN,MAX},
// COMMIT_{TIME,CREATE,TRANSFER,WAIT}_MS_AVG, COMMITS, VERIFIED_ROUNDS.
import type { NixlKind, NixlKindContext, RankCommand } from '../kind.ts';
import type { RuleViolation } from '../../../contract/test-type.ts';
import type { Metric, MetricSpec } from '../../../metrics/metric.ts';
import { nixlConfig } from '../common.ts';
import { named } from '../../../metrics/headline-picks.ts';
import { DTYPE_BYTES, kvpipeBackends } from '../../../../runners/xfer/benches/kvpipe/kvpipe-options.ts';
import { checkBackendMemory, checkSize, sizeBytes, sizeSchema, memorySchema, sectionSchema, int, checkTwoRanks } from './kind-values.ts';
import { rankArgv, type FlagCommand } from '../job/rank-command.ts';

interface KvpipeSection {
  buffer_size?: number | string;
  num_objs?: number;
  obj_size?: number | string;
  obj_shape?: number[];
  dtype?: string;
  batch_size?: number;
  simulate_work?: boolean;
  simulate_workload?: boolean;
  work_scale?: number;
  num_rounds?: number;
  memory?: 'host' | 'gpu';
}

const SECTION = 'kvpipe';
const LOG = 'kvpipe.log';
const section = (config: Record<string, unknown>) => (config[SECTION] ?? {}) as KvpipeSection;

function objectBytes(s: KvpipeSection): number {
  if (s.obj_size !== undefined) return sizeBytes(s.obj_size);
  return (s.obj_shape ?? [32, 2, 256, 1024]).reduce((a, b) => a * b, DTYPE_BYTES[s.dtype ?? 'bf16']);
}

const KVPIPE_COMMAND: FlagCommand<KvpipeSection> = {
  command: 'kvpipe',
  flags: [
    ['--obj-size', objectBytes],
    ['--buffer-size', 'buffer_size', 'size'],
    ['--num-objs', 'num_objs'],
    ['--batch-size', 'batch_size'],
    ['--work-scale', 'work_scale'],
    ['--num-rounds', 'num_rounds'],
    ['--memory', 'memory'],
    ['--simulate-work', 'simulate_work', 'switch'],
    ['--simulate-workload', 'simulate_workload', 'switch'],
  ],
};

export const kvpipeKind: NixlKind = {
  name: 'kvpipe',
  rankLog: LOG,
  section: SECTION,
  sectionSchema: sectionSchema({
    buffer_size: sizeSchema,
    num_objs: int(1),
    obj_size: sizeSchema,
    obj_shape: { type: 'array', items: int(1), minItems: 1 },
    dtype: { enum: Object.keys(DTYPE_BYTES) },
    batch_size: int(1),
    simulate_work: { type: 'boolean' },
    simulate_workload: { type: 'boolean' },
    work_scale: { type: 'number', minimum: 0 },
    num_rounds: int(1),
    memory: memorySchema,
  }),
  backends: kvpipeBackends,
  rules(config) {
    const { benchmark } = nixlConfig(config);
    const s = section(config);
    const out: RuleViolation[] = [];
    checkTwoRanks('kvpipe', 'a sender and a receiver', benchmark.ranks, out);
    if (s.obj_size !== undefined && (s.obj_shape !== undefined || s.dtype !== undefined)) {
      out.push({ path: [SECTION, 'obj_size'], message: 'give obj_size or obj_shape/dtype, not both' });
    }
    const object = s.obj_size !== undefined ? checkSize(s.obj_size, [SECTION, 'obj_size'], out) : objectBytes(s);
    const buffer = checkSize(s.buffer_size, [SECTION, 'buffer_size'], out);
    if (object !== undefined && buffer !== undefined) {
      if (object > buffer) out.push({ path: [SECTION, 'buffer_size'], message: `an object of ${object} bytes does not fit the ${buffer}-byte buffer` });
      else if ((s.batch_size ?? 1) * object > buffer) {
        out.push({ path: [SECTION, 'batch_size'], message: `batch_size ${s.batch_size} x ${object} bytes exceeds the ${buffer}-byte buffer` });
      }
    }
    checkBackendMemory(benchmark.backend, s.memory, [SECTION, 'memory'], out);
    return out;
  },
  metrics(): MetricSpec[] {
    return [
      {
        logFile: LOG,
        extractor: 'lmcache',
        names: [
          'THROUGHPUT_GBPS',
          'THROUGHPUT_GIBPS',
          'SEND_TIME_S',
          'MEAN_THROUGHPUT_GBPS',
          'MEAN_THROUGHPUT_GIBPS',
          'PURE_THROUGHPUT_GBPS_AVG',
          'PURE_THROUGHPUT_GBPS_MIN',
          'PURE_THROUGHPUT_GBPS_MAX',
          'PURE_THROUGHPUT_GIBPS_AVG',
          'COMMITS',
          'COMMIT_TIME_MS_AVG',
          'COMMIT_CREATE_MS_AVG',
          'COMMIT_TRANSFER_MS_AVG',
          'COMMIT_WAIT_MS_AVG',
          'VERIFIED_ROUNDS',
        ],
      },
    ];
  },
  rankCommand(ctx: NixlKindContext): RankCommand {
    return { argv: rankArgv(KVPIPE_COMMAND, section(ctx.config), ctx), logFile: LOG };
  },
  // the pure-transfer throughput (one commit's engine run), the figure the pipe's own tests print
  headline: (_config, metrics) => named(metrics, 'PURE_THROUGHPUT_GBPS_AVG'),
  verdict(config, metrics: Metric[]) {
    const s = section(config);
    const rounds = s.num_rounds ?? 1;
    const verified = metrics.find((m) => m.name === 'VERIFIED_ROUNDS')?.value ?? 0;
    const failures: string[] = [];
    if (verified !== rounds) failures.push(`the receiver verified ${verified} of ${rounds} round(s) ("All data verified successfully!" in ${LOG})`);
    const sent = metrics.filter((m) => m.name === 'SEND_TIME_S').length;
    if (sent !== rounds) failures.push(`the sender finished ${sent} of ${rounds} round(s) in ${LOG}`);
    return failures;
  },
};

