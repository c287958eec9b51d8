// nixlbench's checks of the buffer against the block size, threads and devices, in its order and
// words (xferBenchConfig::loadParams, benchmark/nixlbench/src/utils/utils.cpp); nixlbench stops at
// the first. Before them, --use_hugepages rounds total_buffer_size up to a whole number of 2 MiB
// pages (with nixlbench's message), so the checks see the rounded size; after the three buffer
// checks comes the iteration factor's, then the divisibility checks. C++ integer division as
// nixlbench computes it; the device counts are its flags (default 1), in SG mode too, as nixlbench
// uses them. The message for the target repeats nixlbench's "num_initiator_dev" (its typo) so a
// user finds it. Pipeline depth and the per-rank areas are not limited by total_buffer_size here
// either: nixlbench wraps its blocks around the buffer, the sweep gives every block its own bytes
// (so every block can be verified) and refuses only what does not fit the node's memory
// (common/memory-limit.ts).

/** nixlbench's HUGEPAGE_SIZE (benchmark/nixlbench/src/utils/utils.h). */
export const HUGEPAGE_SIZE = 2 * 1024 * 1024;

export interface BufferRuleInputs {
  totalBufferSize: number;
  maxBlockSize: number;
  maxBatchSize: number;
  numThreads: number;
  /** nixlbench's flags; undefined = its default, 1. */
  numInitiatorDev?: number;
  numTargetDev?: number;
  /** --large_blk_iter_ftr; undefined = its default, 16. */
  largeBlkIterFtr?: number;
  /** --use_hugepages: total_buffer_size is rounded up to 2 MiB first. */
  useHugepages?: boolean;
}

/** --use_hugepages: nixlbench's ROUND_UP of total_buffer_size to HUGEPAGE_SIZE, and the line it prints. */
export function hugepageRounding(totalBufferSize: number, useHugepages: boolean): { totalBufferSize: number; message?: string } {
  if (!useHugepages || totalBufferSize % HUGEPAGE_SIZE === 0) return { totalBufferSize };
  const rounded = Math.ceil(totalBufferSize / HUGEPAGE_SIZE) * HUGEPAGE_SIZE;
  return { totalBufferSize: rounded, message: `Rounding total_buffer_size from ${totalBufferSize} to ${rounded} for 2MB hugepage alignment.` };
}

/** nixlbench's refusal of this configuration, or undefined when it runs. */
export function nixlbenchBufferError(o: BufferRuleInputs): string | undefined {
  const initiatorDev = o.numInitiatorDev ?? 1;
  const targetDev = o.numTargetDev ?? 1;
  const total = hugepageRounding(o.totalBufferSize, o.useHugepages ?? false).totalBufferSize;
  const blockBatch = o.maxBlockSize * o.maxBatchSize;
  const per = (n: number) => Math.floor(total / n);
  if (blockBatch > per(initiatorDev)) {
    return 'Incorrect buffer size configuration for Initiator(max_block_size * max_batch_size) is > (total_buffer_size / num_initiator_dev)';
  }
  if (blockBatch > per(targetDev)) {
    return 'Incorrect buffer size configuration for Target(max_block_size * max_batch_size) is > (total_buffer_size / num_initiator_dev)';
  }
  if (blockBatch > per(o.numThreads)) {
    return `Incorrect buffer size configuration (max_block_size * max_batch_size) (${blockBatch}) is > (total_buffer_size / num_threads) (${per(o.numThreads)})`;
  }
  if ((o.largeBlkIterFtr ?? 16) <= 0) return 'iter_factor must be greater than 0';
  for (const [devices, flag] of [[initiatorDev, 'num_initiator_dev'], [targetDev, 'num_target_dev']] as const) {
    const partition = devices * o.numThreads;
    if (total % partition) {
      return `Total_buffer_size must be divisible by the product of num_threads and ${flag}, next such value is ${total + partition - (total % partition)}`;
    }
  }
  return undefined;
}

/**
 * nixlbench's execTransferLoop, when a loop has fewer iterations than --pipeline_depth: the depth
 * is capped to them, and the thread's descriptors (batch x pipeline_depth per peer) must then divide
 * evenly among the capped requests, or the run fails.
 */
export function pipelineDescriptorError(peers: number, batchSize: number, pipelineDepth: number, cappedDepth: number): string | undefined {
  const descriptors = peers * batchSize * pipelineDepth;
  if (descriptors % cappedDepth === 0) return undefined;
  return `Error: descriptor count (${descriptors}) is not evenly divisible by pipeline depth (${cappedDepth})`;
}
