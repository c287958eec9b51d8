// Where a benchmark's timed regions begin and end, and where it fills, poisons or checks buffers
// for verification: recorded when XFER_TRACE_REGIONS names a file (one JSON line per event, every
// rank of the run appending to the same file), a no-op otherwise. Verification must never run
// inside a timed region (a CT perftest that verified inside its timed loop reported a
// latency 28x too high); tests read this record and check, from what the run did, that no rank's
// verification overlaps any rank's timed region. Times are CLOCK_MONOTONIC, which every process
// of one machine shares, so ranks on one host compare.
import { appendFileSync } from 'node:fs';
import { monoNs } from '../../clock.ts';

export const REGION_TRACE_ENV = 'XFER_TRACE_REGIONS';

export type RegionEvent = 'timed-begin' | 'timed-end' | 'verify-begin' | 'verify-end';

export interface RegionRecord {
  rank: number;
  pid: number;
  event: RegionEvent;
  /** What is timed or verified (e.g. 'ct-perftest timed iterations', 'ct-perftest check'). */
  name: string;
  ns: number;
}

function record(rank: number, event: RegionEvent, name: string): void {
  const file = process.env[REGION_TRACE_ENV];
  if (!file) return;
  const line: RegionRecord = { rank, pid: process.pid, event, name, ns: monoNs() };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/** Marks the start of a timed region; call the returned function where it ends. */
export function beginTimed(rank: number, name: string): () => void {
  record(rank, 'timed-begin', name);
  return () => record(rank, 'timed-end', name);
}

/** Runs `work` (filling, poisoning or checking buffers) recorded as verification. */
export function verifying<T>(rank: number, name: string, work: () => T): T {
  record(rank, 'verify-begin', name);
  try {
    return work();
  } finally {
    record(rank, 'verify-end', name);
  }
}

/** verifying() for work that awaits. */
export async function verifyingAsync<T>(rank: number, name: string, work: () => Promise<T>): Promise<T> {
  record(rank, 'verify-begin', name);
  try {
    return await work();
  } finally {
    record(rank, 'verify-end', name);
  }
}
