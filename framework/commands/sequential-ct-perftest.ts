// `disagg-bench sequential-ct-perftest CONFIG ...`: a sequence of traffic patterns (runners/xfer/benches).
import { sequentialArgSpec, sequentialCtPerftestMain, sequentialUsage } from '../../runners/xfer/benches/sequential-ct-perftest.ts';

export const usage = sequentialUsage;
export const args = sequentialArgSpec;

export function run(argv: string[]): Promise<number> {
  return sequentialCtPerftestMain(argv);
}
