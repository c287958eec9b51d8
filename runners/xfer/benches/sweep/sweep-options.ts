// `disagg-bench sweep` options: nixlbench's flag names and defaults (gflags style: --name value,
// --name=value, --flag, --flag=false, --noflag), on the transfer engine's backends.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { backendNames, type BackendName, type XferOp } from '../../backends/types.ts';
import {
  BenchOptionError,
  choiceOption,
  intOption,
  listOption,
  normalizeBooleanFlags,
  numberOption,
  sizeOption,
} from '../common/options.ts';
import { NIXLBENCH_BOOLEANS, explainUnknownFlag, nixlbenchFlagOptions, parseNixlbenchFlags, type NixlbenchFlags } from './sweep-nixlbench-flags.ts';

export const segTypes = ['DRAM', 'VRAM'] as const;
export type SegType = (typeof segTypes)[number];
export const schemes = ['pairwise', 'manytoone', 'onetomany', 'tp'] as const;
export type Scheme = (typeof schemes)[number];

export interface ExpectedBandwidth {
  blockSize: number;
  gbps: number;
}

export interface SweepOptions {
  /** The backend; without --backend: shm for DRAM, a GPU backend for VRAM (chosen at run time, sweep-backend.ts). */
  backend: BackendName;
  backendGiven: boolean;
  initiatorSegType: SegType;
  targetSegType: SegType;
  scheme: Scheme;
  /** One sweep per op, in order (nixlbench takes one; a list runs them one after the other). */
  opTypes: XferOp[];
  checkConsistency: boolean;
  /** nixlbench's limit on each process's buffer; the sweep allocates only what it uses. */
  totalBufferSize: number;
  startBlockSize: number;
  maxBlockSize: number;
  startBatchSize: number;
  maxBatchSize: number;
  numIter: number;
  warmupIter: number;
  largeBlkIterFtr: number;
  numThreads: number;
  /** Requests in flight per thread (nixlbench's sliding window). */
  pipelineDepth: number;
  /** Initiator and target rank counts (default from the scheme and the number of ranks). */
  numInitiatorDev?: number;
  numTargetDev?: number;
  /** Expected GB/s per block size, checked within `tolerance` (a fraction) at the end. */
  expect: ExpectedBandwidth[];
  tolerance: number;
  /** Link bandwidth (GB/s) that Network Util (%) is relative to: nixlbench's MAXBW, 50 (a CX-7 NIC). */
  linkBw: number;
  /** Test hook: this rank flips one received byte before checking, so the check's failure path runs. */
  testCorruptRank?: number;
  /** nixlbench's memory, lifecycle, progress, device and runtime flags (sweep-nixlbench-flags.ts). */
  nixlbench: NixlbenchFlags;
}

const BOOLEANS = ['check_consistency', ...NIXLBENCH_BOOLEANS];

/** The sweep's parseArgs options (the walk of every CLI option reads them too). */
export const sweepOptionSpec: NonNullable<ParseArgsConfig['options']> = {
  backend: { type: 'string' },
  initiator_seg_type: { type: 'string', default: 'DRAM' },
  target_seg_type: { type: 'string', default: 'DRAM' },
  scheme: { type: 'string', default: 'pairwise' },
  op_type: { type: 'string', default: 'WRITE' },
  check_consistency: { type: 'boolean', default: false },
  total_buffer_size: { type: 'string', default: String(8 * 1024 ** 3) },
  start_block_size: { type: 'string', default: String(4 * 1024) },
  max_block_size: { type: 'string', default: String(64 * 1024 ** 2) },
  start_batch_size: { type: 'string', default: '1' },
  max_batch_size: { type: 'string', default: '1' },
  num_iter: { type: 'string', default: '1000' },
  warmup_iter: { type: 'string', default: '100' },
  large_blk_iter_ftr: { type: 'string', default: '16' },
  num_threads: { type: 'string', default: '1' },
  pipeline_depth: { type: 'string', default: '1' },
  num_initiator_dev: { type: 'string' },
  num_target_dev: { type: 'string' },
  expect: { type: 'string', multiple: true, default: [] },
  tolerance: { type: 'string', default: '0.1' },
  link_bw: { type: 'string', default: '50' },
  test_corrupt_rank: { type: 'string' },
  ...nixlbenchFlagOptions,
};

export function parseSweepArgs(argv: string[]): SweepOptions {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: normalizeBooleanFlags(argv, BOOLEANS), strict: true, options: sweepOptionSpec }));
  } catch (err) {
    throw explainUnknownFlag(err);
  }
  const v = values as Record<string, string | boolean | string[] | undefined>;
  const str = (name: string) => v[name] as string;
  const backendGiven = v.backend !== undefined;
  // Without --backend: shm, except that flags only UCX honours select ucx (nixlbench's default backend)
  const backend = backendGiven ? choiceOption('backend', str('backend'), backendNames) : impliesUcx(v) ? 'ucx' : 'shm';
  const initiatorSegType = choiceOption('initiator_seg_type', str('initiator_seg_type'), segTypes);
  const targetSegType = choiceOption('target_seg_type', str('target_seg_type'), segTypes);
  const options: SweepOptions = {
    backend,
    backendGiven,
    initiatorSegType,
    targetSegType,
    scheme: choiceOption('scheme', str('scheme'), schemes),
    opTypes: listOption('op_type', str('op_type'), (n, raw) => choiceOption(n, raw, ['READ', 'WRITE'] as const)),
    checkConsistency: v.check_consistency === true,
    totalBufferSize: sizeOption('total_buffer_size', str('total_buffer_size')),
    startBlockSize: sizeOption('start_block_size', str('start_block_size')),
    maxBlockSize: sizeOption('max_block_size', str('max_block_size')),
    startBatchSize: intOption('start_batch_size', str('start_batch_size')),
    maxBatchSize: intOption('max_batch_size', str('max_batch_size')),
    numIter: intOption('num_iter', str('num_iter')),
    warmupIter: intOption('warmup_iter', str('warmup_iter'), 0),
    largeBlkIterFtr: intOption('large_blk_iter_ftr', str('large_blk_iter_ftr')),
    numThreads: intOption('num_threads', str('num_threads')),
    pipelineDepth: intOption('pipeline_depth', str('pipeline_depth')),
    numInitiatorDev: v.num_initiator_dev === undefined ? undefined : intOption('num_initiator_dev', str('num_initiator_dev')),
    numTargetDev: v.num_target_dev === undefined ? undefined : intOption('num_target_dev', str('num_target_dev')),
    expect: (v.expect as string[]).flatMap((raw) => listOption('expect', raw, parseExpectation)),
    tolerance: numberOption('tolerance', str('tolerance')),
    linkBw: numberOption('link_bw', str('link_bw')),
    testCorruptRank: v.test_corrupt_rank === undefined ? undefined : intOption('test_corrupt_rank', str('test_corrupt_rank'), 0),
    nixlbench: parseNixlbenchFlags(v, backend, backendGiven, [initiatorSegType, targetSegType]),
  };
  if (backendGiven && backend === 'shm' && (initiatorSegType === 'VRAM' || targetSegType === 'VRAM')) {
    throw new BenchOptionError('--backend shm moves host memory only; VRAM segments need --backend cuda, nccl or ucx (with a CUDA transport), or no --backend to pick one');
  }
  if (options.startBlockSize < 1 || options.startBlockSize > options.maxBlockSize) {
    throw new BenchOptionError(`--start_block_size (${options.startBlockSize}) must be between 1 and --max_block_size (${options.maxBlockSize})`);
  }
  if (options.startBatchSize > options.maxBatchSize) {
    throw new BenchOptionError(`--start_batch_size (${options.startBatchSize}) must not exceed --max_batch_size (${options.maxBatchSize})`);
  }
  return options;
}

function impliesUcx(v: Record<string, unknown>): boolean {
  return v.enable_pt === true || v.reregister_mem === true || (v.device_list !== undefined && v.device_list !== 'all');
}

/** `67108864:46.48` or `64M:46.48`: block size and expected GB/s. */
function parseExpectation(name: string, raw: string): ExpectedBandwidth {
  const [block, gbps, extra] = raw.split(':');
  if (gbps === undefined || extra !== undefined) throw new BenchOptionError(`--${name} takes BLOCK_SIZE:GBPS (e.g. 67108864:46.48), got '${raw}'`);
  return { blockSize: sizeOption(name, block), gbps: numberOption(name, gbps) };
}

/** nixlbench's rounding: iterations become multiples of threads x large-block factor, with its warning. */
export function adjustIterations(o: SweepOptions): string[] {
  const warnings: string[] = [];
  const partition = o.numThreads * o.largeBlkIterFtr;
  if (o.numIter % partition) {
    o.numIter += partition - (o.numIter % partition);
    warnings.push(`WARNING: Adjusting num_iter to ${o.numIter} to allow equal distribution to ${o.numThreads} threads`);
  }
  if (o.warmupIter % partition) {
    o.warmupIter += partition - (o.warmupIter % partition);
    warnings.push(`WARNING: Adjusting warmup_iter to ${o.warmupIter} to allow equal distribution to ${o.numThreads} threads`);
  }
  return warnings;
}
