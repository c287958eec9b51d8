// Time for the engine: a monotonic nanosecond clock per process, and its offset to rank 0's clock
// (estimated through the store) so timestamps taken on different nodes compare.
import { XferError } from './errors.ts';

/** Monotonic time in nanoseconds (CLOCK_MONOTONIC: shared by all processes of one machine). */
export function monoNs(): number {
  return Number(process.hrtime.bigint());
}

export interface ClockSample {
  /** Local time when the request left. */
  sentNs: number;
  /** Rank 0's time when it answered. */
  remoteNs: number;
  /** Local time when the answer arrived. */
  receivedNs: number;
}

export interface ClockOffset {
  /** Add to a local monotonic time to get rank 0's monotonic time. */
  offsetNs: number;
  /** Round trip of the sample used; the offset is exact to within half of it. */
  rttNs: number;
}

/** NTP-style estimate: the sample with the smallest round trip, assuming a symmetric path. */
export function estimateOffset(samples: readonly ClockSample[]): ClockOffset {
  if (samples.length === 0) throw new XferError('estimateOffset: no samples');
  let best = samples[0];
  for (const s of samples) if (s.receivedNs - s.sentNs < best.receivedNs - best.sentNs) best = s;
  return {
    offsetNs: best.remoteNs - (best.sentNs + best.receivedNs) / 2,
    rttNs: best.receivedNs - best.sentNs,
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Calls `done` between turns of the event loop until it returns true (it may throw to abort):
 * every turn for the first `spinMs` (precise completion times), then every millisecond, so a long
 * wait costs no CPU. Resolves false when `timeoutMs` passes first.
 */
export async function pollUntil(done: () => boolean, timeoutMs: number, spinMs = 20): Promise<boolean> {
  const start = Date.now();
  for (;;) {
    if (done()) return true;
    const waited = Date.now() - start;
    if (waited > timeoutMs) return false;
    await (waited < spinMs ? yieldToEventLoop() : sleep(1));
  }
}

/** Lets pending I/O (store messages, timers) run before continuing a polling loop. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
