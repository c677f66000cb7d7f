/** The full state of a {@link SeededRng}: four unsigned 32-bit words (plain data, JSON-safe). */
export type RngState = [number, number, number, number];

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/**
 * A small seeded pseudo-random generator (xoshiro128**), used for every random choice of the
 * trainer: action sampling, token generation and minibatch shuffling. Its state is four integers,
 * so a checkpoint can store and restore it exactly.
 */
export class SeededRng {
  private s: RngState;

  /** Seeds the generator from any integer (expanded with splitmix32). */
  constructor(seed: number) {
    if (!Number.isFinite(seed)) {
      throw new TypeError(`SeededRng(seed): expected a finite integer seed, got ${seed}.`);
    }
    const next = splitmix32(Math.trunc(seed));
    this.s = [next(), next(), next(), next()];
    if (this.s.every((w) => w === 0)) this.s[0] = 1;
  }

  /** Next raw 32-bit unsigned integer. */
  nextUint32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] = (s[2] ^ s[0]) >>> 0;
    s[3] = (s[3] ^ s[1]) >>> 0;
    s[1] = (s[1] ^ s[2]) >>> 0;
    s[0] = (s[0] ^ s[3]) >>> 0;
    s[2] = (s[2] ^ t) >>> 0;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** Uniform float in [0, 1). */
  float(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n) for a positive integer n. */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** A fresh uniformly random permutation of 0..n-1 (Fisher–Yates). */
  permutation(n: number): Int32Array {
    const p = new Int32Array(n);
    for (let i = 0; i < n; i++) p[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = p[i]!;
      p[i] = p[j]!;
      p[j] = tmp;
    }
    return p;
  }

  /** Index drawn from unnormalised probabilities `weights` (non-negative, positive sum). */
  categorical(weights: ArrayLike<number>): number {
    let total = 0;
    for (let i = 0; i < weights.length; i++) total += weights[i]!;
    let u = this.float() * total;
    for (let i = 0; i < weights.length; i++) {
      u -= weights[i]!;
      if (u < 0) return i;
    }
    return weights.length - 1;
  }

  /** A copy of the current state. */
  getState(): RngState {
    return [this.s[0], this.s[1], this.s[2], this.s[3]];
  }

  /** Restores a state returned by {@link SeededRng.getState}. */
  setState(state: readonly number[]): void {
    if (state.length !== 4 || state.some((w) => !Number.isInteger(w) || w < 0 || w > 0xffffffff)) {
      throw new TypeError('SeededRng.setState(state): expected four unsigned 32-bit integers.');
    }
    this.s = [state[0]! >>> 0, state[1]! >>> 0, state[2]! >>> 0, state[3]! >>> 0];
  }
}
