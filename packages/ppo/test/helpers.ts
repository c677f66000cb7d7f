import { type RolloutBuffer, RolloutBuilder } from '../src/index.js';

/** A one-environment buffer from §7-style arrays (tokens given only by their count). */
export function bufferFromVector(v: {
  tokenCounts: number[];
  values: number[][];
  rewards: number[];
  dones: boolean[];
  truncated?: boolean[];
  finalValues?: number[];
  bootstrap: number;
}): RolloutBuffer {
  const T = v.rewards.length;
  const b = new RolloutBuilder(T, 1);
  for (let t = 0; t < T; t++) {
    const len = v.tokenCounts[t]!;
    b.push({
      prompt: new Int32Array([1]),
      action: Int32Array.from({ length: len }, (_, k) => k + 2),
      logProbs: new Float32Array(len),
      values: Float32Array.from(v.values[t]!.slice(0, len)),
      reward: v.rewards[t]!,
      terminated: v.dones[t]!,
      truncated: v.truncated?.[t] ?? false,
      finalValue: v.finalValues?.[t] ?? Number.NaN,
    });
  }
  return b.build([v.bootstrap]);
}
