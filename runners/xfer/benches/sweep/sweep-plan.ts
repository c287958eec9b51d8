// Who transfers to whom in a sweep, where each transfer lies in the ranks' buffers, and which
// (block, batch) steps run how many iterations: nixlbench's rules on the engine's ranks. With
// --pipeline_depth D, each lane (thread) has D slots of `batch` blocks each, one request in flight
// per slot (nixlbench: batch x D descriptors per thread, split into D requests).
//
// Ranks [0, I) are initiators and [I, I+T) targets (nixlbench: rank < num_initiator_dev is an
// initiator). pairwise: initiator i <-> target I+i; onetomany: the one initiator -> every target;
// manytoone: every initiator -> the one target; tp: each initiator -> T/I consecutive targets
// (I <= T) or I/T initiators -> each target (I > T). MG (--mode MG, several devices per process):
// two processes, rank 0 the initiator and rank 1 the target, device i of one paired with device
// i of the other, each device with its own buffer (region sweep-d<i>).
import type { XferOp, XferRequest } from '../../backends/types.ts';
import type { Scheme, SweepOptions } from './sweep-options.ts';

/** Blocks above this run num_iter / large_blk_iter_ftr iterations (nixlbench's LARGE_BLOCK_SIZE). */
export const LARGE_BLOCK_SIZE = 1 << 20;
export const SWEEP_REGION = 'sweep';

export interface SweepPair {
  initiator: number;
  target: number;
  /** MG: the device this pair runs on in both processes (its own region on each side). */
  device?: number;
  /** Index of this pair among the initiator's pairs / the target's pairs: its area in each buffer. */
  initiatorSlot: number;
  targetSlot: number;
}

export interface SweepRoles {
  initiators: number;
  targets: number;
  pairs: SweepPair[];
}

export function sweepRoles(worldSize: number, scheme: Scheme, numInitiator?: number, numTarget?: number): SweepRoles {
  const fail = (why: string) => {
    throw new Error(`scheme ${scheme} with ${worldSize} ranks: ${why}`);
  };
  const defaults: Record<Scheme, [number, number]> = {
    pairwise: [worldSize / 2, worldSize / 2],
    tp: [worldSize / 2, worldSize / 2],
    manytoone: [worldSize - 1, 1],
    onetomany: [1, worldSize - 1],
  };
  const initiators = numInitiator ?? (numTarget !== undefined ? worldSize - numTarget : defaults[scheme][0]);
  const targets = numTarget ?? worldSize - initiators;
  if (worldSize < 2) fail('a sweep needs at least 2 ranks (an initiator and a target)');
  if (!Number.isInteger(initiators) || !Number.isInteger(targets) || initiators < 1 || targets < 1) {
    fail(`cannot split into initiators and targets (${initiators} + ${targets}); use an even number of ranks or --num_initiator_dev/--num_target_dev`);
  }
  if (initiators + targets !== worldSize) fail(`--num_initiator_dev ${initiators} + --num_target_dev ${targets} must equal the ${worldSize} ranks`);
  const links: [number, number][] = [];
  const target = (j: number) => initiators + j;
  switch (scheme) {
    case 'pairwise':
      if (initiators !== targets) fail(`pairwise needs as many initiators as targets (${initiators} vs ${targets})`);
      for (let i = 0; i < initiators; i++) links.push([i, target(i)]);
      break;
    case 'onetomany':
      if (initiators !== 1) fail(`onetomany has one initiator, not ${initiators}`);
      for (let j = 0; j < targets; j++) links.push([0, target(j)]);
      break;
    case 'manytoone':
      if (targets !== 1) fail(`manytoone has one target, not ${targets}`);
      for (let i = 0; i < initiators; i++) links.push([i, target(0)]);
      break;
    case 'tp':
      if (initiators <= targets) {
        if (targets % initiators) fail(`tp needs the targets (${targets}) to be a multiple of the initiators (${initiators})`);
        const per = targets / initiators;
        for (let i = 0; i < initiators; i++) for (let k = 0; k < per; k++) links.push([i, target(i * per + k)]);
      } else {
        if (initiators % targets) fail(`tp needs the initiators (${initiators}) to be a multiple of the targets (${targets})`);
        const per = initiators / targets;
        for (let i = 0; i < initiators; i++) links.push([i, target(Math.floor(i / per))]);
      }
      break;
  }
  const slotCount = new Map<number, number>();
  const nextSlot = (rank: number) => {
    const n = slotCount.get(rank) ?? 0;
    slotCount.set(rank, n + 1);
    return n;
  };
  const pairs = links.map(([initiator, t]) => ({ initiator, target: t, initiatorSlot: nextSlot(initiator), targetSlot: nextSlot(t) }));
  return { initiators, targets, pairs };
}

/** MG roles: 2 processes, pairwise, device i <-> device i (nixlbench's MG mode). */
export function mgRoles(worldSize: number, scheme: Scheme, numInitiatorDev = 1, numTargetDev = numInitiatorDev): SweepRoles {
  const fail = (why: string) => {
    throw new Error(`--mode MG: ${why}`);
  };
  if (worldSize !== 2) fail(`one initiator process and one target process drive the devices, so the run has 2 ranks, not ${worldSize}`);
  if (scheme !== 'pairwise') fail(`only the pairwise scheme pairs devices across the two processes (got ${scheme})`);
  if (numInitiatorDev !== numTargetDev) fail(`pairwise pairs initiator device i with target device i, so --num_initiator_dev (${numInitiatorDev}) must equal --num_target_dev (${numTargetDev})`);
  const pairs = Array.from({ length: numInitiatorDev }, (_, device) => ({ initiator: 0, target: 1, device, initiatorSlot: 0, targetSlot: 0 }));
  return { initiators: 1, targets: 1, pairs };
}

/** The region a pair's blocks live in on both sides. */
export function pairRegion(p: Pick<SweepPair, 'device'>): string {
  return p.device === undefined ? SWEEP_REGION : `${SWEEP_REGION}-d${p.device}`;
}

/** This rank's regions and their sizes: one for SG, one per device for MG. */
export function rankRegions(roles: SweepRoles, rank: number, o: SpanOptions): { name: string; device?: number; bytes: number }[] {
  const mine = pairsOf(roles, rank);
  if (mine.some((p) => p.device !== undefined)) return mine.map((p) => ({ name: pairRegion(p), device: p.device, bytes: pairSpan(o) }));
  return [{ name: SWEEP_REGION, bytes: Math.max(1, bufferBytes(roles, rank, o)) }];
}

/** Pairs this rank takes part in. */
export function pairsOf(roles: SweepRoles, rank: number): SweepPair[] {
  return roles.pairs.filter((p) => p.initiator === rank || p.target === rank);
}

type SpanOptions = Pick<SweepOptions, 'numThreads' | 'maxBlockSize' | 'maxBatchSize' | 'pipelineDepth'>;

/** Bytes of one pair's area: one lane per thread. */
export function pairSpan(o: SpanOptions): number {
  return o.numThreads * laneSpan(o);
}

/** One lane: pipeline_depth slots of max_block x max_batch. */
export function laneSpan(o: Omit<SpanOptions, 'numThreads'>): number {
  return o.maxBlockSize * o.maxBatchSize * o.pipelineDepth;
}

/** This rank's buffer: one area per pair it is in. */
export function bufferBytes(roles: SweepRoles, rank: number, o: SpanOptions): number {
  return pairsOf(roles, rank).length * pairSpan(o);
}

export interface SweepStep {
  blockSize: number;
  batchSize: number;
  /** Iterations of the whole step (all threads); each thread runs iterations / num_threads. */
  iterations: number;
  warmup: number;
}

/** Block sizes (outer) and batch sizes (inner), each doubling, as nixlbench walks them. */
export function sweepSteps(o: SweepOptions): SweepStep[] {
  const steps: SweepStep[] = [];
  for (let block = o.startBlockSize; block <= o.maxBlockSize; block *= 2) {
    const large = block > LARGE_BLOCK_SIZE;
    for (let batch = o.startBatchSize; batch <= o.maxBatchSize; batch *= 2) {
      steps.push({
        blockSize: block,
        batchSize: batch,
        iterations: large ? Math.trunc(o.numIter / o.largeBlkIterFtr) : o.numIter,
        // C++ division as nixlbench's; a warm-up that stays negative after its rounding runs none (nixlbench: `if (skip > 0)`)
        warmup: Math.max(0, large ? Math.trunc(o.warmupIter / o.largeBlkIterFtr) : o.warmupIter),
      });
    }
  }
  return steps;
}

/** Offset of block `b` of `lane` in a pair's area of the given slot. */
export function blockOffset(slot: number, lane: number, block: number, blockSize: number, o: SweepOptions): number {
  return slot * pairSpan(o) + lane * laneSpan(o) + block * blockSize;
}

/**
 * The requests of one pipeline slot of one lane of an initiator for a step: batch blocks to each
 * of its targets, after the blocks of the lane's earlier slots.
 */
export function laneRequests(pairs: SweepPair[], me: number, op: XferOp, step: SweepStep, lane: number, o: SweepOptions, slot = 0): XferRequest[] {
  const requests: XferRequest[] = [];
  for (const p of pairs) {
    if (p.initiator !== me) continue;
    for (let b = slot * step.batchSize; b < (slot + 1) * step.batchSize; b++) {
      requests.push({
        op,
        peer: p.target,
        local: pairRegion(p),
        localOffset: blockOffset(p.initiatorSlot, lane, b, step.blockSize, o),
        remote: pairRegion(p),
        remoteOffset: blockOffset(p.targetSlot, lane, b, step.blockSize, o),
        length: step.blockSize,
      });
    }
  }
  return requests;
}

/**
 * Requests in flight per lane for `iterations` requests: pipeline_depth, capped at the iterations
 * with nixlbench's warning (nixlbench then also splits the batch x depth descriptors over the fewer
 * requests, and fails when they do not divide evenly; here each request keeps `batch` blocks).
 */
export function laneDepth(pipelineDepth: number, iterations: number): { depth: number; warning?: string } {
  const depth = Math.max(1, Math.min(pipelineDepth, iterations));
  if (depth === pipelineDepth) return { depth };
  return { depth, warning: `Warning: pipeline_depth (${pipelineDepth}) exceeds num_iter (${iterations}), capping to ${depth}` };
}

/** Iterations and requests in flight per lane in a step's warm-up and timed loops. */
export interface StepDepths {
  laneWarmup: number;
  laneIterations: number;
  warmup: number;
  timed: number;
  /** Slots (plans) a lane needs: the larger depth. */
  slots: number;
  warnings: string[];
}

export function stepDepths(step: SweepStep, o: Pick<SweepOptions, 'numThreads' | 'pipelineDepth'>): StepDepths {
  const laneWarmup = step.warmup / o.numThreads;
  const laneIterations = step.iterations / o.numThreads;
  const warm = laneDepth(o.pipelineDepth, laneWarmup);
  const timed = laneDepth(o.pipelineDepth, laneIterations);
  const warnings = laneWarmup > 0 && warm.warning ? [warm.warning] : [];
  if (timed.warning) warnings.push(timed.warning);
  return { laneWarmup, laneIterations, warmup: warm.depth, timed: timed.depth, slots: Math.max(warm.depth, timed.depth), warnings };
}

/** A (pair, lane) area of a step on this rank: where data is sent from or lands, for the check. */
export interface StepArea {
  region: string;
  /** Identifies the area's pattern: one per (pair device, lane). */
  stream: number;
  offset: number;
  length: number;
  /** Data flows from `source` to `destination` (WRITE: initiator -> target; READ: the reverse). */
  source: number;
  destination: number;
  lane: number;
}

/** `depth`: the slots a lane uses in this step (laneDepth of its timed iterations). */
export function stepAreas(pairs: SweepPair[], me: number, op: XferOp, step: SweepStep, o: SweepOptions, depth = 1): StepArea[] {
  const areas: StepArea[] = [];
  for (const p of pairs) {
    if (p.initiator !== me && p.target !== me) continue;
    const slot = p.initiator === me ? p.initiatorSlot : p.targetSlot;
    const [source, destination] = op === 'WRITE' ? [p.initiator, p.target] : [p.target, p.initiator];
    for (let lane = 0; lane < o.numThreads; lane++) {
      const stream = (p.device ?? 0) * o.numThreads + lane;
      const length = step.blockSize * step.batchSize * depth;
      areas.push({ region: pairRegion(p), stream, offset: blockOffset(slot, lane, 0, step.blockSize, o), length, source, destination, lane });
    }
  }
  return areas;
}
