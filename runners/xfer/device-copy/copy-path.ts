// Which engine moves a plan's bytes in the cuda backend: the copy engines (cudaMemcpyAsync, posted
// by the host per request) or the copy kernel (the GPU's own threads, one launch for the plan).
// Copy engines reach full speed on one large block to one peer; with many peers at once they
// contend (4 H200s: 211 GB/s sent per GPU against 390 GB/s to one peer), and each small request
// costs a host post. So `auto` gives the kernel many peers or many small blocks, and, with one
// remote peer plus the rank's own chunk (a 2-GPU all-to-all with self), requests under 64 MiB:
// on 2 H100s (3-5 runs) the kernel moved such a plan faster at 1 MiB per peer and as
// fast at 16 MiB, the copy engines 1-8 % faster at 64 and 256 MiB. The table of the choice by size
// is in runners/xfer/README.md.
//   flag --cuda-copy, config key benchmark.cuda_copy, environment XFER_CUDA_COPY

export const cudaCopyPaths = ['auto', 'copy-engine', 'kernel'] as const;
export type CudaCopyPath = (typeof cudaCopyPaths)[number];

/** `auto`: the kernel from this many distinct remote peers on. */
export const KERNEL_MIN_PEERS = 2;
/** `auto`: one remote peer and the rank itself: the kernel while the largest request is under this. */
export const KERNEL_WITH_SELF_BELOW = 64 << 20;
/** `auto`: the kernel from this many small requests on... */
export const KERNEL_MIN_SMALL_REQUESTS = 8;
/** ...a request being small below this size. */
export const SMALL_REQUEST_BYTES = 1 << 20;
/** `auto` keeps the copy engines when more bytes than this would move byte by byte in the kernel. */
export const KERNEL_MAX_UNALIGNED_BYTES = 1 << 20;

export interface PlanShape {
  /** Peer rank and length of each request. */
  requests: readonly { peer: number; length: number }[];
  /** The planning rank: its requests to itself are device-local copies, not a remote peer. */
  self?: number;
  /** Bytes whose source and destination are misaligned to each other (copy-table.ts). */
  unalignedBytes: number;
}

/** The value of --cuda-copy / cuda_copy / XFER_CUDA_COPY, or one sentence saying what is allowed. */
export function parseCudaCopyPath(raw: string, where: string): CudaCopyPath {
  const found = cudaCopyPaths.find((p) => p === raw.trim().toLowerCase());
  if (!found) throw new Error(`${where}: '${raw}' is not one of ${cudaCopyPaths.join(', ')}`);
  return found;
}

/** What moves the plan, and why (the reason is logged with the choice). */
export function chooseCopyPath(requested: CudaCopyPath, plan: PlanShape): { path: 'copy-engine' | 'kernel'; reason: string } {
  if (requested !== 'auto') return { path: requested, reason: 'asked for' };
  const moving = plan.requests.filter((r) => r.length > 0);
  const remote = new Set(moving.filter((r) => r.peer !== plan.self).map((r) => r.peer)).size;
  const withSelf = moving.some((r) => r.peer === plan.self);
  const largest = moving.reduce((a, r) => Math.max(a, r.length), 0);
  const small = moving.filter((r) => r.length < SMALL_REQUEST_BYTES).length;
  const selfAndOne = remote === 1 && withSelf && largest < KERNEL_WITH_SELF_BELOW;
  const kernelFits = remote >= KERNEL_MIN_PEERS || small >= KERNEL_MIN_SMALL_REQUESTS || selfAndOne;
  if (kernelFits && plan.unalignedBytes > KERNEL_MAX_UNALIGNED_BYTES) {
    return { path: 'copy-engine', reason: `${plan.unalignedBytes} bytes are misaligned between source and destination (the kernel would move them byte by byte)` };
  }
  if (remote >= KERNEL_MIN_PEERS) return { path: 'kernel', reason: `${remote} peers at once` };
  if (small >= KERNEL_MIN_SMALL_REQUESTS) return { path: 'kernel', reason: `${small} requests under ${SMALL_REQUEST_BYTES} bytes` };
  if (selfAndOne) return { path: 'kernel', reason: `one peer and a local copy, requests under ${KERNEL_WITH_SELF_BELOW} bytes` };
  return { path: 'copy-engine', reason: moving.length === 0 ? 'nothing to move' : 'large blocks to one peer' };
}
