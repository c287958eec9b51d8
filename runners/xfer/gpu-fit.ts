// Whether a node's GPUs can hold what a nixl job asks of them: the one rule behind the job's own
// check on its node (gpu-check.ts) and the plan's check of the nodes a run gets. No native
// binding here: planning a run must not load CUDA.

export interface GpuAsk {
  gpusPerNode: number;
  ranksPerNode: number;
  mayShare: boolean;
}

/**
 * Why a node with `visible` GPUs cannot hold the job as asked (`where`: "node vm has 1 GPU(s)"), or
 * undefined. The job's check on its node and the plan's check of the nodes a run gets both ask here.
 */
export function gpuShortfall(ask: GpuAsk, visible: number, where: string): string | undefined {
  if (ask.gpusPerNode > visible) return `the config asks for ${ask.gpusPerNode} GPU(s) per node (benchmark.gpus_per_node) but ${where}`;
  const gpus = Math.min(visible, ask.gpusPerNode || visible);
  if (ask.ranksPerNode > gpus && !ask.mayShare) {
    return `${ask.ranksPerNode} ranks per node would share ${gpus} GPU(s) (${where}); set benchmark.ranks_may_share_gpu: true to allow it`;
  }
  return undefined;
}

