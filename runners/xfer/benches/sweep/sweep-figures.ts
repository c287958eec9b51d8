// An initiator's B/W and Avg Lat. for one step, as nixlbench's xferBenchUtils::printStats computes
// them (benchmark/nixlbench/src/utils/utils.cpp): bytes = block x batch x iterations (all threads),
// B/W = bytes / 1e9 / the timed loop's wall time, Avg Lat. = that time / (iterations per thread x
// batch). Only pairwise multiplies by the devices an initiator drives (nixlbench: MG mode, x
// num_initiator_dev); onetomany and tp do NOT count their several targets, although each iteration
// moves batch blocks to every one of them (nixlbench's getStrideScheme): their B/W is one target's
// share, as nixlbench prints it. `movedGbps` is what actually moved, for the note the sweep prints.
import type { XferResult } from '../../backends/types.ts';
import type { Scheme } from './sweep-options.ts';
import { mean, nixlbenchPercentile } from '../../../common/stats.ts';

export interface StepCounts {
  blockSize: number;
  batchSize: number;
  /** Timed iterations per thread. */
  laneIterations: number;
  numThreads: number;
  scheme: Scheme;
  /** The initiator's (target, device) pairs: devices in pairwise MG, targets in onetomany/tp. */
  peers: number;
  seconds: number;
}

export interface InitiatorFigures {
  bwGbps: number;
  avgLatUs: number;
  /** Bytes actually moved per second (x every peer), GB/s. */
  movedGbps: number;
}

export function initiatorFigures(c: StepCounts): InitiatorFigures {
  const counted = c.scheme === 'pairwise' ? c.peers : 1;
  const perPeer = c.blockSize * c.batchSize * c.laneIterations * c.numThreads;
  return {
    bwGbps: (perPeer * counted) / 1e9 / c.seconds,
    avgLatUs: (c.seconds * 1e6) / (c.laneIterations * c.batchSize * counted),
    movedGbps: (perPeer * c.peers) / 1e9 / c.seconds,
  };
}

/**
 * One iteration's Post and Tx samples (us), nixlbench's postSlot and execTransferLoop: Post = the
 * post call itself; Tx = from when the post RETURNED until the completion was seen (the post's own
 * time is in Post, not in Tx).
 */
export function postAndTxUs(r: Pick<XferResult, 'startNs' | 'postedNs' | 'endNs'>): { postUs: number; txUs: number } {
  return { postUs: (r.postedNs - r.startNs) / 1e3, txUs: (r.endNs - r.postedNs) / 1e3 };
}

export interface TimingSamples {
  prepUs: ArrayLike<number>;
  postUs: ArrayLike<number>;
  txUs: ArrayLike<number>;
}

/**
 * The Prep, Post and Tx columns: the mean and nixlbench's P99 of each (xferMetricStats::avg and
 * ::p99: the sorted samples' element at floor(0.99 n), one sample above the nearest rank when n is
 * a multiple of 100).
 */
export function timingColumns(s: TimingSamples): { avgPrepUs: number; p99PrepUs: number; avgPostUs: number; p99PostUs: number; avgTxUs: number; p99TxUs: number } {
  const avg = (xs: ArrayLike<number>) => (xs.length === 0 ? 0 : mean(Array.from(xs)));
  return {
    avgPrepUs: avg(s.prepUs),
    p99PrepUs: nixlbenchPercentile(s.prepUs, 0.99),
    avgPostUs: avg(s.postUs),
    p99PostUs: nixlbenchPercentile(s.postUs, 0.99),
    avgTxUs: avg(s.txUs),
    p99TxUs: nixlbenchPercentile(s.txUs, 0.99),
  };
}
