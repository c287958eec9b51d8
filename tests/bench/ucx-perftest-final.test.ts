// ucx_perftest's `Final:` line, read by the benchmarks that compare the engine with it: the whole
// run's columns are kept; the last interval's "avg" columns may be `inf` (an empty interval, seen on
// a loaded host) without losing the run.
import { describe, expect, it } from 'vitest';
import { finalFigures } from '../../bench/lib/ucx-perftest.ts';

describe('ucx_perftest Final line', () => {
  it('keeps iterations, the overall latency and the overall bandwidth (MB/s of 2^20 bytes)', () => {
    expect(finalFigures('Final:                    24 131538.556 138102.000 139106.631     463.44     460.08           7           7')).toEqual({
      iters: 24,
      overallLatUs: 139106.631,
      gbps: (460.08 * 2 ** 20) / 1e9,
    });
  });

  it('reads a line whose last interval was empty (avg latency inf, avg bandwidth 0)', () => {
    expect(finalFigures('Final:                    24 131538.556       inf 139106.631        0.00     460.08           0           7')?.overallLatUs).toBe(139106.631);
  });

  it('refuses a line without the whole run\'s figures', () => {
    expect(finalFigures('Final:                    24 131538.556 1.0 inf 0.00 460.08 0 7')).toBeUndefined();
    expect(finalFigures('Final: 24 1 2 3')).toBeUndefined();
    expect(finalFigures('Iterations: 24')).toBeUndefined();
  });
});
