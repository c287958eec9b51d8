// `disagg-bench ep` options: the NIXL EP perf tests' names and defaults, on the engine.
import { readArgs, type OptionSpec } from '../../../common/args/read-args.ts';
import { argparseAbbreviations } from '../../../common/args/argparse.ts';
import { NODE_FLAGS } from './ep-nodes.ts';
import { backendNames, type BackendName } from '../../backends/types.ts';
import type { MemoryKind } from '../../memory.ts';
import { epLayouts, type EpLayoutKind } from './ep-routing.ts';
import { UsageError, choiceOption, intOption, listOption, numberOption } from '../common/options.ts';

export const epModes = ['dispatch', 'combine', 'e2e'] as const;
export type EpMode = (typeof epModes)[number];
/** Who drives the data plane: GPU kernels (as NIXL EP) or the host posting engine transfers (the emulation). */
export const epInitiators = ['gpu', 'host'] as const;
export type EpInitiator = (typeof epInitiators)[number];
export const controlOperations = ['init', 'connect', 'disconnect', 'reconnect', 'destroy'] as const;
export type ControlOperation = (typeof controlOperations)[number];
/** The control-plane test's --test choices (test_control_plane.py): reconnect runs in the cycle only. */
export const controlPlaneTests = ['init', 'connect', 'disconnect', 'destroy', 'cycle'] as const;

/**
 * The options of each NIXL EP perf test itself (test/python/nixl_ep_perf: test_data_plane.py,
 * test_control_plane.py): an abbreviation means what it means in the test the command line runs,
 * as that test's own argparse table decides (`--m` is --master-addr in the control-plane test,
 * ambiguous in the data-plane one, which has --mode). The older names use-tcp-store and
 * skip-nic-discovery are this command's, not in either table.
 */
const EP_SHARED_OPTIONS = ['num-processes', 'experts-per-rank', 'hidden', 'nvlink-backend', 'warmup', 'timeout', 'discover-nics', 'use-etcd', 'world-size', 'rank', 'master-addr'];
export const EP_DATA_PLANE_OPTIONS: readonly string[] = [...EP_SHARED_OPTIONS, 'mode', 'tokens', 'topk', 'iters'];
export const EP_CONTROL_PLANE_OPTIONS: readonly string[] = [...EP_SHARED_OPTIONS, 'test', 'num-tokens', 'rounds'];

/** Whether the command line runs the control-plane test: --control-plane, or the test's own --test (a prefix of it too). */
function runsControlPlane(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((w) => /^--(control-plane|te|tes|test)(=|$)/.test(w));
}

export interface EpOptions {
  /** Data-plane modes, run in order; empty when only the control plane runs. */
  modes: EpMode[];
  controlPlane: boolean;
  /** Control plane: only this operation's row (its prerequisites still run); 'cycle' (the tests' default) = all. */
  test?: ControlOperation;
  /** Control plane: rounds before the measured ones (the tests' --warmup, default 0). */
  cpWarmup: number;
  /** Control plane: measured rounds (the tests' --rounds, default 1); min/avg/max are over them. */
  rounds: number;
  /** --timeout: seconds every wait of the store may take (the tests' default 300). */
  timeoutS?: number;
  /** Lines rank 0 prints about flags that change nothing here (and why). */
  notes: string[];
  tokens: number;
  hidden: number;
  /** One data-plane run per value (the data-plane test's default: 8). */
  expertsPerRank: number[];
  /** One control-plane table (or --test line) per value: --experts-per-rank, else the control-plane test's DEFAULT_EXPERT_COUNTS [8, 32]. */
  cpExpertsPerRank: number[];
  topk: number;
  warmup: number;
  iters: number;
  seed: number;
  /** packed: one transfer per (source, destination); per-message: one per (token, expert). */
  layout: EpLayoutKind;
  backend: BackendName;
  /** gpu: one kernel launch per phase (cuda only, the default there); host: the host-posted emulation. */
  initiatedBy: EpInitiator;
  memory?: MemoryKind;
  /** Test hook: this rank flips a received byte before verifying. */
  testCorruptRank?: number;
  /** Test hook: this rank joins every barrier but moves nothing and writes no flags (the others must fail naming it). */
  testSilentRank?: number;
}

/** The control-plane test's DEFAULT_EXPERT_COUNTS (test_control_plane.py): both run without --experts-per-rank. */
export const CONTROL_PLANE_DEFAULT_EXPERTS = [8, 32] as const;

/** --nvlink-backend of the Python tests (argparse choices, in their order), when --backend is not given: ipc = CUDA IPC, none/nixl = UCX. */
const NVLINK_CHOICES = ['nixl', 'ipc', 'none'] as const;
const NVLINK_BACKENDS: Record<(typeof NVLINK_CHOICES)[number], BackendName> = { ipc: 'cuda', nixl: 'ucx', none: 'ucx' };

/** A choice as the tests' argparse checks it: exact case, argparse's message. */
function argparseChoice<T extends string>(name: string, raw: string, choices: readonly T[]): T {
  const found = choices.find((c) => c === raw);
  if (found === undefined) throw new UsageError(`argument --${name}: invalid choice: '${raw}' (choose from ${choices.map((c) => `'${c}'`).join(', ')})`);
  return found;
}

/** Every option `disagg-bench ep` reads (the launcher's --ranks and node flags are taken before, ep-nodes.ts). */
export const EP_OPTION_SPEC = {
  mode: { type: 'string' },
  'control-plane': { type: 'boolean', default: false },
  test: { type: 'string' },
  tokens: { type: 'string' },
  hidden: { type: 'string', default: '4096' },
  'experts-per-rank': { type: 'string' },
  topk: { type: 'string', default: '2' },
  warmup: { type: 'string' },
  iters: { type: 'string' },
  rounds: { type: 'string' },
  'num-tokens': { type: 'string' },
  timeout: { type: 'string' },
  seed: { type: 'string', default: '1' },
  layout: { type: 'string', default: 'packed' },
  backend: { type: 'string' },
  'nvlink-backend': { type: 'string' },
  memory: { type: 'string' },
  'initiated-by': { type: 'string' },
  // the Python tests' metadata exchange and NIC choice (older and current names)
  'use-tcp-store': { type: 'boolean' },
  'skip-nic-discovery': { type: 'boolean' },
  'use-etcd': { type: 'boolean' },
  'discover-nics': { type: 'boolean' },
  'test-corrupt-rank': { type: 'string' },
  'test-silent-rank': { type: 'string' },
} as const satisfies OptionSpec;

/**
 * The command line with argparse's abbreviations written out (the tests keep allow_abbrev on):
 * every long option of the command, the launcher's and node flags included; a prefix means what
 * it means to the test the command line runs (its option table) where this command's own options
 * would make it ambiguous.
 */
export function expandEpAbbreviations(argv: readonly string[]): string[] {
  const names = [...Object.keys(EP_OPTION_SPEC), ...NODE_FLAGS.map((f) => f.slice(2)), 'ranks'];
  return argparseAbbreviations(argv, names, runsControlPlane(argv) ? EP_CONTROL_PLANE_OPTIONS : EP_DATA_PLANE_OPTIONS);
}

export function parseEpArgs(argv: string[]): EpOptions {
  const { values: v } = readArgs(argv, { options: EP_OPTION_SPEC });
  if (v['use-etcd']) {
    throw new UsageError("--use-etcd: the engine's ranks exchange their metadata through its own TCP store, there is no etcd path to choose; leave it out");
  }
  if (v['discover-nics']) {
    throw new UsageError('--discover-nics: GPU-NIC topology discovery (each GPU paired with its nearest NIC for UCX) is not done here; set UCX_NET_DEVICES per rank instead');
  }
  const notes: string[] = [];
  if (v['use-tcp-store']) notes.push("--use-tcp-store: the engine's store is a TCP store already (nothing to switch)");
  if (v['skip-nic-discovery']) notes.push('--skip-nic-discovery: the engine does no NIC discovery (UCX picks, as with this flag)');
  if (v.tokens !== undefined && v['num-tokens'] !== undefined && v.tokens !== v['num-tokens']) {
    throw new UsageError(`--tokens ${v.tokens} and --num-tokens ${v['num-tokens']} name the same value (the data and control plane tests' names): give one`);
  }
  const hidden = intOption('hidden', v.hidden);
  const experts = v['experts-per-rank'] === undefined ? undefined : listOption('experts-per-rank', v['experts-per-rank'], (n, raw) => intOption(n, raw));
  if (hidden % 128) throw new UsageError(`--hidden ${hidden} must be a multiple of 128 (one fp32 scale per 128 values)`);
  const controlPlane = v['control-plane'] || v.test !== undefined;
  // The data plane runs when asked for with --mode, or by default when the control plane is not
  const modes = v.mode !== undefined ? listOption('mode', v.mode, (n, raw) => argparseChoice(n, raw, epModes)) : controlPlane ? [] : ['e2e' as const];
  // checked whether or not --backend decides, as the tests' argparse checks it
  const nvlink = v['nvlink-backend'] === undefined ? undefined : argparseChoice('nvlink-backend', v['nvlink-backend'], NVLINK_CHOICES);
  let backend: BackendName = 'shm';
  if (v.backend !== undefined) backend = choiceOption('backend', v.backend, backendNames);
  else if (nvlink !== undefined) backend = NVLINK_BACKENDS[nvlink];
  const initiatedBy = v['initiated-by'] === undefined ? (backend === 'cuda' ? 'gpu' : 'host') : choiceOption('initiated-by', v['initiated-by'], epInitiators);
  if (initiatedBy === 'gpu' && backend !== 'cuda') {
    throw new UsageError(`--initiated-by gpu needs --backend cuda (kernels write into peers' GPU memory through CUDA IPC); ${backend} is host-posted only`);
  }
  const iters = intOption('iters', v.iters ?? '100');
  if (modes.length > 0 && iters < 2) throw new UsageError('--iters must be at least 2: the first sample is dropped');
  // --warmup: data-plane iterations (default 10) and control-plane rounds (default 0), the two tests' defaults.
  // With the control plane alone, --iters is its measured rounds (the newer control test's name for --rounds).
  const cpOnly = modes.length === 0;
  const rounds = v.rounds !== undefined ? intOption('rounds', v.rounds) : cpOnly && v.iters !== undefined ? intOption('iters', v.iters) : 1;
  const test = v.test === undefined ? undefined : argparseChoice('test', v.test, controlPlaneTests);
  return {
    modes,
    controlPlane,
    test: test === 'cycle' ? undefined : test,
    cpWarmup: v.warmup === undefined ? 0 : intOption('warmup', v.warmup, 0),
    rounds,
    timeoutS: v.timeout === undefined ? undefined : numberOption('timeout', v.timeout, 1),
    notes,
    tokens: intOption('tokens', v.tokens ?? v['num-tokens'] ?? '512'),
    hidden,
    expertsPerRank: experts ?? [8],
    cpExpertsPerRank: experts ?? [...CONTROL_PLANE_DEFAULT_EXPERTS],
    topk: intOption('topk', v.topk),
    warmup: intOption('warmup', v.warmup ?? '10', 0),
    iters,
    seed: intOption('seed', v.seed, 0),
    layout: choiceOption('layout', v.layout, epLayouts),
    backend,
    initiatedBy,
    memory: v.memory === undefined ? undefined : choiceOption('memory', v.memory, ['host', 'gpu'] as const),
    testCorruptRank: v['test-corrupt-rank'] === undefined ? undefined : intOption('test-corrupt-rank', v['test-corrupt-rank'], 0),
    testSilentRank: v['test-silent-rank'] === undefined ? undefined : intOption('test-silent-rank', v['test-silent-rank'], 0),
  };
}
