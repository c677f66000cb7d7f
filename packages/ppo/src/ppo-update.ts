import * as tf from '@tensorflow/tfjs-core';
import { actionLevelLosses } from './action-losses.js';
import { explainedVariance, type UpdateDiagnostics } from './diagnostics.js';
import { NonFiniteUpdateError, PolicyContractError, PpoConfigError } from './errors.js';
import { gradNorm } from './grad-clip.js';
import type { LoggedSums, LossFn, MinibatchLosses, PpoUpdateArgs } from './minibatch.js';
import { deviceGate } from './multi-tensor.js';
import { tokenLevelLosses } from './token-losses.js';

export type { PpoUpdateArgs } from './minibatch.js';

/**
 * Gradients of the chunk losses `fns` w.r.t. `vars`, summed over chunks; `null` where a
 * variable got none. The chunks' logged sums are appended to `logged`.
 */
function accumulate(
  fns: readonly LossFn[],
  vars: readonly tf.Variable[],
  logged: LoggedSums,
): (tf.Tensor | null)[] {
  const acc: (tf.Tensor | null)[] = vars.map(() => null);
  for (const f of fns) {
    let result: { value: tf.Scalar; grads: tf.NamedTensorMap };
    try {
      result = tf.variableGrads(() => f(logged), vars as tf.Variable[]);
    } catch (e) {
      if (e instanceof Error && /gradient function not found/.test(e.message)) {
        throw new PolicyContractError(
          'tf.variableGrads',
          `${e.message} Load TF.js's gradient functions in the app: import '@tensorflow/tfjs' or '@tensorflow/tfjs-node' (under a bundler, '@tensorflow/tfjs-core/dist/register_all_gradients' also works).`,
        );
      }
      disposeAll(acc);
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

const noLogged = (): LoggedSums => ({ pg: [], entropy: [], kl: [], clipped: [] });

/** Σ of a chunk-ordered list of float32 values, added in float64 from 0 in that order. */
function sumOf(xs: Float32Array): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}

/** Named groups of scalars, read with one asynchronous transfer. */
async function readGroups<K extends string>(
  groups: Record<K, readonly tf.Scalar[]>,
): Promise<Record<K, Float32Array>> {
  const names = Object.keys(groups) as K[];
  const stacked = tf.stack(names.flatMap((k) => groups[k]));
  const data = (await stacked.data()) as Float32Array;
  stacked.dispose();
  const out = {} as Record<K, Float32Array>;
  let o = 0;
  for (const k of names) {
    out[k] = data.subarray(o, o + groups[k].length);
    o += groups[k].length;
  }
  return out;
}

/** What one minibatch contributed to the diagnostics (sums not yet divided). */
interface MinibatchOutcome {
  /**
   * Critic loss sum and gradient norm, or null when the critic step was skipped (not finite) or
   * the critic had no step in this minibatch.
   */
  critic: { valueSum: number; norm: number } | null;
  /**
   * Actor logged sums, or null when they were not finite (the actor step was skipped) or the
   * actor had no part in this minibatch.
   */
  actor: { pgSum: number; entropySum: number; klSum: number; clippedSum: number } | null;
  /** Actor gradient norm, or null when the actor did not step (approx KL, not finite, or no step). */
  actorNorm: number | null;
  /** The values that were not finite, e.g. `actor gradient norm NaN` (empty when all were). */
  nonFinite: string[];
}

/** Names of the values in `named` that are NaN or ±∞, with their values. */
function nonFiniteOf(named: Record<string, number>): string[] {
  return Object.entries(named).flatMap(([k, v]) => (Number.isFinite(v) ? [] : [`${k} ${v}`]));
}

/**
 * What each side does in one minibatch: the critic steps or has no part; the actor steps, is
 * only evaluated (its losses for the diagnostics, no gradients: `criticWarmup`), or has no part
 * (epochs beyond the actor's, when `criticEpochs` is larger).
 */
interface MinibatchRoles {
  readonly critic: boolean;
  readonly actor: 'step' | 'evaluate' | 'none';
}

/**
 * The actor's loss closures: the policy's, and with `criticGradToActor` the same chunk's critic
 * loss added to each, so that its gradient reaches the actor's variables through the actor's
 * features (`criticFeatures` actor). The critic's logged sums go to `scratch`.
 */
function actorLossFns(
  losses: MinibatchLosses,
  criticGradToActor: boolean,
  scratch: LoggedSums,
): readonly LossFn[] {
  if (!criticGradToActor) return losses.policyFns;
  return losses.policyFns.map(
    (p, c) => (logged) => tf.add(p(logged), losses.valueFns[c]!(scratch)) as tf.Scalar,
  );
}

/**
 * Critic gradients, one read (value-loss sums and the critic's gradient norm, for its clip
 * coefficient), critic step; actor gradients, one read (the logged sums, approx KL and the actor's
 * norm), then the actor step unless approx KL exceeds `targetKl`. Clip coefficients are computed
 * on the host from the norms read, as before reads became asynchronous, so results are the same on
 * every backend. A step whose loss sums or gradient norm are not finite is not taken: its
 * optimiser is not called, so its variables and moments stay as they were.
 *
 * With a fused critic optimiser (webgpu) the minibatch reads once: the critic steps with its
 * norm and loss sums left on the device, which skips the step when one of them is not finite
 * (`deviceGate`), and its values are read with the actor's; when they show the step was skipped,
 * the optimiser takes it back from its step count. The decisions are those of the two reads.
 *
 * `roles` leaves out either side's step (see {@link MinibatchRoles}); a side left out is neither
 * differentiated nor stepped.
 */
async function minibatchStep(
  args: PpoUpdateArgs,
  losses: MinibatchLosses,
  roles: MinibatchRoles,
): Promise<MinibatchOutcome> {
  const { config, policy } = args;
  const valueLogged = noLogged();
  const logged = noLogged();
  // The critic's sums of the actor's loss with criticGradToActor (not reported).
  const scratch = noLogged();
  const owned: (tf.Tensor | null)[] = [];
  try {
    // ---- critic step (skipped when its loss or gradient norm is not finite) ----
    const criticOpt = args.criticOptimizer;
    let critic: { value: Float32Array; norm: Float32Array } | null = null;
    let cNorm: tf.Scalar | null = null;
    if (roles.critic) {
      const cGrads = accumulate(losses.valueFns, policy.criticVariables, valueLogged);
      owned.push(...cGrads);
      cNorm = gradNorm(cGrads);
      owned.push(cNorm);
      if (criticOpt.fused) {
        // Decided on the device; read below with the actor's values.
        const gate = deviceGate(cNorm, valueLogged.pg);
        owned.push(gate);
        criticOpt.step(cGrads, { norm: gate, maxNorm: config.criticMaxGradNorm });
      } else {
        critic = await readGroups({ value: valueLogged.pg, norm: [cNorm] });
        const bad = nonFiniteOf({
          'critic loss': sumOf(critic.value),
          'critic gradient norm': critic.norm[0]!,
        });
        if (bad.length === 0) {
          criticOpt.step(cGrads, { norm: critic.norm[0]!, maxNorm: config.criticMaxGradNorm });
        }
      }
    }
    const criticUnread = roles.critic && critic === null;

    // ---- actor step (skipped when not finite, or when approx KL is too large) ----
    let aGrads: (tf.Tensor | null)[] = [];
    let aNorm: tf.Scalar | null = null;
    if (roles.actor === 'step') {
      const fns = actorLossFns(losses, config.criticGradToActor === true, scratch);
      aGrads = accumulate(fns, policy.actorVariables, logged);
      owned.push(...aGrads);
      aNorm = gradNorm(aGrads);
      owned.push(aNorm);
    } else if (roles.actor === 'evaluate') {
      // The losses alone (their logged sums are kept scalars, which outlive the tidy).
      for (const f of losses.policyFns) {
        tf.tidy(() => {
          f(logged);
        });
      }
    }
    const read =
      roles.actor !== 'none' || criticUnread
        ? await readGroups({
            pg: logged.pg,
            entropy: logged.entropy,
            kl: logged.kl,
            clipped: logged.clipped,
            norm: aNorm ? [aNorm] : [],
            // The fused critic's values, not read yet (none otherwise).
            criticValue: criticUnread ? valueLogged.pg : [],
            criticNorm: criticUnread && cNorm ? [cNorm] : [],
          })
        : null;
    if (criticUnread && read) critic = { value: read.criticValue, norm: read.criticNorm };
    let criticOut: MinibatchOutcome['critic'] = null;
    let criticBad: string[] = [];
    if (critic) {
      const criticNorm = critic.norm[0]!;
      const valueSum = sumOf(critic.value);
      criticBad = nonFiniteOf({
        'critic loss': valueSum,
        'critic gradient norm': criticNorm,
      });
      if (criticOpt.fused && criticBad.length > 0) criticOpt.stepSkippedOnDevice();
      if (criticBad.length === 0) criticOut = { valueSum, norm: criticNorm };
    }
    if (roles.actor === 'none' || !read) {
      return { critic: criticOut, actor: null, actorNorm: null, nonFinite: criticBad };
    }
    const actor = {
      pgSum: sumOf(read.pg),
      entropySum: sumOf(read.entropy),
      klSum: sumOf(read.kl),
      clippedSum: sumOf(read.clipped),
    };
    const stepping = roles.actor === 'step';
    const actorNorm = stepping ? read.norm[0]! : Number.NaN;
    const actorBad = nonFiniteOf({
      'policy loss': actor.pgSum,
      entropy: actor.entropySum,
      'approx KL': actor.klSum,
      ...(stepping ? { 'actor gradient norm': actorNorm } : {}),
    });
    const skip =
      !stepping ||
      actorBad.length > 0 ||
      (config.targetKl > 0 && actor.klSum / losses.denominator > config.targetKl);
    if (!skip) {
      const actor = args.actorOptimizer;
      actor.step(aGrads, { norm: actor.fused ? aNorm! : actorNorm, maxNorm: config.maxGradNorm });
    }
    return {
      critic: criticOut,
      actor: actorBad.length === 0 ? actor : null,
      actorNorm: skip ? null : actorNorm,
      nonFinite: [...criticBad, ...actorBad],
    };
  } finally {
    disposeAll(owned);
    for (const list of [valueLogged, logged, scratch]) {
      disposeAll([...list.pg, ...list.entropy, ...list.kl, ...list.clipped]);
    }
  }
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
 * The critic's options: `criticEpochs` passes for the critic (unset: `epochs`; a pass beyond one
 * side's epochs steps the other side alone, each pass with its own permutation); `valueClip` off
 * regresses on the plain error; `criticGradToActor` adds each chunk's critic loss to the actor's,
 * so that its gradient reaches the actor through the actor's features (`criticFeatures` actor).
 * With `args.actorLearns` false (`criticWarmup`) the actor's losses are only evaluated, for the
 * diagnostics, and it takes no step. Unset, they change nothing of the above.
 *
 * Non-finite guard: a critic or actor step whose loss sums or gradient norm are NaN or ±∞ is
 * skipped (weights and optimiser state untouched) and counted in `nonFiniteSkips`; after
 * `maxNonFiniteSkips` consecutive minibatches with such a skip (counting from
 * `args.nonFiniteStreak`) the update throws `NonFiniteUpdateError`. When everything is finite the
 * guard changes nothing.
 *
 * Each chunk's loss is its masked sum divided by the minibatch's real-token (or action) count,
 * so the accumulated gradient equals that of the minibatch's masked mean whatever `gradAccumulation` is.
 *
 * Asynchronous: each minibatch reads from the device twice with `data()` (the critic's loss sums
 * and gradient norm before its step; the actor's logged values, approx KL and gradient norm before
 * the KL decision), once with a fused critic optimiser (webgpu: the critic's step is decided on the
 * device, its values read with the actor's); nothing is read synchronously, so backends that
 * cannot (WebGPU in Node) run it too.
 */
export async function ppoUpdate(args: PpoUpdateArgs): Promise<UpdateDiagnostics> {
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
  args.policy.enterPhase?.('update');
  const totals = { pg: 0, entropy: 0, kl: 0, clipped: 0, value: 0, aNorm: 0, cNorm: 0, steps: 0 };
  let skipped = 0;
  let minibatches = 0;
  let tokensSeen = 0;
  // Minibatches whose critic / actor values were finite (the means are taken over those).
  let criticCount = 0;
  let actorCount = 0;
  let nonFiniteSkips = 0;
  let streak = args.nonFiniteStreak ?? 0;

  // The critic's passes (criticEpochs, unset: epochs) and the actor's share the permutations: a
  // pass that is one side's only steps that side.
  const criticEpochs = config.criticEpochs ?? config.epochs;
  const actorRole = args.actorLearns === false ? 'evaluate' : 'step';
  for (let epoch = 0; epoch < Math.max(config.epochs, criticEpochs); epoch++) {
    const perm = rng.permutation(size);
    const roles: MinibatchRoles = {
      critic: epoch < criticEpochs,
      actor: epoch < config.epochs ? actorRole : 'none',
    };
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
      const out = await minibatchStep(args, mbInputs, roles);
      const d = mbInputs.denominator;
      if (out.critic !== null) {
        totals.value += out.critic.valueSum / d;
        totals.cNorm += out.critic.norm;
        criticCount += 1;
      }
      if (out.actorNorm !== null) {
        totals.aNorm += out.actorNorm;
        totals.steps += 1;
      } else if (out.actor !== null && roles.actor === 'step') {
        skipped += 1;
      }
      if (out.actor !== null) {
        totals.pg += out.actor.pgSum / d;
        totals.entropy += out.actor.entropySum / d;
        totals.kl += out.actor.klSum / d;
        totals.clipped += out.actor.clippedSum / d;
        actorCount += 1;
      }
      minibatches += 1;
      if (out.nonFinite.length === 0) {
        streak = 0;
      } else {
        nonFiniteSkips += 1;
        streak += 1;
        if (streak >= config.maxNonFiniteSkips) {
          throw new NonFiniteUpdateError(
            streak,
            `epoch ${epoch + 1}, minibatch ${mb + 1}: ${out.nonFinite.join(', ')}`,
          );
        }
      }
    }
  }

  const oldValues = twosome
    ? Float64Array.from({ length: size }, (_, i) => buffer.values[buffer.actionOffsets[i]!]!)
    : buffer.values;
  const seconds = Math.max(1e-9, (performance.now() - start) / 1000);
  return {
    policyLoss: totals.pg / actorCount,
    valueLoss: totals.value / criticCount,
    entropy: totals.entropy / actorCount,
    approxKl: totals.kl / actorCount,
    clipFraction: totals.clipped / actorCount,
    explainedVariance: explainedVariance(advantages.returns, oldValues),
    actorGradNorm: totals.steps > 0 ? totals.aNorm / totals.steps : Number.NaN,
    criticGradNorm: totals.cNorm / criticCount,
    minibatches,
    skippedMinibatches: skipped,
    nonFiniteSkips,
    nonFiniteStreak: streak,
    actorSteps: totals.steps,
    seconds,
    tokensPerSec: tokensSeen / seconds,
  };
}
