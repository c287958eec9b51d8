// The copy kernel's CPU side: its generated source, the tables one launch reads (checked by walking
// the chunks exactly as the kernel does: every byte of every copy covered once), the choice
// between copy engines and the kernel, option values, and the compiled-code cache.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alignCopies, LINE_ALIGN_FROM, decodeState, gridBlocks, interleaveChunks, phaseTable, STATE_BYTES, type CopySpan } from '../../runners/xfer/device-copy/copy-table.ts';
import { chooseCopyPath, KERNEL_WITH_SELF_BELOW, parseCudaCopyPath, SMALL_REQUEST_BYTES } from '../../runners/xfer/device-copy/copy-path.ts';
import {
  backendKernelShape,
  backendKernelSync,
  chunkBytes,
  COPY_FIELDS,
  defaultKernelShape,
  KERNEL_NAME,
  kernelSource,
  parseKernelShape,
  PHASE_FIELDS,
  STATE_FIELDS,
} from '../../runners/xfer/device-copy/kernel-source.ts';
import { archName, kernelCacheDir, kernelImage, kernelKey } from '../../runners/xfer/device-copy/kernel-cache.ts';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'device-copy-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const shape = { threads: 64, unroll: 2, streaming: true }; // 2 KiB chunks: small tables exercise many chunks
const word = (b: Buffer, at: number) => b.readBigUInt64LE(at);

/** The kernel's walk over chunks (block b takes chunks b, b + grid, ... through the chunk table), as bytes covered per copy. */
function walkChunks(table: ReturnType<typeof phaseTable>, blocks: number): Map<number, number[]> {
  const covered = new Map<number, number[]>(table.copies.map((_, i) => [i, new Array<number>(0)]));
  const chunk = chunkBytes(shape);
  for (let b = 0; b < blocks; b++) {
    for (let k = b; k < table.totalChunks; k += blocks) {
      const entry = word(table.bytes, table.offsets.chunks + k * 8);
      const c = Number(entry >> 32n);
      const offset = Number(entry & 0xffffffffn) * chunk;
      covered.get(c)!.push(offset, Math.min(chunk, table.copies[c].bytes - offset));
    }
  }
  return covered;
}

describe('kernel source', () => {
  it('declares the descriptor fields in the order the tables are written, and the shape', () => {
    const src = kernelSource({ threads: 256, unroll: 8, streaming: false });
    expect(src).toContain(`struct Phase {\n${PHASE_FIELDS.map((f) => `  u64 ${f};`).join('\n')}\n};`);
    expect(src).toContain(`struct Copy {\n${COPY_FIELDS.map((f) => `  u64 ${f};`).join('\n')}\n};`);
    expect(src).toContain(`struct State {\n${STATE_FIELDS.map((f) => `  u64 ${f};`).join('\n')}\n};`);
    expect(src).toMatch(/#define THREADS 256\n#define UNROLL 8\n/);
    expect(src).toContain(`extern "C" __global__ void __launch_bounds__(THREADS) ${KERNEL_NAME}(const Phase *phase, u64 seq)`);
    expect(src).toContain('__ldcg(');
    expect(src).not.toContain('__ldcs(');
    expect(kernelSource(defaultKernelShape)).toContain('__stcs(');
    expect(src).not.toMatch(/#include/); // NVRTC gets no include path
    expect(chunkBytes({ threads: 512, unroll: 4, streaming: true })).toBe(32768);
  });

  it('reads a shape written threads/unroll/streaming|cached (--kernel, XFER_CUDA_KERNEL), refusing others in one sentence', () => {
    expect(parseKernelShape('256/8/cached', '--kernel')).toEqual({ threads: 256, unroll: 8, streaming: false });
    expect(backendKernelShape({ XFER_CUDA_KERNEL: '1024/2/streaming' })).toEqual({ threads: 1024, unroll: 2, streaming: true });
    expect(backendKernelShape({})).toBe(defaultKernelShape);
    expect(() => backendKernelShape({ XFER_CUDA_KERNEL: '512x4' })).toThrow("XFER_CUDA_KERNEL: kernel shape '512x4' is not threads/unroll/streaming|cached, e.g. 512/4/streaming");
    expect(() => parseKernelShape('100/4/cached', '--kernel')).toThrow('--kernel: kernel threads 100: must be a multiple of 32 from 32 to 1024');
  });

  it('orders data before flags with release/acquire at system scope by default, or with full fences (XFER_CUDA_KERNEL_SYNC)', () => {
    const acqRel = kernelSource(defaultKernelShape, 'acq-rel');
    expect(acqRel).toContain('fence.acq_rel.sys;');
    expect(acqRel).toMatch(/store_relaxed_sys\(\(u64 \*\)signals\[i\], seq\)/);
    expect(acqRel).toMatch(/while \(load_acquire_sys\(waits \+ i\) < seq\)/);
    expect(acqRel.match(/__threadfence_system\(\)/g)).toBeNull();
    const fences = kernelSource(defaultKernelShape, 'fences');
    expect(fences.match(/__threadfence_system\(\);/g)).toHaveLength(4); // per block, before, after the flags, after the waits
    expect(kernelSource()).toBe(acqRel);
    expect(backendKernelSync({ XFER_CUDA_KERNEL_SYNC: 'fences' })).toBe('fences');
    expect(() => backendKernelSync({ XFER_CUDA_KERNEL_SYNC: 'sc' })).toThrow("XFER_CUDA_KERNEL_SYNC: 'sc' is not one of fences, acq-rel");
  });

  it('refuses shapes the kernel cannot run', () => {
    expect(() => kernelSource({ threads: 100, unroll: 4, streaming: true })).toThrow(/threads 100: must be a multiple of 32 from 32 to 1024/);
    expect(() => kernelSource({ threads: 2048, unroll: 4, streaming: true })).toThrow(/threads 2048/);
    expect(() => kernelSource({ threads: 256, unroll: 0, streaming: true })).toThrow(/unroll 0: must be 1 to 16/);
  });
});

describe('copy tables', () => {
  it('splits equally misaligned copies at the 16-byte boundary, keeps cross-misaligned ones whole, drops empty ones', () => {
    const c = (src: number, dst: number, bytes: number): CopySpan => ({ src: BigInt(src), dst: BigInt(dst), bytes });
    expect(alignCopies([c(0x1000, 0x2000, 100), c(0x1003, 0x2003, 100), c(0x1003, 0x2005, 40), c(0x1000, 0x2000, 0), c(0x100e, 0x200e, 1)])).toEqual({
      copies: [c(0x1000, 0x2000, 100), c(0x1003, 0x2003, 13), c(0x1010, 0x2010, 87), c(0x1003, 0x2005, 40), c(0x100e, 0x200e, 1)],
      unalignedBytes: 40,
    });
    // from 64 KiB on, the head runs to the destination's next 128-byte line (whole-line writes over NVLink)
    const big = LINE_ALIGN_FROM + 1000;
    expect(alignCopies([c(0x1010, 0x2030, big), c(0x1000, 0x2080, big)])).toEqual({
      copies: [c(0x1010, 0x2030, 80), c(0x1060, 0x2080, big - 80), c(0x1000, 0x2080, big)],
      unalignedBytes: 0,
    });
  });

  it('encodes the phase at its allocation: pointers, counts, the chunk table, signals, timeout, zeroed state', () => {
    const base = 0x7f0000000000n;
    const spec = {
      copies: [{ src: 0x1000n, dst: 0x9000n, bytes: 5000 }, { src: 0x3000n, dst: 0xa000n, bytes: 2048 }],
      signals: [0x5550n, 0x6660n],
      wait: { address: 0x7770n, count: 2 },
      timeoutNs: 1.5e9,
    };
    const t = phaseTable(spec, shape, base);
    const phase = Object.fromEntries(PHASE_FIELDS.map((f, i) => [f, word(t.bytes, i * 8)]));
    // phase 10 words, 2 copies of 3 words, 4 chunk entries, 2 signals, then the state
    expect(t.offsets).toEqual({ phase: 0, copies: 80, chunks: 128, signals: 160, state: 176 });
    expect(t.bytes.length).toBe(176 + STATE_BYTES);
    expect(phase).toEqual({
      copies: base + 80n,
      copyCount: 2n,
      chunks: base + 128n,
      totalChunks: 4n, // 5000 B = 3 chunks of 2 KiB, 2048 B = 1
      signals: base + 160n,
      signalCount: 2n,
      waits: 0x7770n,
      waitCount: 2n,
      state: base + 176n,
      timeoutNs: 1500000000n,
    });
    expect([0, 1, 2].map((k) => word(t.bytes, 80 + k * 8))).toEqual([0x1000n, 0x9000n, 5000n]);
    expect([0, 1, 2].map((k) => word(t.bytes, 104 + k * 8))).toEqual([0x3000n, 0xa000n, 2048n]);
    // entry = copy << 32 | chunk in copy; the 1-chunk copy sits mid-way through the 3-chunk one
    expect([0, 1, 2, 3].map((k) => word(t.bytes, 128 + k * 8))).toEqual([0n, 1n, (1n << 32n) | 0n, 2n]);
    expect([word(t.bytes, 160), word(t.bytes, 168)]).toEqual([0x5550n, 0x6660n]);
    expect(Object.values(decodeState(t.bytes.subarray(176)))).toEqual(STATE_FIELDS.map(() => 0n));
  });

  it('interleaves the copies\' chunks in proportion to their sizes, each copy in order', () => {
    const [copy, index] = interleaveChunks([4, 0, 2]);
    expect(Array.from(copy)).toEqual([0, 2, 0, 0, 2, 0]);
    expect(Array.from(index)).toEqual([0, 0, 1, 2, 1, 3]);
    // equal copies alternate: a grid's blocks of one round take both (a local copy and one over NVLink run at once)
    expect(Array.from(interleaveChunks([3, 3])[0])).toEqual([0, 1, 0, 1, 0, 1]);
    const [single, order] = interleaveChunks([0, 5]);
    expect([Array.from(single), Array.from(order)]).toEqual([[1, 1, 1, 1, 1], [0, 1, 2, 3, 4]]);
    // every chunk of a large uneven set exactly once, each copy's chunks in order
    const counts = [1000, 1, 37, 0, 512];
    const [c, j] = interleaveChunks(counts);
    const seen = counts.map(() => 0);
    c.forEach((copyIndex, k) => expect(j[k]).toBe(seen[copyIndex]++));
    expect(seen).toEqual(counts);
  });

  it('the chunks cover every byte of every copy exactly once, whatever the grid', () => {
    const sizes = [1, 15, 2048, 2049, 70000, 0, 4096, 333, 123457];
    const copies = sizes.map((bytes, i) => ({ src: BigInt(0x100000 * (i + 1)), dst: BigInt(0x9000000 + 0x100000 * i), bytes }));
    const t = phaseTable({ copies, signals: [], timeoutNs: 0 }, shape, 0n);
    expect(t.copies.map((c) => c.bytes)).toEqual(sizes.filter((s) => s > 0));
    for (const blocks of [1, 3, 7, t.totalChunks, t.totalChunks + 5]) {
      const covered = walkChunks(t, blocks);
      t.copies.forEach((c, i) => {
        const spans = covered.get(i)!;
        const pairs = Array.from({ length: spans.length / 2 }, (_, k) => [spans[2 * k], spans[2 * k + 1]]).sort((a, b) => a[0] - b[0]);
        let next = 0;
        for (const [offset, n] of pairs) {
          expect(offset, `copy ${i}, ${blocks} blocks`).toBe(next);
          expect(n).toBeGreaterThan(0);
          next += n;
        }
        expect(next, `copy ${i}, ${blocks} blocks`).toBe(c.bytes);
      });
    }
  });

  it('a launch has one block per chunk up to a full GPU, and at least one (it signals)', () => {
    expect(gridBlocks(0, 264)).toBe(1);
    expect(gridBlocks(10, 264)).toBe(10);
    expect(gridBlocks(100000, 264)).toBe(264);
  });
});

describe('copy path', () => {
  const req = (peer: number, length: number) => ({ peer, length });
  it('auto: the kernel for many peers or many small blocks, copy engines for large blocks to one peer', () => {
    expect(chooseCopyPath('auto', { requests: [req(1, 256 << 20)], unalignedBytes: 0 })).toEqual({ path: 'copy-engine', reason: 'large blocks to one peer' });
    expect(chooseCopyPath('auto', { requests: [req(1, 64 << 20), req(2, 64 << 20), req(3, 0)], unalignedBytes: 0 })).toEqual({ path: 'kernel', reason: '2 peers at once' });
    expect(chooseCopyPath('auto', { requests: Array.from({ length: 8 }, () => req(1, 4096)), unalignedBytes: 0 })).toEqual({ path: 'kernel', reason: `8 requests under ${SMALL_REQUEST_BYTES} bytes` });
    expect(chooseCopyPath('auto', { requests: Array.from({ length: 7 }, () => req(1, 4096)), unalignedBytes: 0 }).path).toBe('copy-engine');
    expect(chooseCopyPath('auto', { requests: [req(1, 0), req(2, 0)], unalignedBytes: 0 })).toEqual({ path: 'copy-engine', reason: 'nothing to move' });
    expect(chooseCopyPath('auto', { requests: [req(1, 8 << 20), req(2, 8 << 20)], unalignedBytes: 8 << 20 }).path).toBe('copy-engine');
  });

  it('auto by size for one remote peer plus the own chunk (a 2-GPU all-to-all with self): the kernel under 64 MiB, copy engines from it', () => {
    const a2a = (bytes: number) => chooseCopyPath('auto', { requests: [req(1, bytes), req(0, bytes)], self: 0, unalignedBytes: 0 });
    expect(a2a(1 << 20)).toEqual({ path: 'kernel', reason: `one peer and a local copy, requests under ${KERNEL_WITH_SELF_BELOW} bytes` });
    expect(a2a(16 << 20).path).toBe('kernel');
    expect(a2a(KERNEL_WITH_SELF_BELOW - 16).path).toBe('kernel');
    expect(a2a(KERNEL_WITH_SELF_BELOW)).toEqual({ path: 'copy-engine', reason: 'large blocks to one peer' });
    expect(a2a(256 << 20).path).toBe('copy-engine');
    // without the own chunk, one peer stays on the copy engines; the own rank is not counted as a remote peer
    expect(chooseCopyPath('auto', { requests: [req(1, 1 << 20)], self: 0, unalignedBytes: 0 }).path).toBe('copy-engine');
    expect(chooseCopyPath('auto', { requests: [req(1, 256 << 20), req(2, 256 << 20), req(0, 256 << 20)], self: 0, unalignedBytes: 0 })).toEqual({ path: 'kernel', reason: '2 peers at once' });
  });

  it('an explicit path is kept, whatever the plan', () => {
    expect(chooseCopyPath('kernel', { requests: [req(1, 1 << 30)], unalignedBytes: 1 << 30 }).path).toBe('kernel');
    expect(chooseCopyPath('copy-engine', { requests: [req(1, 1), req(2, 1)], unalignedBytes: 0 }).path).toBe('copy-engine');
  });

  it('parses the values of --cuda-copy / cuda_copy / XFER_CUDA_COPY, refusing others in one sentence', () => {
    expect(parseCudaCopyPath(' Kernel', 'x')).toBe('kernel');
    expect(parseCudaCopyPath('copy-engine', 'x')).toBe('copy-engine');
    expect(() => parseCudaCopyPath('sm', 'XFER_CUDA_COPY')).toThrow("XFER_CUDA_COPY: 'sm' is not one of auto, copy-engine, kernel");
  });
});

describe('kernel cache', () => {
  it('a folder from XFER_KERNEL_CACHE, off, or under the user cache', () => {
    expect(kernelCacheDir({ XFER_KERNEL_CACHE: '/tmp/k' })).toBe('/tmp/k');
    expect(kernelCacheDir({ XFER_KERNEL_CACHE: 'off' })).toBeUndefined();
    expect(kernelCacheDir({ XDG_CACHE_HOME: '/c' })).toBe('/c/disagg-bench/kernels');
    expect(archName([9, 0])).toBe('sm_90');
  });

  it('keys by source and architecture; a cached CUBIN is used without compiling', () => {
    const a = kernelKey(KERNEL_NAME, 'src a', 'sm_90');
    expect(a).toMatch(/^xfer_copy_phase-[0-9a-f]{20}-sm_90\.cubin$/);
    expect(kernelKey(KERNEL_NAME, 'src a', 'sm_90')).toBe(a);
    expect(kernelKey(KERNEL_NAME, 'src b', 'sm_90')).not.toBe(a);
    expect(kernelKey(KERNEL_NAME, 'src a', 'sm_100')).not.toBe(a);
    // A file another rank wrote: found by its key, no compiler involved (none is needed here).
    const source = `// cached ${Date.now()}`;
    fs.writeFileSync(path.join(scratch, kernelKey(KERNEL_NAME, source, 'sm_90')), 'CUBIN');
    const first = kernelImage(KERNEL_NAME, source, 'sm_90', scratch);
    expect({ origin: first.origin, image: first.image.toString() }).toEqual({ origin: 'cache folder', image: 'CUBIN' });
    expect(kernelImage(KERNEL_NAME, source, 'sm_90', scratch).origin).toBe('memory');
  });
});
