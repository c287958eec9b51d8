// The ucx backend's choices: per-endpoint error handling, who allocates host memory, how flags and
// the environment carry them, and the refusals that keep a choice from being ignored.
import { describe, expect, it } from 'vitest';
import { endpointErrorMode, refuseUcxFlags, resolveUcxChoices } from '../../runners/xfer/backends/ucx-options.ts';
import { takeUcxFlags } from '../../runners/xfer/benches/common/ucx-flags.ts';

describe('ucx choices', () => {
  it("'auto' gives a peer on this node no error handling (shared memory / CMA) and one elsewhere peer handling (network)", () => {
    expect(endpointErrorMode('auto', true)).toBe('none');
    expect(endpointErrorMode('auto', false)).toBe('peer');
    expect(endpointErrorMode('peer', true)).toBe('peer');
    expect(endpointErrorMode('none', false)).toBe('none');
  });

  it('defaults to auto, UCX-allocated memory, the memory handle with each put/get and every request polled; the environment, then the options, decide; a bad value is named', () => {
    expect(resolveUcxChoices({}, {})).toEqual({ errorHandling: 'auto', memory: 'ucx', post: 'memh', completion: 'each' });
    expect(resolveUcxChoices({}, { XFER_UCX_ERROR_HANDLING: 'PEER', XFER_UCX_MEMORY: 'registered', XFER_UCX_POST: 'nixl', XFER_UCX_COMPLETION: 'flush' })).toEqual({
      errorHandling: 'peer',
      memory: 'registered',
      post: 'nixl',
      completion: 'flush',
    });
    expect(resolveUcxChoices({ post: 'memh' }, { XFER_UCX_POST: 'nixl' }).post).toBe('memh');
    expect(() => resolveUcxChoices({}, { XFER_UCX_COMPLETION: 'later' })).toThrow("XFER_UCX_COMPLETION (environment) must be one of each, flush, got 'later'");
    expect(resolveUcxChoices({ errorHandling: 'none' }, { XFER_UCX_ERROR_HANDLING: 'peer' }).errorHandling).toBe('none');
    expect(() => resolveUcxChoices({}, { XFER_UCX_ERROR_HANDLING: 'strict' })).toThrow("XFER_UCX_ERROR_HANDLING (environment) must be one of auto, peer, none, got 'strict'");
  });

  it('flags of every bench command: taken out of argv, both spellings, into the environment of the ranks', () => {
    const env: NodeJS.ProcessEnv = {};
    const rest = takeUcxFlags(['--backend', 'ucx', '--ucx-error-handling', 'peer', '--ucx_memory=registered', '--ucx-post', 'nixl', '--ucx_completion', 'flush', '--num_iter', '4'], env);
    expect(rest).toEqual(['--backend', 'ucx', '--num_iter', '4']);
    expect(env).toEqual({
      XFER_UCX_ERROR_HANDLING: 'peer',
      XFER_UCX_MEMORY: 'registered',
      XFER_UCX_POST: 'nixl',
      XFER_UCX_COMPLETION: 'flush',
      XFER_UCX_FLAGS: '--ucx-error-handling peer --ucx-memory registered --ucx-post nixl --ucx-completion flush',
    });
    expect(() => takeUcxFlags(['--ucx-post', 'fast'], {})).toThrow("--ucx-post must be one of memh, plain, nixl, got 'fast'");
    expect(() => takeUcxFlags(['--ucx-error-handling', 'maybe'], {})).toThrow("--ucx-error-handling must be one of auto, peer, none, got 'maybe'");
    expect(() => takeUcxFlags(['--ucx-memory'], {})).toThrow('--ucx-memory needs a value: one of ucx, registered');
    expect(takeUcxFlags(['--iters', '3'], env)).toEqual(['--iters', '3']);
  });

  it('an engine on another backend refuses ucx flags instead of ignoring them', () => {
    const env = { XFER_UCX_FLAGS: '--ucx-error-handling none' };
    expect(() => refuseUcxFlags('shm', env)).toThrow('--ucx-error-handling none: applies to the ucx backend only, and this run uses shm');
    expect(() => refuseUcxFlags('ucx', env)).not.toThrow();
    expect(() => refuseUcxFlags('shm', {})).not.toThrow();
  });
});
