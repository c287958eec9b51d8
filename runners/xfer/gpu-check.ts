// `disagg-bench gpu-check --gpus-per-node G --ranks-per-node R [--ranks-may-share-gpu]`: the step a
// nixl job runs on its node before any rank starts. It refuses, with the reason, a node that has
// fewer GPUs than the config asks for (gpus_per_node: 2 on a 1-GPU machine ran both ranks on one
// GPU and reported a copy inside it as a transfer between 2 GPUs), and more ranks than GPUs unless
// the config allows ranks to share them.
import os from 'node:os';
import { readArgs } from '../common/args/read-args.ts';
import { cudart } from './native/cudart.ts';
import { UsageError, intOption } from './benches/common/options.ts';
import { gpuShortfall, type GpuAsk } from './gpu-fit.ts';

export type { GpuAsk } from './gpu-fit.ts';

/** Why this node cannot run the job as asked, or undefined. `visible`: the GPUs CUDA sees here. */
export function nodeGpuProblem(ask: GpuAsk, visible: number, node: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const where = `node ${node} has ${visible} GPU(s)${env.CUDA_VISIBLE_DEVICES !== undefined ? ` visible (CUDA_VISIBLE_DEVICES=${env.CUDA_VISIBLE_DEVICES})` : ''}`;
  const problem = gpuShortfall(ask, visible, where);
  return problem && ask.gpusPerNode > visible ? `${problem}: refused before any rank starts` : problem;
}

export const usage = `usage: disagg-bench gpu-check --gpus-per-node G --ranks-per-node R [--ranks-may-share-gpu]
  A nixl job's step on each node before its ranks start: refuses a node with fewer GPUs than the
  config asks for (benchmark.gpus_per_node), or more ranks than GPUs unless ranks may share them.
  --gpus-per-node G        GPUs the config asks for per node (default 0: as many as there are)
  --ranks-per-node R       ranks started on this node (default 1)
  --ranks-may-share-gpu    the config allows ranks to share a GPU (benchmark.ranks_may_share_gpu)`;

export const gpuCheckOptionSpec = {
  'gpus-per-node': { type: 'string', default: '0' },
  'ranks-per-node': { type: 'string', default: '1' },
  'ranks-may-share-gpu': { type: 'boolean', default: false },
} as const;

export function parseGpuCheckArgs(argv: string[]): GpuAsk {
  const { values: v } = readArgs(argv, { options: gpuCheckOptionSpec });
  return { gpusPerNode: intOption('gpus-per-node', v['gpus-per-node'], 0), ranksPerNode: intOption('ranks-per-node', v['ranks-per-node']), mayShare: v['ranks-may-share-gpu'] };
}

export async function run(argv: string[]): Promise<number> {
  const ask = parseGpuCheckArgs(argv);
  let visible: number;
  try {
    visible = cudart().deviceCount();
  } catch (err) {
    throw new UsageError(`the config's ranks need GPUs, and CUDA cannot count any on node ${os.hostname()}: ${(err as Error).message}`);
  }
  const problem = nodeGpuProblem(ask, visible, os.hostname());
  if (problem) throw new UsageError(problem);
  console.log(`GPU check: node ${os.hostname()} has ${visible} GPU(s) for ${ask.ranksPerNode} rank(s)${ask.ranksPerNode > visible ? ' (ranks share GPUs, as the config allows)' : ''}`);
  return 0;
}
