// The line a GPU rank prints about its device, and the pattern that reads it back: the engine
// writes it (runners/xfer/gpu-placement.ts), the rank-devices extractor of the framework parses it.

export interface RankDevice {
  rank: number;
  node: string;
  device: number;
  name: string;
  busId: string;
  /** Ranks of this node on the same device (1: its own). */
  sharedBy: number;
}

/** The line a rank prints about its GPU (read back by the rank-devices extractor). */
export function rankDeviceLine(d: RankDevice): string {
  return `GPU of rank ${d.rank}: device ${d.device}, ${d.name}, bus ${d.busId}, node ${d.node}, ${d.sharedBy > 1 ? `shared by ${d.sharedBy} ranks` : 'its own'}`;
}

export const RANK_DEVICE_LINE = /GPU of rank (\d+): device (\d+), (.+), bus (\S+), node (\S+), (its own|shared by (\d+) ranks)/;
