// libc memcpy in this process as a baseline (through koffi, as the engine calls it): GB/s (1e9
// B/s) of copying `size`-byte blocks between two MAP_POPULATE buffers.
import { monoNs } from '../../runners/xfer/clock.ts';
import { libc, MAP_ANONYMOUS, MAP_POPULATE, MAP_PRIVATE, PROT_READ, PROT_WRITE } from '../../runners/xfer/native/libc.ts';
import { median } from './stats.ts';

/**
 * Median over 3 timed loops of ~64 MiB each. `blocks` > 1: each loop walks that many distinct
 * blocks (the footprint of a batch or a pipeline), else it copies one block again and again
 * (which stays in cache when small).
 */
export function memcpyGBps(size: number, blocks = 1): number {
  const c = libc();
  const bytes = size * blocks;
  const map = (n: number) => c.mmap(n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1);
  const src = map(bytes);
  const dst = map(bytes);
  const n = Math.min(4000, Math.max(5, Math.round(2 ** 26 / size)));
  for (let b = 0; b < blocks; b++) c.memcpy(dst + BigInt(b * size), src + BigInt(b * size), size); // warm-up
  const loops = [0, 1, 2].map(() => {
    const t0 = monoNs();
    for (let i = 0; i < n; i++) {
      const at = BigInt((i % blocks) * size);
      c.memcpy(dst + at, src + at, size);
    }
    return (n * size) / (monoNs() - t0);
  });
  c.munmap(src, bytes);
  c.munmap(dst, bytes);
  return median(loops);
}
