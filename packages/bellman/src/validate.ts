// Input checks shared by the advantage functions. Every error names the offending field and
// says what a valid value looks like, so a caller can fix it without reading the source.

/** Throws a RangeError unless `x` is a number in [0, 1]. */
export function checkUnitInterval(fn: string, field: string, x: unknown): number {
  if (typeof x !== 'number' || Number.isNaN(x)) {
    throw new TypeError(`${fn}: \`${field}\` must be a number in [0, 1], got ${String(x)}`);
  }
  if (!(x >= 0 && x <= 1)) {
    throw new RangeError(`${fn}: \`${field}\` must lie in [0, 1], got ${x}`);
  }
  return x;
}

/** Throws unless `x` is array-like (has a non-negative integer `length`). */
export function checkArrayLike(fn: string, field: string, x: unknown): ArrayLike<unknown> {
  if (
    x === null ||
    typeof x !== 'object' ||
    typeof (x as { length?: unknown }).length !== 'number'
  ) {
    throw new TypeError(
      `${fn}: \`${field}\` must be an array or typed array, got ${x === null ? 'null' : typeof x}`,
    );
  }
  return x as ArrayLike<unknown>;
}

/** Throws unless `arr.length === expected`. */
export function checkLength(
  fn: string,
  field: string,
  arr: ArrayLike<unknown>,
  expected: number,
  because: string,
): void {
  if (arr.length !== expected) {
    throw new RangeError(
      `${fn}: \`${field}\` has length ${arr.length} but must have length ${expected} (${because})`,
    );
  }
}

/** Throws unless every entry of `arr` is a finite number. */
export function checkFiniteArray(fn: string, field: string, arr: ArrayLike<unknown>): void {
  for (let i = 0; i < arr.length; i++) {
    const x = arr[i];
    if (typeof x !== 'number') {
      throw new TypeError(`${fn}: \`${field}[${i}]\` must be a number, got ${typeof x}`);
    }
    if (!Number.isFinite(x)) {
      throw new RangeError(`${fn}: \`${field}[${i}]\` must be finite, got ${x}`);
    }
  }
}

/** Throws unless `x` is a finite number. */
export function checkFinite(fn: string, field: string, x: unknown): number {
  if (typeof x !== 'number') {
    throw new TypeError(`${fn}: \`${field}\` must be a number, got ${typeof x}`);
  }
  if (!Number.isFinite(x)) throw new RangeError(`${fn}: \`${field}\` must be finite, got ${x}`);
  return x;
}

/** Throws unless every entry of `arr` is a boolean or the number 0 or 1. */
export function checkDones(fn: string, field: string, arr: ArrayLike<unknown>): void {
  for (let i = 0; i < arr.length; i++) {
    const x = arr[i];
    if (typeof x === 'boolean' || x === 0 || x === 1) continue;
    throw new TypeError(
      `${fn}: \`${field}[${i}]\` must be a boolean or 0/1 (1 = the episode ended after this action), got ${String(x)}`,
    );
  }
}

/** Throws unless every entry of `counts` is an integer >= 1; returns their sum. */
export function checkTokenCounts(fn: string, field: string, counts: ArrayLike<unknown>): number {
  let total = 0;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i];
    if (typeof c !== 'number' || !Number.isInteger(c)) {
      throw new TypeError(`${fn}: \`${field}[${i}]\` must be an integer, got ${String(c)}`);
    }
    if (c < 1) {
      throw new RangeError(
        `${fn}: \`${field}[${i}]\` is ${c}, but every action has at least one token`,
      );
    }
    total += c;
  }
  return total;
}

/** Throws unless `segment` is an object (the fields are checked by `checkTokenSegment`). */
export function checkSegmentObject(fn: string, segment: unknown): void {
  if (segment === null || typeof segment !== 'object') {
    throw new TypeError(
      `${fn}: \`segment\` must be an object with rewards, dones, tokenCounts, values and bootstrapValue`,
    );
  }
}

/** The fields of a valid token segment, plus Σ tokenCounts. */
export interface CheckedTokenSegment {
  rewards: ArrayLike<number>;
  dones: ArrayLike<boolean | number>;
  counts: ArrayLike<number>;
  values: ArrayLike<number>;
  /** The given bootstrap value, or 0 when the last action ended its episode (it is unused then). */
  bootstrapValue: number;
  /** Σ tokenCounts, the number of tokens (and of values). */
  total: number;
}

/**
 * Checks the fields of a token segment: lengths (T actions, Σ tokenCounts values), token counts
 * >= 1, finite rewards and values, 0/1 dones, and a finite bootstrap value unless the last
 * action ended its episode. Call `checkSegmentObject` first.
 */
export function checkTokenSegment(
  fn: string,
  segment: {
    rewards: unknown;
    dones: unknown;
    tokenCounts: unknown;
    values: unknown;
    bootstrapValue: unknown;
  },
): CheckedTokenSegment {
  const rewards = checkArrayLike(fn, 'segment.rewards', segment.rewards) as ArrayLike<number>;
  const dones = checkArrayLike(fn, 'segment.dones', segment.dones) as ArrayLike<boolean | number>;
  const counts = checkArrayLike(
    fn,
    'segment.tokenCounts',
    segment.tokenCounts,
  ) as ArrayLike<number>;
  const values = checkArrayLike(fn, 'segment.values', segment.values) as ArrayLike<number>;
  const T = rewards.length;
  checkLength(fn, 'segment.dones', dones, T, 'one entry per action, like rewards');
  checkLength(fn, 'segment.tokenCounts', counts, T, 'one entry per action, like rewards');
  const total = checkTokenCounts(fn, 'segment.tokenCounts', counts);
  checkLength(fn, 'segment.values', values, total, 'one value per token: the sum of tokenCounts');
  const bootstrapValue = checkSegmentNumbers(fn, rewards, dones, values, segment.bootstrapValue);
  return { rewards, dones, counts, values, bootstrapValue, total };
}

/**
 * Checks the fields of an action segment: lengths (T actions, one value each), finite rewards and
 * values, 0/1 dones, and a finite bootstrap value unless the last action ended its episode.
 */
export function checkActionSegment(
  fn: string,
  segment: { rewards: unknown; dones: unknown; values: unknown; bootstrapValue: unknown },
): Omit<CheckedTokenSegment, 'counts' | 'total'> {
  const rewards = checkArrayLike(fn, 'segment.rewards', segment.rewards) as ArrayLike<number>;
  const dones = checkArrayLike(fn, 'segment.dones', segment.dones) as ArrayLike<boolean | number>;
  const values = checkArrayLike(fn, 'segment.values', segment.values) as ArrayLike<number>;
  const T = rewards.length;
  checkLength(fn, 'segment.dones', dones, T, 'one entry per action, like rewards');
  checkLength(fn, 'segment.values', values, T, 'one value per action, like rewards');
  const bootstrapValue = checkSegmentNumbers(fn, rewards, dones, values, segment.bootstrapValue);
  return { rewards, dones, values, bootstrapValue };
}

/**
 * The checks after the lengths, shared by both kinds of segment: finite rewards and values, 0/1
 * dones. Returns the bootstrap value, checked finite unless the last action ended its episode
 * (then 0: it is unused).
 */
function checkSegmentNumbers(
  fn: string,
  rewards: ArrayLike<number>,
  dones: ArrayLike<boolean | number>,
  values: ArrayLike<number>,
  bootstrapValue: unknown,
): number {
  checkFiniteArray(fn, 'segment.rewards', rewards);
  checkFiniteArray(fn, 'segment.values', values);
  checkDones(fn, 'segment.dones', dones);
  const T = rewards.length;
  const lastDone = T > 0 && Boolean(dones[T - 1]);
  return lastDone ? 0 : checkFinite(fn, 'segment.bootstrapValue', bootstrapValue);
}

/** Throws a TypeError unless `x` is `'std'` or `'none'`; `call` shows a correct call. */
export function checkGroupNormalisation(
  fn: string,
  field: string,
  x: unknown,
  call: string,
): 'std' | 'none' {
  if (x === 'std' || x === 'none') return x;
  throw new TypeError(
    `${fn}: \`${field}\` must be 'std' (divide by the group's std + 1e-6, GRPO) or 'none' (only subtract the group mean, Dr. GRPO), got ${typeof x === 'string' ? `'${x}'` : String(x)}; e.g. ${call}`,
  );
}

/**
 * Throws unless `x` is array-like with at least `min` entries (a group of episodes); `why` says
 * why that many are needed and `call` shows a correct call.
 */
export function checkGroupSize(
  fn: string,
  field: string,
  x: unknown,
  min: number,
  why: string,
  call: string,
): ArrayLike<unknown> {
  if (
    x === null ||
    typeof x !== 'object' ||
    typeof (x as { length?: unknown }).length !== 'number'
  ) {
    throw new TypeError(
      `${fn}: \`${field}\` must be an array or typed array with one entry per episode of the group, got ${x === null ? 'null' : typeof x}; e.g. ${call}`,
    );
  }
  const n = (x as ArrayLike<unknown>).length;
  if (n < min) {
    throw new RangeError(
      `${fn}: \`${field}\` has ${n} ${n === 1 ? 'entry' : 'entries'}, but ${why}; e.g. ${call}`,
    );
  }
  return x as ArrayLike<unknown>;
}
