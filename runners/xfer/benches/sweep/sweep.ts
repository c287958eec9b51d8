// `disagg-bench sweep`: nixlbench's point-to-point block-size sweep on the transfer engine. Each
// initiator moves `batch` blocks to each of its targets per iteration; rank 0 prints nixlbench's
// banner and table. Definitions (nixlbench's, sweep-figures.ts): bytes = block x batch x
// iterations (x devices in pairwise MG; onetomany/tp count one target, as nixlbench); B/W = bytes
// / 1e9 / wall time of the timed loop (each slot's first build included); Avg Lat. = that time per
// block; Prep = building the transfer (engine.prepare), Post = the post call, Tx = from the post's
// return to completion.
//   disagg-bench sweep --backend shm --op_type READ,WRITE --check_consistency --num_iter 20 --warmup_iter 5
import { monoNs } from '../../clock.ts';
import type { XferEngine } from '../../engine.ts';
import type { MemoryKind } from '../../memory.ts';
import { checkPattern, describeMismatch, fillPattern, poisonPattern, type PatternStream } from '../../pattern.ts';
import { rankFromEnv, type RankInfo } from '../../rank.ts';
import type { Store } from '../../store.ts';
import type { XferOp, XferResult } from '../../backends/types.ts';
import { runAsRanks, takeRanksOption } from '../common/rank-launch.ts';
import { takeUcxFlags, ucxFlagsUsage } from '../common/ucx-flags.ts';
import { runtimeRank } from './sweep-runtime.ts';
import { runAsRank } from '../bench-rank.ts';
import { checkHostFits } from '../common/memory-limit.ts';
import { chooseSweepBackend } from './sweep-backend.ts';
import { SweepLane } from './sweep-lane.ts';
import { initiatorFigures, postAndTxUs, timingColumns } from './sweep-figures.ts';
import { pipelineDescriptorError } from './sweep-buffer-rules.ts';
import { pipeline } from './sweep-pipeline.ts';
import { defaultVramProbe, sweepEngineOptions, sweepNotes } from './sweep-setup.ts';
import { maxOf } from '../../../common/stats.ts';
import { checkExpectedBandwidth, type MeasuredBandwidth } from './sweep-expect.ts';
import { beginTimed, verifying } from '../common/timed-regions.ts';
import { adjustIterations, parseSweepArgs, sweepArgSpec, type SweepOptions } from './sweep-options.ts';
import {
  laneRequests,
  mgRoles,
  pairsOf,
  rankRegions,
  stepAreas,
  stepDepths,
  sweepRoles,
  sweepSteps,
  type StepArea,
  type SweepRoles,
  type SweepStep,
} from './sweep-plan.ts';
import { hasAggregateColumns, sweepBanner, sweepTableHeader, sweepTableRow, type SweepRow } from './sweep-table.ts';

export const usage = `usage: disagg-bench sweep [--ranks N] [nixlbench flags]
  --backend shm|ucx|cuda|nccl|libfabric (LIBFABRIC: provider from FI_PROVIDER)  --initiator_seg_type/--target_seg_type DRAM|VRAM
  --scheme pairwise|manytoone|onetomany|tp  --op_type READ|WRITE (or READ,WRITE)
  --start_block_size 4096 --max_block_size 64M --start_batch_size 1 --max_batch_size 1
  --num_iter 1000 --warmup_iter 100 --large_blk_iter_ftr 16 --num_threads 1 --pipeline_depth 1 --total_buffer_size 8G
  --check_consistency  --expect BLOCK:GBPS[,BLOCK:GBPS] --tolerance 0.1  --link_bw 50 (GB/s, for Network Util)
  --mode SG|MG  --num_initiator_dev N --num_target_dev N (default: from the scheme and the ranks)
  --enable_pt (ucx progress thread)  --recreate_xfer  --reregister_mem (ucx, libfabric)  --enable_vmm  --use_hugepages
  --device_list all|NIC[,NIC...] (ucx: one NIC per initiator/target index)
  --runtime_type ETCD|ASIO --etcd_endpoints URL --benchmark_group default --asio_address 127.0.0.1 --asio_port 12345
      (how processes started on their own find each other)
  refused with the reason: --progress_threads N (N > 0), --worker_type (other than nixl), --config_file, nixlbench's storage flags
  --test_corrupt_rank R (test hook: rank R flips one received byte, so the check must fail)
  ${ucxFlagsUsage}
Ranks: srun/torchrun/mpirun tasks, else --ranks N started here (default 2).`;

/** For --help (framework/cli.ts): the flags are gflags', so a value may look like a flag. */
export const args = sweepArgSpec;

/** One initiator's figures for one step (targets report none). */
interface InitiatorStats {
  bwGbps: number;
  avgLatUs: number;
  prepUs: number[];
  postUs: number[];
  txUs: number[];
}

export async function run(argv: string[]): Promise<number> {
  const args = takeUcxFlags(argv); // into the environment, which every rank inherits
  // nixlbench's runtimes (ETCD, ASIO): processes started on their own find their ranks
  const { ranks, rest } = takeRanksOption(args);
  const runtime = await runtimeRank(parseSweepArgs(rest), rankFromEnv().launcher !== 'single', ranks !== undefined);
  if (runtime) {
    try {
      return await runSweepRank(parseSweepArgs(rest), runtime.info);
    } finally {
      await runtime.cleanup();
    }
  }
  return runAsRanks({ command: 'sweep', argv: args, defaultRanks: 2 }, async (rest) => runSweepRank(parseSweepArgs(rest)));
}

export async function runSweepRank(o: SweepOptions, info: RankInfo = rankFromEnv()): Promise<number> {
  const me = info.rank;
  const warnings = [...sweepNotes(o), ...adjustIterations(o)]; // nixlbench prints its flag notes (rounding, reregister) before the iteration warnings
  o.backend = chooseSweepBackend(o, defaultVramProbe());
  const flags = o.nixlbench;
  const roles = flags.mode === 'MG' ? mgRoles(info.worldSize, o.scheme, o.numInitiatorDev, o.numTargetDev) : sweepRoles(info.worldSize, o.scheme, o.numInitiatorDev, o.numTargetDev);
  const isInitiator = me < roles.initiators;
  const kind: MemoryKind = (isInitiator ? o.initiatorSegType : o.targetSegType) === 'VRAM' ? 'gpu' : 'host';
  // nixlbench fails a step whose capped pipeline cannot split its descriptors evenly: every rank refuses it before starting
  const peerCounts = new Set(Array.from({ length: roles.initiators }, (_, i) => roles.pairs.filter((p) => p.initiator === i).length));
  for (const step of sweepSteps(o)) {
    const depths = stepDepths(step, o);
    const capped = [...(depths.laneWarmup > 0 ? [depths.warmup] : []), depths.timed].filter((d) => d < o.pipelineDepth);
    for (const depth of capped) {
      for (const peers of peerCounts) {
        const error = pipelineDescriptorError(peers, step.batchSize, o.pipelineDepth, depth);
        if (error) throw new Error(`${error} (nixlbench's execTransferLoop; block ${step.blockSize} B, batch ${step.batchSize}: ${depths.warnings.join('; ')})`);
      }
    }
  }
  // total_buffer_size was checked as nixlbench checks it (sweep-buffer-rules.ts); here only the node's memory limits
  const bytesOf = (rank: number) => rankRegions(roles, rank, o).reduce((sum, r) => sum + r.bytes, 0);
  const largest = maxOf(Array.from({ length: info.worldSize }, (_, r) => bytesOf(r)));
  checkHostFits('the sweep buffer', kind, largest, info.localWorldSize);

  return runAsRank(info, o.backend, [kind], async (engine, store) => {
    const style = { hugepages: flags.hugepages, vmm: flags.vmm };
    for (const region of rankRegions(roles, me, o)) engine.allocate(region.name, region.bytes, kind, { device: region.device, style });
    await engine.connect();
    const code = await sweepAllOps(engine, store, roles, o, warnings);
    await engine.disconnect();
    return code;
  }, sweepEngineOptions(o, roles, info));
}

async function sweepAllOps(engine: XferEngine, store: Store, roles: SweepRoles, o: SweepOptions, warnings: string[]): Promise<number> {
  const me = engine.rank.rank;
  const world = engine.rank.worldSize;
  const print = (text: string) => me === 0 && console.log(text);
  warnings.forEach(print);
  const aggregate = hasAggregateColumns(o, world);
  const steps = sweepSteps(o);
  const failures: string[] = [];
  const measured: MeasuredBandwidth[] = [];
  let stepIndex = 0;
  for (const op of o.opTypes) {
    print(sweepBanner(o, op, world, roles.initiators, roles.targets));
    print(sweepTableHeader(aggregate));
    for (const step of steps) {
      const results = await runStep(engine, store, roles, o, op, step, stepIndex++);
      if (me !== 0) continue;
      const stats = results.map((r) => r?.stats).filter((s): s is InitiatorStats => !!s);
      const mine = results[0]!.stats!;
      const row: SweepRow = {
        blockSize: step.blockSize,
        batchSize: step.batchSize,
        bwGbps: mine.bwGbps,
        avgLatUs: mine.avgLatUs,
        ...timingColumns(mine),
      };
      if (aggregate) {
        row.aggregateGbps = stats.reduce((a, s) => a + s.bwGbps, 0);
        row.networkUtilPct = (row.aggregateGbps / (roles.pairs.length * o.linkBw)) * 100;
      }
      console.log(sweepTableRow(row, aggregate));
      measured.push({ blockSize: step.blockSize, batchSize: step.batchSize, gbps: mine.bwGbps, op: o.opTypes.length > 1 ? op : undefined });
      const stepFailures = results.flatMap((r) => r?.failures ?? []);
      for (const f of stepFailures) console.log(`Consistency check failed: ${op} block ${step.blockSize} B batch ${step.batchSize}: ${f}`);
      failures.push(...stepFailures);
    }
    print('-'.repeat(160));
    const targets = roles.pairs.filter((p) => p.initiator === 0).length;
    if (o.scheme !== 'pairwise' && targets > 1) {
      print(
        `Note: scheme ${o.scheme}: B/W and Avg Lat. count each iteration's batch once, as nixlbench prints them, ` +
          `although rank 0 sent it to each of its ${targets} targets: the bytes moved are ${targets} x B/W`,
      );
    }
  }
  if (me !== 0) return 0;
  if (o.checkConsistency && failures.length === 0) {
    console.log(`Consistency check passed: every transferred byte verified in all ${stepIndex} steps`);
  }
  const misses = checkExpectedBandwidth(o.expect, measured, o.tolerance);
  if (o.expect.length > 0) {
    if (misses.length === 0) console.log(`Expected bandwidth check passed: ${o.expect.length} block size(s) within ${o.tolerance * 100}%`);
    for (const miss of misses) console.log(`Expected bandwidth check failed: ${miss}`);
  }
  return failures.length > 0 || misses.length > 0 ? 1 : 0;
}

interface StepResult {
  stats?: InitiatorStats;
  failures: string[];
}

/** One (block, batch) step on every rank; rank 0 gets every rank's result. */
async function runStep(
  engine: XferEngine,
  store: Store,
  roles: SweepRoles,
  o: SweepOptions,
  op: XferOp,
  step: SweepStep,
  stepIndex: number,
): Promise<(StepResult | undefined)[]> {
  const me = engine.rank.rank;
  const pairs = pairsOf(roles, me);
  const depths = stepDepths(step, o);
  const areas = o.checkConsistency ? stepAreas(pairs, me, op, step, o, depths.slots) : [];
  const streamsPerStep = o.numThreads * new Set(roles.pairs.map((p) => p.device ?? 0)).size;
  const stream = (a: StepArea): PatternStream => ({ sender: a.source, receiver: a.destination, iteration: stepIndex * streamsPerStep + a.stream });
  verifying(me, 'sweep fill/poison', () => {
    for (const a of areas) (a.source === me ? fillPattern : poisonPattern)(engine.regions.get(a.region)!, a.offset, a.length, stream(a));
  });
  await store.barrier('sweep-step-ready');

  const isInitiator = me < roles.initiators;
  const twoSided = engine.backend.twoSided;
  let stats: InitiatorStats | undefined;
  if (isInitiator || twoSided) {
    const everyone = Array.from({ length: engine.rank.worldSize }, (_, r) => r);
    const participants = twoSided ? everyone : everyone.slice(0, roles.initiators);
    if (me === 0) for (const warning of depths.warnings) console.log(warning);
    // Each lane (thread) has a slot per request in flight, each slot a SweepLane of its own blocks
    // Each loop (warm-up, timed) builds its own slots, each slot at its first post: nixlbench's
    // execTransfer creates its requests inside its timer, so B/W's time and the Prep samples
    // include every slot's first build (and, with --recreate_xfer, its rebuilds).
    const makeLanes = (depth: number): SweepLane[][] =>
      Array.from({ length: o.numThreads }, (_, lane) =>
        Array.from({ length: depth }, (_, slot) => new SweepLane(engine, isInitiator ? laneRequests(pairs, me, op, step, lane, o, slot) : [], twoSided ? everyone : undefined, o.nixlbench)),
      );
    const postUs: number[] = [];
    const txUs: number[] = [];
    const record = (r: XferResult) => {
      const sample = postAndTxUs(r);
      postUs.push(sample.postUs);
      txUs.push(sample.txUs);
    };
    const loop = (lanes: SweepLane[][], n: number, onResult?: (r: XferResult) => void) =>
      Promise.all(lanes.map((laneSlots) => pipeline(laneSlots, n, twoSided, onResult)));
    if (depths.laneWarmup > 0) {
      const warm = makeLanes(depths.warmup);
      await loop(warm, depths.laneWarmup);
      warm.forEach((laneSlots) => laneSlots.forEach((slot) => slot.release()));
    }
    const timed = makeLanes(depths.timed);
    await store.barrier('sweep-go', { ranks: participants });
    const endTimed = beginTimed(me, 'sweep timed loop');
    const t0 = monoNs();
    await loop(timed, depths.laneIterations, record);
    timed.forEach((laneSlots) => laneSlots.forEach((slot) => slot.release()));
    const seconds = (monoNs() - t0) / 1e9;
    endTimed();
    if (isInitiator) {
      const peers = pairs.filter((p) => p.initiator === me).length;
      const figures = initiatorFigures({ blockSize: step.blockSize, batchSize: step.batchSize, laneIterations: depths.laneIterations, numThreads: o.numThreads, scheme: o.scheme, peers, seconds });
      const prepUs = timed.flatMap((laneSlots) => laneSlots.flatMap((slot) => slot.prepUs));
      stats = { ...figures, prepUs, postUs, txUs };
    }
  }
  await store.barrier('sweep-step-done');

  const failures: string[] = [];
  const received = areas.filter((a) => a.destination === me);
  if (o.testCorruptRank === me && received.length > 0) {
    const region = engine.regions.get(received[0].region)!;
    const at = received[0].offset + (received[0].length >> 1);
    region.write(at, Uint8Array.of(region.read(at, 1)[0] ^ 0x01));
  }
  verifying(me, 'sweep check', () => {
    for (const a of received) {
      const m = checkPattern(engine.regions.get(a.region)!, a.offset, a.length, stream(a));
      if (m) failures.push(`rank ${me}: ${describeMismatch(a.region, stream(a), m)}`);
    }
  });
  // Rank 0 prints its own timing columns; of the others it needs only their bandwidth.
  const shared = me === 0 || !stats ? stats : { ...stats, prepUs: [], postUs: [], txUs: [] };
  const all = await store.allGather<StepResult | null>('sweep-step-result', shared || failures.length ? { stats: shared, failures } : null);
  return all.map((r) => r ?? undefined);
}

