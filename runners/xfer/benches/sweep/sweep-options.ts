// `disagg-bench sweep` options: nixlbench's flag names and defaults, read in exactly gflags' forms
// (the argument layer's gflags style, runners/common/args/gflags.ts: -name or --name, value after `=` or as the next word, --flag/--noflag/
// --flag=false), values checked as nixlbench checks them (case-sensitive choices, op_type with its
// message, gflags' integers); on the transfer engine's backends. Beyond nixlbench, documented: sizes
// with K/M/G (`64M`), an op_type list (`READ,WRITE`), and --expect, --tolerance, --link_bw.
import { backendNames, type BackendName, type XferOp } from '../../backends/types.ts';
import { UsageError, choiceOption, intOption, listOption, numberOption, sizeOption } from '../common/options.ts';
import { nixlbenchFlagOptions, parseNixlbenchFlags, unknownFlag, type NixlbenchFlags } from './sweep-nixlbench-flags.ts';
import { gflagsInteger } from '../../../common/args/gflags.ts';
import { readArgs, type ArgSpec, type OptionSpec } from '../../../common/args/read-args.ts';
import { hugepageRounding, nixlbenchBufferError } from './sweep-buffer-rules.ts';

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
  /** nixlbench's buffer per process: checked as nixlbench checks it (sweep-buffer-rules.ts); the sweep allocates what it uses. */
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

/** The sweep's parseArgs options (the walk of every CLI option reads them too). */
export const sweepOptionSpec: OptionSpec = {
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

/** The sweep's words: nixlbench's flags, read as gflags reads them; a flag it does not have is refused with why. */
export const sweepArgSpec: ArgSpec = { options: sweepOptionSpec, style: 'gflags', unknown: unknownFlag };

export function parseSweepArgs(argv: string[]): SweepOptions {
  const { values } = readArgs(argv, sweepArgSpec);
  const v = values as Record<string, string | boolean | string[] | undefined>;
  const str = (name: string) => v[name] as string;
  const backendGiven = v.backend !== undefined;
  // Without --backend: shm, except that flags only UCX honours select ucx (nixlbench's default backend)
  const backend = backendGiven ? choiceOption('backend', str('backend'), backendNames) : impliesUcx(v) ? 'ucx' : 'shm';
  // nixlbench compares these strings exactly (a lowercase 'vram' would silently be DRAM there): case-sensitive
  const initiatorSegType = choiceOption('initiator_seg_type', str('initiator_seg_type'), segTypes, false);
  const targetSegType = choiceOption('target_seg_type', str('target_seg_type'), segTypes, false);
  const int32 = (name: string, min: number, nixlbenchMessage?: string) => {
    const n = gflagsInteger(name, str(name), 'int32');
    if (n < min) throw new UsageError(nixlbenchMessage ? `--${name} ${n}: ${nixlbenchMessage} (nixlbench's check)` : `--${name} takes a whole number >= ${min}, got '${str(name)}'`);
    return n;
  };
  const options: SweepOptions = {
    backend,
    backendGiven,
    initiatorSegType,
    targetSegType,
    scheme: choiceOption('scheme', str('scheme'), schemes, false),
    opTypes: listOption('op_type', str('op_type'), opType),
    checkConsistency: v.check_consistency === true,
    totalBufferSize: sizeFlag('total_buffer_size', str('total_buffer_size')),
    startBlockSize: sizeFlag('start_block_size', str('start_block_size')),
    maxBlockSize: sizeFlag('max_block_size', str('max_block_size')),
    startBatchSize: atLeast('start_batch_size', gflagsInteger('start_batch_size', str('start_batch_size'), 'uint64'), 1),
    maxBatchSize: atLeast('max_batch_size', gflagsInteger('max_batch_size', str('max_batch_size'), 'uint64'), 1),
    numIter: int32('num_iter', 1, 'num_iter must be >= 1'),
    // any int32, as nixlbench: a negative warm-up is rounded as nixlbench rounds it (adjustIterations), and
    // large_blk_iter_ftr <= 0 is refused after the buffer checks, in nixlbench's order (sweep-buffer-rules.ts)
    warmupIter: int32('warmup_iter', -Infinity),
    largeBlkIterFtr: int32('large_blk_iter_ftr', -Infinity),
    numThreads: int32('num_threads', 1),
    pipelineDepth: int32('pipeline_depth', 1, 'pipeline_depth must be >= 1'),
    numInitiatorDev: v.num_initiator_dev === undefined ? undefined : int32('num_initiator_dev', 1),
    numTargetDev: v.num_target_dev === undefined ? undefined : int32('num_target_dev', 1),
    expect: (v.expect as string[]).flatMap((raw) => listOption('expect', raw, parseExpectation)),
    tolerance: numberOption('tolerance', str('tolerance')),
    linkBw: numberOption('link_bw', str('link_bw')),
    testCorruptRank: v.test_corrupt_rank === undefined ? undefined : intOption('test_corrupt_rank', str('test_corrupt_rank'), 0),
    nixlbench: parseNixlbenchFlags(v, backend, backendGiven, [initiatorSegType, targetSegType]),
  };
  if (backendGiven && backend === 'shm' && (initiatorSegType === 'VRAM' || targetSegType === 'VRAM')) {
    throw new UsageError('--backend shm moves host memory only; VRAM segments need --backend cuda, nccl or ucx (with a CUDA transport), or no --backend to pick one');
  }
  if (options.startBlockSize < 1 || options.startBlockSize > options.maxBlockSize) {
    throw new UsageError(`--start_block_size (${options.startBlockSize}) must be between 1 and --max_block_size (${options.maxBlockSize})`);
  }
  if (options.startBatchSize > options.maxBatchSize) {
    throw new UsageError(`--start_batch_size (${options.startBatchSize}) must not exceed --max_batch_size (${options.maxBatchSize})`);
  }
  // nixlbench prints the rounding when it reads its flags, before any check of the rounded size, and uses it from then on
  const rounding = hugepageRounding(options.totalBufferSize, options.nixlbench.hugepages);
  const buffer = nixlbenchBufferError({ ...options, useHugepages: options.nixlbench.hugepages });
  if (buffer) throw new UsageError(`${rounding.message ? `${rounding.message}\n` : ''}${buffer} (nixlbench's check)`);
  if (rounding.message) options.nixlbench.notes.unshift(rounding.message);
  options.totalBufferSize = rounding.totalBufferSize;
  return options;
}

/** nixlbench's check and message (utils.cpp loadParams): exactly READ or WRITE; a list is this sweep's. */
function opType(name: string, raw: string): XferOp {
  if (raw !== 'READ' && raw !== 'WRITE') throw new UsageError(`--${name}: Invalid op type: ${raw}. Must be one of [READ, WRITE] (nixlbench's check)`);
  return raw;
}

/** A size: gflags' uint64 (decimal or 0x-hex), or this sweep's K/M/G units ('64M'). */
function sizeFlag(name: string, raw: string): number {
  return /^(0[xX][0-9a-fA-F]+|[ \t\n\v\f\r]*[-+]?\d+)$/.test(raw) ? gflagsInteger(name, raw, 'uint64') : sizeOption(name, raw);
}

function atLeast(name: string, n: number, min: number): number {
  if (n < min) throw new UsageError(`--${name} takes a whole number >= ${min}, got ${n}`);
  return n;
}

function impliesUcx(v: Record<string, unknown>): boolean {
  return v.enable_pt === true || v.reregister_mem === true || (v.device_list !== undefined && v.device_list !== 'all');
}

/** `67108864:46.48` or `64M:46.48`: block size and expected GB/s. */
function parseExpectation(name: string, raw: string): ExpectedBandwidth {
  const [block, gbps, extra] = raw.split(':');
  if (gbps === undefined || extra !== undefined) throw new UsageError(`--${name} takes BLOCK_SIZE:GBPS (e.g. 67108864:46.48), got '${raw}'`);
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
