// `disagg-bench serve-bench ...`: the project's own serving client (runners/trtllm/serve-bench).
import { serveBenchMain } from '../../runners/trtllm/serve-bench/main.ts';
import { serveBenchArgSpec, serveBenchUsage } from '../../runners/trtllm/serve-bench/options.ts';

export const usage = serveBenchUsage;
export const args = serveBenchArgSpec;

export function run(argv: string[]): Promise<number> {
  return serveBenchMain(argv);
}
