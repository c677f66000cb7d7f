import { EnvArgumentError } from './errors.js';

/** The full state of an {@link Rng}: four unsigned 32-bit words (JSON-serialisable). */
export type RngState = readonly [number, number, number, number];

/** A small, fast, seeded pseudo-random generator (xoshiro128**). */
export interface Rng {
  /** Uniform float in [0, 1) with 32 bits of resolution. */
  float(): number;
  /**
   * Uniform integer. `int(n)` is in [0, n); `int(lo, hi)` is in [lo, hi).
   * Bounds must be integers with hi - lo in [1, 2^32].
   */
  int(loOrN: number, hi?: number): number;
  /** A uniformly chosen element of a non-empty array. */
  choice<T>(items: readonly T[]): T;
  /** A copy of the current state; `createRng(state)` or `setState(state)` resumes from it. */
  getState(): RngState;
  /** Restores a state previously returned by `getState`. */
  setState(state: RngState): void;
}

const U32 = 4294967296;

/** Murmur3's 32-bit finaliser: a bijective avalanche mix of one word. */
export function mix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function checkSeed(seed: number, argument: string): void {
  if (!Number.isFinite(seed) || !Number.isInteger(seed)) {
    throw new EnvArgumentError(argument, `expected a finite integer seed, got ${String(seed)}.`);
  }
}

/** Low and high 32-bit words of an integer (two's complement for negatives). */
function words(seed: number): [number, number] {
  return [seed >>> 0, Math.floor(seed / U32) >>> 0];
}

/**
 * Derives a 32-bit seed from a base seed and integer parts (e.g. env index, episode counter):
 *
 * ```
 * h = mix32(lo(base) ^ mix32(hi(base) ^ 0x9e3779b9))
 * for each part p: h = mix32((h ^ 0x9e3779b9) + mix32(lo(p) + 0x6a09e667))
 * ```
 *
 * where `lo`/`hi` are the low/high 32-bit words and `mix32` is the murmur3 finaliser. Distinct
 * inputs give well-scattered outputs, and the result is identical on every platform.
 */
export function deriveSeed(base: number, ...parts: readonly number[]): number {
  checkSeed(base, 'deriveSeed(base)');
  const [lo, hi] = words(base);
  let h = mix32(lo ^ mix32(hi ^ 0x9e3779b9));
  for (const p of parts) {
    checkSeed(p, 'deriveSeed(parts)');
    h = mix32(((h ^ 0x9e3779b9) + mix32((words(p)[0] + 0x6a09e667) >>> 0)) >>> 0);
  }
  return h;
}

function isState(value: unknown): value is RngState {
  return (
    Array.isArray(value) &&
    value.length === 4 &&
    value.every((w) => Number.isInteger(w) && w >= 0 && w < U32) &&
    value.some((w) => w !== 0)
  );
}

/**
 * Creates a seeded generator. `seed` is any integer (the same seed always gives the same
 * sequence) or a state from `getState()` to resume a sequence exactly.
 */
export function createRng(seed: number | RngState): Rng {
  let a: number;
  let b: number;
  let c: number;
  let d: number;
  const load = (s: RngState): void => {
    [a, b, c, d] = s;
  };
  if (typeof seed === 'number') {
    checkSeed(seed, 'createRng(seed)');
    // splitmix-style expansion of the seed into four non-zero-sum words
    let x = deriveSeed(seed);
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      return mix32(x);
    };
    a = next();
    b = next();
    c = next();
    d = next();
    if ((a | b | c | d) === 0) a = 1;
  } else if (isState(seed)) {
    [a, b, c, d] = seed;
  } else {
    throw new EnvArgumentError(
      'createRng(seed)',
      'expected an integer seed or a state from getState() (four uint32 words, not all zero).',
    );
  }

  const nextU32 = (): number => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result;
  };

  const rng: Rng = {
    float: () => nextU32() / U32,
    int(loOrN: number, hi?: number): number {
      const lo = hi === undefined ? 0 : loOrN;
      const top = hi === undefined ? loOrN : hi;
      const span = top - lo;
      if (!Number.isInteger(lo) || !Number.isInteger(top) || span < 1 || span > U32) {
        throw new EnvArgumentError(
          'Rng.int',
          `expected integer bounds with 1 <= hi - lo <= 2^32, got lo=${lo}, hi=${top}.`,
        );
      }
      return lo + Math.floor((nextU32() / U32) * span);
    },
    choice<T>(items: readonly T[]): T {
      if (items.length === 0) {
        throw new EnvArgumentError('Rng.choice(items)', 'cannot choose from an empty array.');
      }
      return items[Math.floor((nextU32() / U32) * items.length)] as T;
    },
    getState: () => [a >>> 0, b >>> 0, c >>> 0, d >>> 0],
    setState(state: RngState): void {
      if (!isState(state)) {
        throw new EnvArgumentError(
          'Rng.setState(state)',
          'expected four uint32 words (not all zero), as returned by getState().',
        );
      }
      load(state);
    },
  };
  return rng;
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
