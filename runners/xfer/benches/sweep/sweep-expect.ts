// The block-size sweep's acceptance rule ("within 10% of 46.48 GB/s" in its worked example), per block size: every row of that block
// size must lie within the tolerance of the expected bandwidth, above or below. All misses are
// reported together, a block size with no row included.
import type { ExpectedBandwidth } from './sweep-options.ts';

export interface MeasuredBandwidth {
  blockSize: number;
  batchSize: number;
  gbps: number;
  /** e.g. 'WRITE': named in messages when a sweep ran several ops. */
  op?: string;
}

/** One message per miss; empty when every expectation holds. */
export function checkExpectedBandwidth(expected: readonly ExpectedBandwidth[], measured: readonly MeasuredBandwidth[], tolerance: number): string[] {
  const misses: string[] = [];
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  for (const e of expected) {
    const rows = measured.filter((m) => m.blockSize === e.blockSize);
    if (rows.length === 0) {
      misses.push(`block ${e.blockSize} B: no measurement (expected ${e.gbps} GB/s); is it inside the swept block sizes?`);
      continue;
    }
    for (const m of rows) {
      const deviation = (m.gbps - e.gbps) / e.gbps;
      if (Math.abs(deviation) <= tolerance) continue;
      misses.push(
        `${m.op ? `${m.op} ` : ''}block ${m.blockSize} B batch ${m.batchSize}: ${m.gbps.toFixed(6)} GB/s is ${pct(Math.abs(deviation))} ` +
          `${deviation < 0 ? 'below' : 'above'} the expected ${e.gbps} GB/s (tolerance ${pct(tolerance)})`,
      );
    }
  }
  return misses;
}
