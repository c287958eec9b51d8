// Whether the nodes a nixl job gets can hold it: its ranks per node as tasks on one node's CPUs
// (SLURM refuses a job asking for more: "Requested node configuration is not available"), and the
// GPUs it asks for per node (the job's gpu-check step would refuse the node before any rank
// starts). A config that cannot fit is skipped with the reason, as a config for another GPU is;
// what the nodes hold comes from sinfo (SLURM) or NVML (this machine, the local scheduler).
import type { NodeSize } from '../../contract/test-type.ts';
import { gpuShortfall } from '../../../runners/xfer/gpu-fit.ts';
import { nodesOf, nixlConfig, usesGpus } from './common.ts';

export function nixlCannotHold(raw: Record<string, unknown>, node: NodeSize): string | undefined {
  const config = nixlConfig(raw);
  const { benchmark } = config;
  const perNode = benchmark.ranks / nodesOf(config);
  if (node.cpus !== undefined && perNode > node.cpus) {
    return `cannot run here: ${perNode} ranks on one node (benchmark.ranks / nodes) need ${perNode} tasks, but ${node.where} ${node.where.startsWith('the nodes') ? 'have' : 'has'} ${node.cpus} CPUs`;
  }
  if (node.gpus === undefined || !usesGpus(config)) return undefined;
  const ask = { gpusPerNode: benchmark.gpus_per_node ?? 0, ranksPerNode: perNode, mayShare: benchmark.ranks_may_share_gpu ?? false };
  const problem = gpuShortfall(ask, node.gpus, `${node.where} ${node.where.startsWith('the nodes') ? 'have' : 'has'} ${node.gpus} GPU(s)`);
  return problem ? `cannot run here: ${problem}` : undefined;
}
