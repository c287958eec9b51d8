// The CUDA C source of the engine's one kernel, `xfer_copy_phase`, compiled at run time by NVRTC.
// One launch moves a whole phase: every copy of a plan (to and from many peers, through pointers
// that CUDA IPC mapped), then, once every block is done, writes a sequence number into each signal
// word (peers' flag words) and waits until each of its own wait words holds at least that number.
//
// Work is cut into chunks of threads x 16 bytes x unroll. A table gives, for each chunk number,
// its copy and its place in that copy (copy-table.ts writes it, interleaving the copies' chunks so
// that a phase's copies progress together: a device-local copy and a copy over NVLink run at once
// instead of one after the other). Block b takes chunks b, b + grid, ...; it reads the next chunk's
// table entry and descriptor before moving the current one, so those reads cost no waiting. A chunk
// whose source and destination are 16-byte aligned moves as 16-byte vectors, every thread loading
// all its vectors before storing any; others move byte by byte (copy-table.ts splits copies so
// that this stays rare).
//
// Every launch ends with an arrival count: the last block to arrive writes the signals (each block
// having ordered its writes at system scope first, so peers on other GPUs see the data before the
// flag: KernelSync below), waits, and records the launch's timestamps from the GPU's global timer
// (ns) in the phase's state: block 0's start, the data done (last arrival), the end (waits over),
// with running sums, so a host can tell where a phase's time goes without timing it from outside.
// Only that block waits, so a phase needs no co-resident grid. A wait that outlasts `timeoutNs`
// sets status = 1 (it stays set) and ends, so no kernel spins forever.

/** The 64-bit fields of the phase descriptor, in memory order (copy-table.ts writes them). */
export const PHASE_FIELDS = ['copies', 'copyCount', 'chunks', 'totalChunks', 'signals', 'signalCount', 'waits', 'waitCount', 'state', 'timeoutNs'] as const;
/** The 64-bit fields of one copy descriptor, in memory order. */
export const COPY_FIELDS = ['src', 'dst', 'bytes'] as const;
/**
 * The 64-bit words the kernel keeps per phase: its arrival counter (zero between launches), the
 * status, the last launch's global-timer stamps, and the launches and sums over all of them.
 */
export const STATE_FIELDS = ['arrived', 'status', 'startNs', 'dataNs', 'endNs', 'launches', 'sumDataNs', 'sumWaitNs'] as const;

export const KERNEL_NAME = 'xfer_copy_phase';
/** Status word values. */
export const STATUS_OK = 0n;
export const STATUS_WAIT_TIMEOUT = 1n;

export interface KernelShape {
  /** Threads per block (a multiple of 32, at most 1024). */
  threads: number;
  /** 16-byte vectors each thread moves per chunk. */
  unroll: number;
  /** Streaming cache hints (evict-first loads and stores): data larger than L2 is not kept. */
  streaming: boolean;
}

export const defaultKernelShape: KernelShape = { threads: 512, unroll: 4, streaming: true };

/** Bytes of one chunk: what one block moves in one step. */
export const chunkBytes = (shape: KernelShape): number => shape.threads * 16 * shape.unroll;

export function checkKernelShape(shape: KernelShape): void {
  if (!Number.isInteger(shape.threads) || shape.threads < 32 || shape.threads > 1024 || shape.threads % 32) {
    throw new Error(`kernel threads ${shape.threads}: must be a multiple of 32 from 32 to 1024`);
  }
  if (!Number.isInteger(shape.unroll) || shape.unroll < 1 || shape.unroll > 16) throw new Error(`kernel unroll ${shape.unroll}: must be 1 to 16`);
}

/**
 * A shape written threads/unroll/streaming|cached (e.g. 512/4/streaming): the benchmarks' --kernel
 * and XFER_CUDA_KERNEL (the cuda backend's kernel, for tuning; default the one above).
 */
export function parseKernelShape(raw: string, where: string): KernelShape {
  const m = /^(\d+)\/(\d+)\/(streaming|cached)$/.exec(raw.trim());
  if (!m) throw new Error(`${where}: kernel shape '${raw}' is not threads/unroll/streaming|cached, e.g. 512/4/streaming`);
  const shape = { threads: Number(m[1]), unroll: Number(m[2]), streaming: m[3] === 'streaming' };
  try {
    checkKernelShape(shape);
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`);
  }
  return shape;
}

/**
 * How a signalled phase orders its data before its flags and reads the peers' flags: 'fences'
 * (membar.sys, __threadfence_system, around every step) or 'acq-rel' (a fence.acq_rel.sys per
 * block before it arrives and before the flags, flags stored relaxed at system scope and read with
 * ld.acquire.sys: the PTX memory model's release/acquire pattern, no sequentially consistent fence).
 * On 2 H100s each fence.sc cost ~1.5 us, and an EP phase waited 9.4 us for flags both ranks had
 * ready with 'fences' against 3.8 us with 'acq-rel' (the limits run, run C).
 */
export type KernelSync = 'fences' | 'acq-rel';
export const kernelSyncs: readonly KernelSync[] = ['fences', 'acq-rel'];
export const defaultKernelSync: KernelSync = 'acq-rel';

/** XFER_CUDA_KERNEL_SYNC (tuning), else the default. */
export function backendKernelSync(env: NodeJS.ProcessEnv = process.env): KernelSync {
  const raw = env.XFER_CUDA_KERNEL_SYNC?.trim();
  if (!raw) return defaultKernelSync;
  const found = kernelSyncs.find((k) => k === raw);
  if (!found) throw new Error(`XFER_CUDA_KERNEL_SYNC: '${raw}' is not one of ${kernelSyncs.join(', ')}`);
  return found;
}

/** The kernel shape of the cuda backend: XFER_CUDA_KERNEL when set, else the default. */
export function backendKernelShape(env: NodeJS.ProcessEnv = process.env): KernelShape {
  const raw = env.XFER_CUDA_KERNEL?.trim();
  return raw ? parseKernelShape(raw, 'XFER_CUDA_KERNEL') : defaultKernelShape;
}

/** The translation unit for `shape`: no headers (NVRTC needs no include path), extern "C" names. */
export function kernelSource(shape: KernelShape = defaultKernelShape, sync: KernelSync = defaultKernelSync): string {
  checkKernelShape(shape);
  const acqRel = sync === 'acq-rel';
  // Before a block arrives / before the flags; the flag store; the flag read; after the flags.
  const fence = acqRel ? 'fence_acq_rel_sys()' : '__threadfence_system()';
  const storeFlag = acqRel ? 'store_relaxed_sys((u64 *)signals[i], seq)' : '*(volatile u64 *)signals[i] = seq';
  const readFlag = acqRel ? 'load_acquire_sys(waits + i)' : '((const volatile u64 *)waits)[i]';
  const struct = (name: string, fields: readonly string[]) => `struct ${name} {\n${fields.map((f) => `  u64 ${f};`).join('\n')}\n};`;
  const load = shape.streaming ? '__ldcs' : '__ldcg';
  const store = shape.streaming ? '__stcs' : '__stcg';
  return `// generated by runners/xfer/device-copy/kernel-source.ts
typedef unsigned long long u64;
#define THREADS ${shape.threads}
#define UNROLL ${shape.unroll}
#define CHUNK ((u64)THREADS * 16ull * UNROLL)
${struct('Phase', PHASE_FIELDS)}
${struct('Copy', COPY_FIELDS)}
${struct('State', STATE_FIELDS)}

__device__ __forceinline__ u64 global_timer_ns() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void fence_acq_rel_sys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
__device__ __forceinline__ void store_relaxed_sys(u64 *p, u64 v) { asm volatile("st.relaxed.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ u64 load_acquire_sys(const u64 *p) {
  u64 v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// Moves chunk \`index\` of a copy (bytes index * CHUNK onwards).
__device__ __forceinline__ void copy_chunk(u64 from, u64 to, u64 bytes, u64 index) {
  const u64 offset = index * CHUNK;
  const u64 rest = bytes - offset;
  const u64 n = rest < CHUNK ? rest : CHUNK;
  const char *src = (const char *)from + offset;
  char *dst = (char *)to + offset;
  if ((((u64)src | (u64)dst) & 15ull) == 0) {
    const uint4 *s = (const uint4 *)src;
    uint4 *d = (uint4 *)dst;
    if (n == CHUNK) {
      uint4 v[UNROLL];
#pragma unroll
      for (int i = 0; i < UNROLL; i++) v[i] = ${load}(s + i * THREADS + threadIdx.x);
#pragma unroll
      for (int i = 0; i < UNROLL; i++) ${store}(d + i * THREADS + threadIdx.x, v[i]);
      return;
    }
    const u64 vectors = n / 16;
    for (u64 i = threadIdx.x; i < vectors; i += THREADS) ${store}(d + i, ${load}(s + i));
    for (u64 i = vectors * 16 + threadIdx.x; i < n; i += THREADS) dst[i] = src[i];
    return;
  }
  for (u64 i = threadIdx.x; i < n; i += THREADS) dst[i] = src[i];
}

extern "C" __global__ void __launch_bounds__(THREADS) ${KERNEL_NAME}(const Phase *phase, u64 seq) {
  volatile State *state = (volatile State *)phase->state;
  // Block 0 is scheduled first; one store, where an atomic per block would queue on one word.
  if (blockIdx.x == 0 && threadIdx.x == 0) state->startNs = global_timer_ns();
  const Copy *copies = (const Copy *)phase->copies;
  const u64 *chunks = (const u64 *)phase->chunks;
  const u64 total = phase->totalChunks;
  u64 k = blockIdx.x;
  if (k < total) {
    u64 entry = chunks[k];
    const Copy *c = copies + (entry >> 32);
    u64 src = c->src, dst = c->dst, bytes = c->bytes;
    for (;;) {
      // The next chunk's entry and descriptor are read before this chunk moves.
      const u64 next = k + gridDim.x;
      u64 nextEntry = entry, nextSrc = src, nextDst = dst, nextBytes = bytes;
      if (next < total) {
        nextEntry = chunks[next];
        const Copy *n = copies + (nextEntry >> 32);
        nextSrc = n->src;
        nextDst = n->dst;
        nextBytes = n->bytes;
      }
      copy_chunk(src, dst, bytes, entry & 0xffffffffull);
      if (next >= total) break;
      k = next;
      entry = nextEntry;
      src = nextSrc;
      dst = nextDst;
      bytes = nextBytes;
    }
  }

  const bool signalled = phase->signalCount != 0 || phase->waitCount != 0;
  __shared__ int last;
  __syncthreads();
  if (threadIdx.x == 0) {
    // After the barrier, one fence covers the block's writes (as cooperative groups' grid sync
    // does); system scope only where peers are told through signals.
    if (signalled) ${fence}; else __threadfence();
    last = atomicAdd((u64 *)&state->arrived, 1ull) == (u64)gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  const u64 dataNs = global_timer_ns();
  if (signalled) {
    ${fence};
    const u64 *signals = (const u64 *)phase->signals;
    for (u64 i = threadIdx.x; i < phase->signalCount; i += THREADS) ${storeFlag};${acqRel ? '' : '\n    __threadfence_system(); // the flags leave now'}
    const u64 *waits = (const u64 *)phase->waits;
    for (u64 i = threadIdx.x; i < phase->waitCount; i += THREADS) {
      while (${readFlag} < seq) {
        if (global_timer_ns() - dataNs > phase->timeoutNs) {
          state->status = ${STATUS_WAIT_TIMEOUT}ull;
          break;
        }
      }
    }${acqRel ? '' : '\n    __threadfence_system();'}
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const u64 endNs = global_timer_ns();
    const u64 startNs = state->startNs;
    state->dataNs = dataNs;
    state->endNs = endNs;
    state->launches = state->launches + 1;
    state->sumDataNs = state->sumDataNs + (dataNs - startNs);
    state->sumWaitNs = state->sumWaitNs + (endNs - dataNs);
    // Every block has arrived: the counter is free for the next launch.
    state->arrived = 0;
  }
}
`;
}
