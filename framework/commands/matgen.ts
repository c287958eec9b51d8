// `disagg-bench matgen ...`: the KV-cache transfer matrix generator (runners/xfer/benches/matgen-cli.ts).
import { matgenArgSpec, matgenMain, matgenUsage } from '../../runners/xfer/benches/matgen-cli.ts';

export const usage = matgenUsage;
export const args = matgenArgSpec;

export function run(argv: string[]): Promise<number> {
  return matgenMain(argv);
}
