// nixlbench's sliding window (--pipeline_depth): each lane (thread) keeps up to `depth` requests
// in flight, one per slot, and posts a slot again as soon as its request completes, so requests
// complete out of order where the backend lets them. A slot is a SweepLane (sweep-lane.ts): its
// transfer's lifecycle (--recreate_xfer, --reregister_mem) runs per slot, as nixlbench recycles
// each slot between its iterations.
import type { XferResult } from '../../backends/types.ts';

/** One pipeline slot of a lane: post() resolves once its request is posted; done, when it completes. */
export interface PipelineSlot {
  post(): Promise<{ done: Promise<XferResult> }>;
}

/**
 * `n` requests of one lane with up to `slots.length` in flight. Two-sided backends need every rank
 * to post in the same order, so there the slots post in turn and a slot waits for the oldest
 * request; a slot's rebuild is awaited before the next slot posts, so rebuilds keep that order too.
 */
export async function pipeline(slots: PipelineSlot[], n: number, twoSided: boolean, onResult: (r: XferResult) => void = () => {}): Promise<void> {
  let issued = 0;
  if (twoSided) {
    const window: Promise<XferResult>[] = [];
    for (; issued < n; issued++) {
      if (window.length === slots.length) onResult(await window.shift()!);
      const { done } = await slots[issued % slots.length].post();
      done.catch(() => {}); // awaited below in turn; a failure meanwhile is not an unhandled rejection
      window.push(done);
    }
    for (const r of window) onResult(await r);
    return;
  }
  const slot = async (s: PipelineSlot) => {
    while (issued < n) {
      issued++;
      onResult(await (await s.post()).done);
    }
  };
  await Promise.all(slots.map(slot));
}
