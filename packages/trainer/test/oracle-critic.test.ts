// The oracle critic: an agent's policy whose value calls return an environment's exact values,
// with a zero gradient to the critic's variables; and its refusal on an environment without them.
import { existsSync } from 'node:fs';
import type { TokenBatch, TokenPolicy } from '@poad/ppo';
import { initBackend } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExactValues, oracleCritic } from '../src/index.js';
import { cliHarness, TINY_RUN } from './cli-harness.js';
import { tinyVirtualHomeApp } from './tiny-app.js';

/** Prompt 7 is V = 1 with label [1, 2] (V 1, then 0.5); prompt 8 is V = −2 with [3] (V −2). */
const exact: ExactValues = {
  tokenValues(prompt, action) {
    if (prompt[0] === 7 && action.join() === '1,2') return [1, 0.5];
    if (prompt[0] === 8 && action.join() === '3') return [-2];
    if (prompt[0] === 8 && action.join() === '3,3') return [-2];
    throw new Error(`no exact values for prompt ${prompt.join()} and action ${action.join()}`);
  },
  promptValue: (prompt) => (prompt[0] === 7 ? 1 : -2),
};

let head: tf.Variable;
beforeAll(async () => {
  await initBackend('cpu');
  head = tf.variable(tf.tensor1d([0.3, -0.7]), true, 'oracle-test-head');
});
afterAll(() => head.dispose());

/** A stand-in policy: its own values are the head's first weight everywhere. */
function innerPolicy(extra: Partial<TokenPolicy> = {}): TokenPolicy {
  const own = (n: number) => tf.mul(tf.ones([n]), tf.slice(head, [0], [1]));
  return {
    encodePrompt: (o) => Int32Array.of(o === 'kitchen' ? 7 : 8),
    encodeContinuations: (_o, labels) => labels.map((_, k) => Int32Array.of(k + 1)),
    scoreTokens: () => {
      throw new Error('not used');
    },
    tokenValues: (b: TokenBatch) =>
      tf.reshape(own(b.prompts.length * b.width), [b.prompts.length, b.width]) as tf.Tensor2D,
    promptValues: (p) => own(p.length) as tf.Tensor1D,
    prepareValues: async () => {
      throw new Error('the oracle has no features to prepare');
    },
    actorVariables: [],
    criticVariables: [head],
    ...extra,
  };
}

describe('oracleCritic', () => {
  it('answers the value calls with the exact values, padded, and forwards the rest', async () => {
    const policy = oracleCritic(innerPolicy(), exact);
    const batch = {
      prompts: [Int32Array.of(7), Int32Array.of(8)],
      actions: [Int32Array.of(1, 2), Int32Array.of(3)],
      width: 3,
    };
    const v = policy.tokenValues(batch);
    expect(v.shape).toEqual([2, 3]);
    expect(Array.from(await v.data())).toEqual([1, 0.5, 0, -2, 0, 0]);
    const p = policy.promptValues(batch.prompts);
    expect(Array.from(await p.data())).toEqual([1, -2]);
    tf.dispose([v, p]);
    expect(await policy.encodePrompt('kitchen')).toEqual(Int32Array.of(7));
    expect(policy.criticVariables).toEqual([head]);
    // No features to prepare; optional members only where the agent's policy has them.
    expect(policy.prepareValues).toBeUndefined();
    expect(policy.generate).toBeUndefined();
    const phases: string[] = [];
    const withPhases = oracleCritic(innerPolicy({ enterPhase: (ph) => phases.push(ph) }), exact);
    withPhases.enterPhase?.('values');
    expect(phases).toEqual(['values']);
  });

  it("the critic's loss on them reaches its variables with a zero gradient", () => {
    const policy = oracleCritic(innerPolicy(), exact);
    const { value, grads } = tf.variableGrads(() => {
      const v = policy.tokenValues({
        prompts: [Int32Array.of(7)],
        actions: [Int32Array.of(1, 2)],
        width: 2,
      });
      return tf.sum(tf.square(tf.sub(v, tf.tensor2d([[3, 3]])))) as tf.Scalar;
    }, [head]);
    // (1 − 3)² + (0.5 − 3)²: the exact values, not the head's.
    expect(value.dataSync()[0]).toBeCloseTo(10.25, 6);
    expect(Array.from(grads[head.name]!.dataSync()).every((g) => g === 0)).toBe(true);
    tf.dispose([value, ...Object.values(grads)]);
  });

  it('refuses exact values of another length than the action', () => {
    const policy = oracleCritic(innerPolicy(), exact);
    expect(() =>
      tf.tidy(() =>
        policy.tokenValues({
          prompts: [Int32Array.of(8)],
          actions: [Int32Array.of(3, 3)],
          width: 2,
        }),
      ),
    ).toThrow(/gave 1 values for an action of 2 tokens/);
  });
});

describe('--critic oracle on an environment without exact values', () => {
  const h = cliHarness({ base: TINY_RUN, spec: tinyVirtualHomeApp });
  it('is refused before a run directory is made, naming the fix', async () => {
    const r = await h.run(h.newRun('refused', 1, ['--critic', 'oracle']));
    expect(r.code).toBe(2);
    expect(r.out).toMatch(
      /--critic oracle: virtualhome\/\S+ has no exact values to answer the critic with.*use --critic learned/,
    );
    expect(existsSync(h.dir('refused'))).toBe(false);
  });
});
