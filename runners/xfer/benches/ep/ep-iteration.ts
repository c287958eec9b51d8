// What both EP data paths share: the regions of the data plane and the runner of iterations
// (host-posted emulation: ep-host-posted.ts; GPU-initiated: ep-gpu-initiated.ts).
import type { Region } from '../../memory.ts';
import type { EP_REGIONS } from './ep-routing.ts';

export type EpPhase = 'dispatch' | 'combine';
export type EpRegions = Record<keyof typeof EP_REGIONS, Region>;

/** Where a GPU-initiated phase's time went, per rank (the copy kernel's own global-timer stamps). */
export interface EpPhaseProfile {
  phase: EpPhase;
  /** Mean over the timed runs: first block's start to the last block's data written. */
  dataUs: number;
  /** Mean over the timed runs: data written to every peer's flag seen. */
  waitUs: number;
}

export interface EpIterationRunner {
  /** How the bytes move, as the banner prints it. */
  readonly description: string;
  /** How `timed` measures, as the banner prints it. */
  readonly timing: string;
  /** Runs `phases` once, after a barrier, until this rank has sent its data and received everything aimed at it. */
  iteration(phases: EpPhase[]): Promise<void>;
  /**
   * After ONE barrier, `count` iterations of `phases` back to back, as NIXL EP's data-plane test
   * times them (test_data_plane.py: a sync of all ranks, then a CUDA event before and after each
   * iteration, nothing between iterations): each iteration's microseconds.
   */
  timed(phases: EpPhase[], count: number): Promise<number[]>;
  /** Per phase, where its time went over the last `timed` call; undefined where nothing records it. */
  profile?(): EpPhaseProfile[] | undefined;
}
