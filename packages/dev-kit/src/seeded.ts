/**
 * mulberry32: a small seeded generator of floats uniform in [0, 1), for test inputs and
 * benchmarks. The same seed (read as an unsigned 32-bit integer) always gives the same stream.
 */
export function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
