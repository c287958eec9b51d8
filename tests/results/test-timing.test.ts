import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../framework/results/test-timing.ts';

describe('formatDuration', () => {
  it('reads as seconds, minutes or hours', () => {
    expect(formatDuration(4.24)).toBe('4.2s');
    expect(formatDuration(65)).toBe('1m 05s');
    expect(formatDuration(3725.4)).toBe('1h 02m 05s');
    expect(formatDuration(7200)).toBe('2h 00m 00s');
  });
});
