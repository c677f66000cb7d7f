/**
 * The oracle critic (`--critic oracle | oracle-star`): the policy the trainer drives, with its
 * value calls answered by an environment's exact values instead of the value head. Everything
 * else (acting, scoring, the actor's variables, the phases) is the agent's policy's, so the
 * trainer computes targets and advantages by the same code as with a learned critic, from exact
 * values.
 */
import type { TokenBatch, TokenPolicy } from '@poad/ppo';
import * as tf from '@tensorflow/tfjs-core';

/**
 * Exact values of an environment, looked up by the ids the trainer holds (an app's
 * `exactCritic`, e.g. the credit tasks' tables of `@poad/envs-credit`). Both lookups are
 * synchronous: they run inside the trainer's `tf.tidy` and `tf.variableGrads`.
 */
export interface ExactValues {
  /**
   * V(s, w_<k) for k = 0 … |action| − 1: the value before each token of `action` in the state
   * whose prompt ids are `prompt` (entry 0 is V(s)).
   */
  tokenValues(prompt: Int32Array, action: Int32Array): ArrayLike<number>;
  /** V(s) of the state whose prompt ids are `prompt`. */
  promptValue(prompt: Int32Array): number;
}

/** Which exact values an oracle critic reads: V^π of the policy that acts, or V*. */
export type ExactValueKind = 'policy' | 'optimal';

/**
 * `inner` with `tokenValues` and `promptValues` answered by `exact`: padded `[B, width]` values
 * (0 in the padding) and `[B]` prompt values. They are constants joined to the critic's
 * variables by a term of weight 0, so the update's critic step finds its variables connected to
 * its loss but gets a zero gradient: the value head keeps its weights (Adam's step on a zero
 * gradient from zero moments is 0), and the critic's loss, still computed and logged, measures
 * the returns against the exact values. `prepareValues` is left out (there are no features to
 * compute) and values are read one batch per step. `allowed` is ignored: the exact values
 * already belong to the policy's token space.
 */
export function oracleCritic(inner: TokenPolicy, exact: ExactValues): TokenPolicy {
  // 0 · Σ of the critic's variables: a zero-gradient path from them to every value.
  const zero = (): tf.Scalar =>
    inner.criticVariables.length === 0
      ? tf.scalar(0)
      : (tf.mul(
          0,
          inner.criticVariables.map((v) => tf.sum(v)).reduce((a, b) => tf.add(a, b)),
        ) as tf.Scalar);
  const policy: TokenPolicy = {
    encodePrompt: (o) => inner.encodePrompt(o),
    encodeContinuations: (o, c) => inner.encodeContinuations(o, c),
    scoreTokens: (batch) => inner.scoreTokens(batch),
    tokenValues(batch: TokenBatch) {
      const { prompts, actions, width } = batch;
      const out = new Float32Array(prompts.length * width);
      prompts.forEach((p, i) => {
        const action = actions[i]!;
        const v = exact.tokenValues(p, action);
        if (v.length !== action.length)
          throw new RangeError(
            `oracle critic: the exact values gave ${v.length} values for an action of ${action.length} tokens; expected one per token`,
          );
        for (let k = 0; k < action.length; k++) out[i * width + k] = v[k]!;
      });
      return tf.add(tf.tensor2d(out, [prompts.length, width]), zero()) as tf.Tensor2D;
    },
    promptValues(prompts: readonly Int32Array[]) {
      const values = tf.tensor1d(Float32Array.from(prompts, (p) => exact.promptValue(p)));
      return tf.add(values, zero()) as tf.Tensor1D;
    },
    get actorVariables() {
      return inner.actorVariables;
    },
    get criticVariables() {
      return inner.criticVariables;
    },
  };
  // The optional members the trainer looks for, where the agent's policy has them.
  const optional = {
    ...(inner.generate ? { generate: inner.generate.bind(inner) } : {}),
    ...(inner.generateBatch ? { generateBatch: inner.generateBatch.bind(inner) } : {}),
    ...(inner.scoreCandidateTokens
      ? { scoreCandidateTokens: inner.scoreCandidateTokens.bind(inner) }
      : {}),
    ...(inner.scoreCandidates ? { scoreCandidates: inner.scoreCandidates.bind(inner) } : {}),
    ...(inner.enterPhase ? { enterPhase: inner.enterPhase.bind(inner) } : {}),
  } satisfies Partial<TokenPolicy>;
  return Object.assign(policy, optional);
}
