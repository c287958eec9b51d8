// What both EP data paths share: the regions of the data plane and the runner of one timed
// iteration (host-posted emulation: ep-host-posted.ts; GPU-initiated: ep-gpu-initiated.ts).
import type { Region } from '../../memory.ts';
import type { EP_REGIONS } from './ep-routing.ts';

export type EpPhase = 'dispatch' | 'combine';
export type EpRegions = Record<keyof typeof EP_REGIONS, Region>;

export interface EpIterationRunner {
  /** How the bytes move, as the banner prints it. */
  readonly description: string;
  /**
   * Runs `phases` in order as one iteration: from a common barrier until this rank has sent its
   * data and received everything aimed at it. Returns the microseconds it took.
   */
  iteration(phases: EpPhase[]): Promise<number>;
}
