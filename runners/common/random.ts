// Seeded random numbers, so a generated workload (matrices, routing) can be reproduced exactly.

/** mulberry32: small, fast, good enough for workload generation (not for cryptography). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One normal sample (Box-Muller). */
export function normalSample(random: () => number, mean: number, scale: number): number {
  const u = 1 - random();
  const v = random();
  return mean + scale * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
