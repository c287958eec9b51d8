import { describe, expect, it } from 'vitest';
import { parseSize, sizeValue } from '../../runners/common/size.ts';

// kvbench's matrix cells (the same tokens, truncated) are checked in tests/xfer/matrix.test.ts.
describe('size tokens', () => {
  it('sizes of options and config values: decimals, any case, B, KiB; fractions of a byte refused there', () => {
    expect(parseSize('1.5M')).toBe(1572864);
    expect(parseSize('2g')).toBe(2 * 1024 ** 3);
    expect(parseSize('7B')).toBe(7);
    expect(parseSize('3KiB')).toBe(3072);
    expect(parseSize('1_000')).toBe(1000);
    expect(() => parseSize('0.3K')).toThrow(/not a whole number of bytes/);
  });

  it('the value of a token may be fractional; bad, negative and too large tokens are refused', () => {
    expect(sizeValue('0.3K')).toBeCloseTo(307.2, 9);
    expect(() => sizeValue('12Q')).toThrow(/^'12Q' is not a size/);
    expect(() => sizeValue('-5')).toThrow(/^'-5' is negative/);
    expect(() => sizeValue('999999999999G')).toThrow(/too large to be a safe integer/);
  });
});
