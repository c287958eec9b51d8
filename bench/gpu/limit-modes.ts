// The names of the peer-copy limits that engine-limits.ts writes and summarize-limits.ts reads.

/** Every GPU sends to every other at once: 'both ways at once' on 2 GPUs (its name since the first runs), 'all pairs at once' on more. */
export function exchangeMode(ranks: number): string {
  return ranks === 2 ? 'both ways at once' : 'all pairs at once';
}

/** The same exchange between two gates on the GPUs (backends/cuda-gate.ts): first GPU's start to last GPU's end. */
export function gatedExchangeMode(ranks: number): string {
  return `${exchangeMode(ranks)}, gated`;
}

export function oneWayMode(from: number, to: number): string {
  return `one way ${from}->${to}`;
}

export const ONE_WAY_PREFIX = 'one way ';
export const INSIDE_GPU_0 = 'inside GPU 0';
