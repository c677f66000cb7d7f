/**
 * A small seeded pseudo-random generator (mulberry32). Every random choice in this package goes
 * through one of these so the same seed gives the same run.
 */
export class SeededRng {
  private state: number;

  /** @param seed any integer; the same seed always produces the same stream. */
  constructor(seed: number) {
    if (!Number.isFinite(seed)) {
      throw new TypeError(`SeededRng: seed must be a finite number, got ${seed}`);
    }
    this.state = Math.floor(seed) >>> 0;
  }

  /** Next float, uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform float in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  /** Standard normal sample (Box-Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** A fresh 32-bit integer, handy for deriving child seeds. */
  nextUint32(): number {
    return Math.floor(this.next() * 4294967296) >>> 0;
  }

  /** Fill an array with uniform values in [-bound, bound). */
  fillUniform(out: Float32Array, bound: number): Float32Array {
    for (let i = 0; i < out.length; i++) out[i] = (this.next() * 2 - 1) * bound;
    return out;
  }

  /** Fill an array with normal values of the given standard deviation. */
  fillNormal(out: Float32Array, std: number): Float32Array {
    for (let i = 0; i < out.length; i++) out[i] = this.normal() * std;
    return out;
  }
}
