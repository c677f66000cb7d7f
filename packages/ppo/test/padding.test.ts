import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  allowedTokenSets,
  PolicyContractError,
  padTokenRows,
  RolloutBuilder,
  tokenBatchOf,
  toPadded,
} from '../src/index.js';
import { useCpu } from './backend.js';
import { bufferFromVector } from './helpers.js';

beforeAll(useCpu);

/** The padding written out the long way: each row sliced, zeros concatenated, rows stacked. */
function reference(t: tf.Tensor1D, lengths: number[], width: number): tf.Tensor2D {
  let offset = 0;
  return tf.stack(
    lengths.map((n) => {
      const row = tf.slice(t, [offset], [n]);
      offset += n;
      return n < width ? tf.concat([row, tf.zeros([width - n])]) : row;
    }),
  ) as tf.Tensor2D;
}

function batchOf(lengths: number[], width: number) {
  return {
    prompts: lengths.map(() => new Int32Array([1])),
    actions: lengths.map((n) => Int32Array.from({ length: n }, (_, k) => k + 2)),
    width,
  };
}

describe('toPadded', () => {
  const cases: [string, number[], number][] = [
    ['ragged rows', [3, 1, 4, 2], 4],
    ['one row', [5], 5],
    ['rows shorter than the width', [1, 2], 6],
    ['an empty row', [2, 0, 3], 3],
  ];
  for (const [name, lengths, width] of cases) {
    it(`pads ${name} as slicing and concatenating zeros would, values and gradients`, () => {
      const total = lengths.reduce((a, b) => a + b, 0);
      const flat = tf.tensor1d(Array.from({ length: total }, (_, i) => Math.sin(i + 1) * 3 - 1));
      // A weight per padded slot with signs, so that the gradient tells slots apart.
      const w = tf.tensor2d(
        Array.from({ length: lengths.length * width }, (_, i) => (i % 3) - 0.75 + i / 10),
        [lengths.length, width],
      );
      const batch = batchOf(lengths, width);
      const before = tf.memory().numTensors;
      // The padding alone, outside any tidy: it must leave only its result behind.
      const padded = toPadded(flat, batch, 'test');
      expect(tf.memory().numTensors).toBe(before + 1);
      padded.dispose();
      const [got, want, gGot, gWant] = tf.tidy(() => {
        const gradOf = (pad: (x: tf.Tensor) => tf.Tensor) =>
          tf
            .grad((x: tf.Tensor) => tf.sum(tf.mul(pad(x), w)))(flat)
            .dataSync();
        return [
          toPadded(flat, batch, 'test').dataSync(),
          reference(flat, lengths, width).dataSync(),
          gradOf((x) => toPadded(x, batch, 'test')),
          gradOf((x) => reference(x as tf.Tensor1D, lengths, width)),
        ].map((a) => Array.from(a));
      });
      expect(got).toEqual(want);
      expect(got!.length).toBe(lengths.length * width);
      expect(gGot).toEqual(gWant);
      expect(tf.memory().numTensors).toBe(before);
      tf.dispose([flat, w]);
    });
  }

  it('returns a padded matrix as it is', () => {
    const m = tf.zeros([2, 3]);
    expect(toPadded(m, batchOf([3, 1], 3), 'test')).toBe(m);
    m.dispose();
  });

  it('runs the same kernels whatever the number of rows', async () => {
    const kernels = async (rows: number) => {
      const lengths = Array.from({ length: rows }, (_, i) => 1 + (i % 4));
      const flat = tf.ones([lengths.reduce((a, b) => a + b, 0)]);
      const batch = batchOf(lengths, 4);
      const info = await tf.profile(() =>
        tf.grad((x: tf.Tensor) => tf.sum(toPadded(x, batch, 'test')))(flat),
      );
      flat.dispose();
      return info.kernelNames.length;
    };
    const few = await kernels(2);
    expect(few).toBeLessThanOrEqual(8);
    expect(await kernels(40)).toBe(few);
  });

  it('names the method and both shapes it accepts when the shape is neither', () => {
    const t = tf.zeros([5]);
    expect(() => toPadded(t, batchOf([3, 1], 3), 'policy.scoreTokens')).toThrow(
      PolicyContractError,
    );
    expect(() => toPadded(t, batchOf([3, 1], 3), 'policy.scoreTokens')).toThrow(
      /\[2, 3\].*\[4\].*\[5\]/,
    );
    t.dispose();
  });
});

describe('tokenBatchOf and padTokenRows', () => {
  // Four steps of 3, 1, 4 and 2 action tokens.
  const buffer = bufferFromVector({
    tokenCounts: [3, 1, 4, 2],
    values: [[1, 2, 3], [4], [5, 6, 7, 8], [9, 10]],
    rewards: [0, 0, 0, 1],
    dones: [false, false, false, true],
    bootstrap: 0,
  });

  it("batch the rows' prompts and actions, as wide as the longest action", () => {
    const batch = tokenBatchOf(buffer, [3, 0], false);
    expect(batch).toEqual({
      prompts: [buffer.prompt(3), buffer.prompt(0)],
      actions: [buffer.action(3), buffer.action(0)],
      width: 3,
    });
    expect(tokenBatchOf(buffer, [1], false).width).toBe(1);
    expect(tokenBatchOf(buffer, [], false).width).toBe(1);
  });

  it("with labels, add the label tree's token sets of each row's chosen label", () => {
    // One step of two environments, each choosing among labels [2 3] and [2 4 5].
    const b = new RolloutBuilder(1, 2);
    const ids = [Int32Array.from([2, 3]), Int32Array.from([2, 4, 5])];
    for (const chosen of [1, 0]) {
      b.push({
        prompt: new Int32Array([1]),
        action: ids[chosen]!,
        logProbs: new Float32Array(ids[chosen]!.length),
        values: new Float32Array(ids[chosen]!.length),
        reward: 0,
        terminated: false,
        truncated: false,
        finalValue: Number.NaN,
        candidates: { ids, normalisers: [1, 1], chosen, actionLogProb: 0 },
      });
    }
    const labelled = b.build([0, 0]);
    const batch = tokenBatchOf(labelled, [0, 1], true);
    expect(batch.width).toBe(3);
    expect(batch.allowed).toEqual(allowedTokenSets(labelled, [0, 1]));
    // Both labels start with 2; after 2 either 3 or 4 may follow; after 2 4 only 5.
    const sorted = (row: readonly Int32Array[]) =>
      row.map((ids) => Array.from(ids).sort((a, b) => a - b));
    expect(batch.allowed!.map(sorted)).toEqual([
      [[2], [3, 4], [5]],
      [[2], [3, 4]],
    ]);
    expect('allowed' in tokenBatchOf(labelled, [0, 1], false)).toBe(false);
  });

  it('lay per-token arrays out row by row, zeros after each action, and mask the real tokens', () => {
    const { mask, mats } = padTokenRows(buffer, [2, 1], 4, [buffer.values, buffer.values]);
    expect(Array.from(mask)).toEqual([1, 1, 1, 1, 1, 0, 0, 0]);
    expect(Array.from(mats[0]!)).toEqual([5, 6, 7, 8, 4, 0, 0, 0]);
    expect(mats[1]).toEqual(mats[0]);
    expect(mats[1]).not.toBe(mats[0]);
  });
});
