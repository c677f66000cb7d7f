import * as tf from '@tensorflow/tfjs-core';
import { actionLevelLosses } from './action-losses.js';
import { explainedVariance, type UpdateDiagnostics } from './diagnostics.js';
import { PolicyContractError, PpoConfigError } from './errors.js';
import { clipGradNorm } from './grad-clip.js';
import type { LossFn, PpoUpdateArgs, Sums } from './minibatch.js';
import { tokenLevelLosses } from './token-losses.js';

export type { PpoUpdateArgs } from './minibatch.js';

/** Gradients of `f` w.r.t. `vars`, summed over chunks; `null` where a variable got none. */
function accumulate(
  fns: readonly LossFn[],
  vars: readonly tf.Variable[],
  sums: Sums,
): (tf.Tensor | null)[] {
  const acc: (tf.Tensor | null)[] = vars.map(() => null);
  for (const f of fns) {
    let result: { value: tf.Scalar; grads: tf.NamedTensorMap };
    try {
      result = tf.variableGrads(() => f(sums), vars as tf.Variable[]);
    } catch (e) {
      if (e instanceof Error && /gradient function not found/.test(e.message)) {
        throw new PolicyContractError(
          'tf.variableGrads',
          `${e.message} Load TF.js's gradient functions in the app: import '@tensorflow/tfjs' or '@tensorflow/tfjs-node' (under a bundler, '@tensorflow/tfjs-core/dist/register_all_gradients' also works).`,
        );
      }
      throw e;
    }
    const { value, grads } = result;
    value.dispose();
    vars.forEach((v, j) => {
      const g = grads[v.name];
      if (g === undefined) return;
      const prev = acc[j];
      if (prev === null || prev === undefined) {
        acc[j] = g;
      } else {
        acc[j] = tf.add(prev, g);
        prev.dispose();
        g.dispose();
      }
    });
  }
  return acc;
}

function disposeAll(list: readonly (tf.Tensor | null)[]): void {
  for (const g of list) g?.dispose();
}

/**
 * One PPO update over a rollout (algorithms.md §2): `epochs` passes, each over a fresh seeded
 * permutation cut into `numMinibatches` minibatches of ⌊T·N / numMinibatches⌋ samples (the
 * remainder is dropped). Per minibatch, in this order:
 *
 * 1. advantages are standardised over the minibatch (`advantageNormalisation`);
 * 2. critic step: clipped value loss, gradients accumulated over `gradAccumulation` chunks,
 *    global-norm clip, Adam;
 * 3. actor step: clipped surrogate (per token for poad/ntpo/archer, on the normalised action
 *    log-prob for twosome) minus c_H × entropy, accumulated over the chunks;
 * 4. if approx KL > `targetKl` the actor gradients are dropped and the actor does not step for
 *    this minibatch (the critic already stepped; later minibatches still run); otherwise the
 *    actor gradient is norm-clipped and AdamW steps.
 *
 * Each chunk's loss is its masked sum divided by the minibatch's real-token (or action) count,
 * so the accumulated gradient equals that of the minibatch's masked mean whatever `gradAccumulation` is.
 */
export function ppoUpdate(args: PpoUpdateArgs): UpdateDiagnostics {
  const { buffer, advantages, config, rng } = args;
  const start = performance.now();
  const size = buffer.size;
  const mbSize = Math.floor(size / config.numMinibatches);
  if (mbSize < 1) {
    throw new PpoConfigError(
      'config.numMinibatches',
      `${config.numMinibatches} minibatches of ${size} samples leave none per minibatch; lower it.`,
    );
  }
  if (mbSize % config.gradAccumulation !== 0) {
    throw new PpoConfigError(
      'config.gradAccumulation',
      `must divide the minibatch size ${mbSize} (= ⌊${size} / ${config.numMinibatches}⌋).`,
    );
  }
  const twosome = config.algorithm === 'twosome';
  if (twosome !== (advantages.level === 'action')) {
    throw new PpoConfigError(
      'advantages',
      `level '${advantages.level}' does not fit algorithm '${config.algorithm}'.`,
    );
  }
  const chunkSize = mbSize / config.gradAccumulation;
  const totals = { pg: 0, entropy: 0, kl: 0, clipped: 0, value: 0, aNorm: 0, cNorm: 0, steps: 0 };
  let skipped = 0;
  let minibatches = 0;
  let tokensSeen = 0;

  for (let epoch = 0; epoch < config.epochs; epoch++) {
    const perm = rng.permutation(size);
    for (let mb = 0; mb < config.numMinibatches; mb++) {
      const idx = perm.subarray(mb * mbSize, (mb + 1) * mbSize);
      const chunks: Int32Array[] = [];
      for (let c = 0; c < config.gradAccumulation; c++) {
        chunks.push(idx.subarray(c * chunkSize, (c + 1) * chunkSize));
      }
      const mbInputs = twosome
        ? actionLevelLosses(args, idx, chunks)
        : tokenLevelLosses(args, idx, chunks);
      tokensSeen += mbInputs.tokens;

      // ---- critic step ----
      const valueSums: Sums = { pg: 0, entropy: 0, kl: 0, clipped: 0 };
      const cGrads = accumulate(mbInputs.valueFns, args.policy.criticVariables, valueSums);
      const cClip = clipGradNorm(cGrads, config.criticMaxGradNorm);
      args.criticOptimizer.step(cClip.grads);
      disposeAll(cGrads);
      disposeAll(cClip.grads);
      totals.value += valueSums.pg / mbInputs.denominator;
      totals.cNorm += cClip.norm;

      // ---- actor step (skipped when approx KL is too large) ----
      const sums: Sums = { pg: 0, entropy: 0, kl: 0, clipped: 0 };
      const aGrads = accumulate(mbInputs.policyFns, args.policy.actorVariables, sums);
      const kl = sums.kl / mbInputs.denominator;
      if (config.targetKl !== null && kl > config.targetKl) {
        skipped += 1;
      } else {
        const aClip = clipGradNorm(aGrads, config.maxGradNorm);
        args.actorOptimizer.step(aClip.grads);
        disposeAll(aClip.grads);
        totals.aNorm += aClip.norm;
        totals.steps += 1;
      }
      disposeAll(aGrads);
      totals.pg += sums.pg / mbInputs.denominator;
      totals.entropy += sums.entropy / mbInputs.denominator;
      totals.kl += kl;
      totals.clipped += sums.clipped / mbInputs.denominator;
      minibatches += 1;
    }
  }

  const oldValues = twosome
    ? Float64Array.from({ length: size }, (_, i) => buffer.values[buffer.actionOffsets[i]!]!)
    : buffer.values;
  const seconds = Math.max(1e-9, (performance.now() - start) / 1000);
  return {
    policyLoss: totals.pg / minibatches,
    valueLoss: totals.value / minibatches,
    entropy: totals.entropy / minibatches,
    approxKl: totals.kl / minibatches,
    clipFraction: totals.clipped / minibatches,
    explainedVariance: explainedVariance(advantages.returns, oldValues),
    actorGradNorm: totals.steps > 0 ? totals.aNorm / totals.steps : Number.NaN,
    criticGradNorm: totals.cNorm / minibatches,
    minibatches,
    skippedMinibatches: skipped,
    seconds,
    tokensPerSec: tokensSeen / seconds,
  };
}
