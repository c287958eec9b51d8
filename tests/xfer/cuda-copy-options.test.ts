// --cuda-copy of the CT perftests: parsed with the other common options, handed to the cuda
// backend, refused with any other backend and with values it does not know.
import { describe, expect, it } from 'vitest';
import { ctBackendOptions, parseCtArgs } from '../../runners/xfer/benches/ct-options.ts';

const parse = (argv: string[]) => parseCtArgs(argv, 'usage').common;

describe('--cuda-copy', () => {
  it('is a common option of the CT perftests, given to the cuda backend', () => {
    expect(parse(['c.yaml']).cudaCopy).toBeUndefined();
    expect(parse(['c.yaml', '--cuda-copy', 'kernel']).cudaCopy).toBe('kernel');
    expect(ctBackendOptions(parse(['c.yaml', '--cuda-copy=copy-engine']), 'cuda')).toEqual({ cuda: { copy: 'copy-engine' } });
    expect(ctBackendOptions(parse(['c.yaml']), 'shm')).toEqual({});
  });

  it('refuses other values and other backends, in one sentence', () => {
    expect(() => parse(['c.yaml', '--cuda-copy', 'dma'])).toThrow("--cuda-copy must be one of auto, copy-engine, kernel, got 'dma'");
    expect(() => ctBackendOptions(parse(['c.yaml', '--cuda-copy', 'kernel']), 'ucx')).toThrow("--cuda-copy chooses how the cuda backend copies; this run's backend is ucx");
  });
});
