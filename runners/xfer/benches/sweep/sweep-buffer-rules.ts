// nixlbench's checks of the buffer against the block size, threads and devices, in its order and
// words (xferBenchConfig::loadParams, benchmark/nixlbench/src/utils/utils.cpp); nixlbench stops at
// the first. C++ integer division as nixlbench computes it; the device counts are its flags (default
// 1), in SG mode too, as nixlbench uses them. The message for the target repeats nixlbench's
// "num_initiator_dev" (its typo) so a user finds it. Pipeline depth and the per-rank areas are not
// limited by total_buffer_size here either: nixlbench wraps its blocks around the buffer, the
// sweep gives every block its own bytes (so every block can be verified) and refuses only what
// does not fit the node's memory (common/memory-limit.ts).

export interface BufferRuleInputs {
  totalBufferSize: number;
  maxBlockSize: number;
  maxBatchSize: number;
  numThreads: number;
  /** nixlbench's flags; undefined = its default, 1. */
  numInitiatorDev?: number;
  numTargetDev?: number;
}

/** nixlbench's refusal of this configuration, or undefined when it runs. */
export function nixlbenchBufferError(o: BufferRuleInputs): string | undefined {
  const initiatorDev = o.numInitiatorDev ?? 1;
  const targetDev = o.numTargetDev ?? 1;
  const blockBatch = o.maxBlockSize * o.maxBatchSize;
  const per = (n: number) => Math.floor(o.totalBufferSize / n);
  if (blockBatch > per(initiatorDev)) {
    return 'Incorrect buffer size configuration for Initiator(max_block_size * max_batch_size) is > (total_buffer_size / num_initiator_dev)';
  }
  if (blockBatch > per(targetDev)) {
    return 'Incorrect buffer size configuration for Target(max_block_size * max_batch_size) is > (total_buffer_size / num_initiator_dev)';
  }
  if (blockBatch > per(o.numThreads)) {
    return `Incorrect buffer size configuration (max_block_size * max_batch_size) (${blockBatch}) is > (total_buffer_size / num_threads) (${per(o.numThreads)})`;
  }
  for (const [devices, flag] of [[initiatorDev, 'num_initiator_dev'], [targetDev, 'num_target_dev']] as const) {
    const partition = devices * o.numThreads;
    if (o.totalBufferSize % partition) {
      return `Total_buffer_size must be divisible by the product of num_threads and ${flag}, next such value is ${o.totalBufferSize + partition - (o.totalBufferSize % partition)}`;
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
