// `disagg-bench ct-perftest CONFIG ...`: the CT perftest of the transfer engine (runners/xfer/benches).
import { ctPerftestMain, ctPerftestUsage } from '../../runners/xfer/benches/ct-perftest.ts';
import { ctArgSpec } from '../../runners/xfer/benches/ct-options.ts';

export const usage = ctPerftestUsage;
export const args = ctArgSpec();

export function run(argv: string[]): Promise<number> {
  return ctPerftestMain(argv);
}
