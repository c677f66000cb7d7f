import { tokenGae } from './tokenGae.js';
import type { TokenGaeOptions, TokenSegment } from './types.js';

/** Advantages and returns of many segments, concatenated in order. */
export interface BatchGaeResult {
  advantages: Float64Array;
  returns: Float64Array;
  /** `offsets[i]` is where segment i starts in the flat arrays; `offsets[n]` is the total. */
  offsets: Uint32Array;
}

/**
 * Runs `tokenGae` over several segments (e.g. one per environment thread of a rollout) and
 * writes all results into one pair of flat arrays, allocating them once.
 */
export function batchTokenGae(
  segments: readonly TokenSegment[],
  options: TokenGaeOptions,
): BatchGaeResult {
  if (!Array.isArray(segments)) {
    throw new TypeError('batchTokenGae: `segments` must be an array of token segments');
  }
  const offsets = new Uint32Array(segments.length + 1);
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as TokenSegment;
    const n = seg?.values?.length;
    if (typeof n !== 'number') {
      throw new TypeError(
        `batchTokenGae: \`segments[${i}].values\` must be an array or typed array`,
      );
    }
    offsets[i + 1] = (offsets[i] as number) + n;
  }
  const total = offsets[segments.length] as number;
  const advantages = new Float64Array(total);
  const returns = new Float64Array(total);
  for (let i = 0; i < segments.length; i++) {
    const start = offsets[i] as number;
    const end = offsets[i + 1] as number;
    try {
      tokenGae(segments[i] as TokenSegment, options, {
        advantages: advantages.subarray(start, end),
        returns: returns.subarray(start, end),
      });
    } catch (err) {
      if (err instanceof Error)
        err.message = err.message.replace('tokenGae:', `batchTokenGae: segments[${i}]:`);
      throw err;
    }
  }
  return { advantages, returns, offsets };
}
