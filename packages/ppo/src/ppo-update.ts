import * as tf from '@tensorflow/tfjs-core';
import { actionLevelLosses } from './action-losses.js';
import { explainedVariance, type UpdateDiagnostics } from './diagnostics.js';
import { PolicyContractError, PpoConfigError } from './errors.js';
import { gradNorm } from './grad-clip.js';
import type { LoggedSums, LossFn, MinibatchLosses, PpoUpdateArgs } from './minibatch.js';
import { deviceGate } from './multi-tensor.js';
import { NonFiniteStreak } from './non-finite-streak.js';
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

/** The logged sums of one minibatch: the critic's, the actor's, and the critic's within the actor's. */
interface MinibatchSums {
  readonly value: LoggedSums;
  readonly actor: LoggedSums;
  /** The critic's sums of the actor's loss with criticGradToActor (not reported). */
  readonly scratch: LoggedSums;
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
  const sums: MinibatchSums = { value: noLogged(), actor: noLogged(), scratch: noLogged() };
  const owned: (tf.Tensor | null)[] = [];
  try {
    const critic = roles.critic ? await criticStep(args, losses, sums.value, owned) : null;
    const actor = actorGradients(args, losses, roles.actor, sums, owned);
    // The fused critic's values were not read before its step: they come with the actor's.
    const criticUnread = critic !== null && critic.read === null;
    const read =
      roles.actor !== 'none' || criticUnread
        ? await readGroups({
            pg: sums.actor.pg,
            entropy: sums.actor.entropy,
            kl: sums.actor.kl,
            clipped: sums.actor.clipped,
            norm: actor.norm ? [actor.norm] : [],
            criticValue: criticUnread ? sums.value.pg : [],
            criticNorm: criticUnread ? [critic.norm] : [],
          })
        : null;
    const criticRead =
      critic === null
        ? null
        : (critic.read ?? { value: read!.criticValue, norm: read!.criticNorm });
    const c = criticOutcome(criticRead, args.criticOptimizer);
    if (roles.actor === 'none' || !read) {
      return { critic: c.outcome, actor: null, actorNorm: null, nonFinite: c.nonFinite };
    }
    const a = actorOutcome(args, losses, roles.actor, read, actor);
    return {
      critic: c.outcome,
      actor: a.actor,
      actorNorm: a.actorNorm,
      nonFinite: [...c.nonFinite, ...a.nonFinite],
    };
  } finally {
    disposeAll(owned);
    for (const list of [sums.value, sums.actor, sums.scratch]) {
      disposeAll([...list.pg, ...list.entropy, ...list.kl, ...list.clipped]);
    }
  }
}

/** The critic's loss sums and gradient norm, as read from the device. */
interface CriticRead {
  readonly value: Float32Array;
  readonly norm: Float32Array;
}

/**
 * The critic's gradients over the chunks (their value-loss sums go to `logged`) and its step. A
 * fused optimiser steps at once, its norm gated on the device by the loss sums (`deviceGate`),
 * and its values are read later (`read` null); any other reads the loss sums and the norm first
 * and steps only when they are finite. Every tensor made here is pushed onto `owned`.
 */
async function criticStep(
  args: PpoUpdateArgs,
  losses: MinibatchLosses,
  logged: LoggedSums,
  owned: (tf.Tensor | null)[],
): Promise<{ read: CriticRead | null; norm: tf.Scalar }> {
  const { config, policy } = args;
  const criticOpt = args.criticOptimizer;
  const cGrads = accumulate(losses.valueFns, policy.criticVariables, logged);
  owned.push(...cGrads);
  const norm = gradNorm(cGrads);
  owned.push(norm);
  if (criticOpt.fused) {
    const gate = deviceGate(norm, logged.pg);
    owned.push(gate);
    criticOpt.step(cGrads, { norm: gate, maxNorm: config.criticMaxGradNorm });
    return { read: null, norm };
  }
  const read = await readGroups({ value: logged.pg, norm: [norm] });
  const bad = nonFiniteOf({
    'critic loss': sumOf(read.value),
    'critic gradient norm': read.norm[0]!,
  });
  if (bad.length === 0) {
    criticOpt.step(cGrads, { norm: read.norm[0]!, maxNorm: config.criticMaxGradNorm });
  }
  return { read, norm };
}

/**
 * The actor's side before the read: with role 'step', its gradients over the chunks and their
 * norm (pushed onto `owned`); with 'evaluate', its losses alone, for their logged sums (kept
 * scalars, which outlive the tidy); with 'none', nothing.
 */
function actorGradients(
  args: PpoUpdateArgs,
  losses: MinibatchLosses,
  role: MinibatchRoles['actor'],
  sums: MinibatchSums,
  owned: (tf.Tensor | null)[],
): { grads: (tf.Tensor | null)[]; norm: tf.Scalar | null } {
  if (role === 'step') {
    const fns = actorLossFns(losses, args.config.criticGradToActor === true, sums.scratch);
    const grads = accumulate(fns, args.policy.actorVariables, sums.actor);
    owned.push(...grads);
    const norm = gradNorm(grads);
    owned.push(norm);
    return { grads, norm };
  }
  if (role === 'evaluate') {
    for (const f of losses.policyFns) {
      tf.tidy(() => {
        f(sums.actor);
      });
    }
  }
  return { grads: [], norm: null };
}

/**
 * The critic's part of the outcome from its values (null: it had no step). A fused step whose
 * values were not finite was skipped on the device: the optimiser takes it back from its count.
 */
function criticOutcome(
  read: CriticRead | null,
  criticOpt: PpoUpdateArgs['criticOptimizer'],
): { outcome: MinibatchOutcome['critic']; nonFinite: string[] } {
  if (read === null) return { outcome: null, nonFinite: [] };
  const norm = read.norm[0]!;
  const valueSum = sumOf(read.value);
  const nonFinite = nonFiniteOf({ 'critic loss': valueSum, 'critic gradient norm': norm });
  if (criticOpt.fused && nonFinite.length > 0) criticOpt.stepSkippedOnDevice();
  return { outcome: nonFinite.length === 0 ? { valueSum, norm } : null, nonFinite };
}

/**
 * The actor's part of the outcome from the read, and its step: taken when it steps in this
 * minibatch, its values are finite and approx KL is within `targetKl`.
 */
function actorOutcome(
  args: PpoUpdateArgs,
  losses: MinibatchLosses,
  role: MinibatchRoles['actor'],
  read: Record<'pg' | 'entropy' | 'kl' | 'clipped' | 'norm', Float32Array>,
  gradients: { grads: (tf.Tensor | null)[]; norm: tf.Scalar | null },
): Pick<MinibatchOutcome, 'actor' | 'actorNorm' | 'nonFinite'> {
  const { config } = args;
  const actor = {
    pgSum: sumOf(read.pg),
    entropySum: sumOf(read.entropy),
    klSum: sumOf(read.kl),
    clippedSum: sumOf(read.clipped),
  };
  const stepping = role === 'step';
  const actorNorm = stepping ? read.norm[0]! : Number.NaN;
  const nonFinite = nonFiniteOf({
    'policy loss': actor.pgSum,
    entropy: actor.entropySum,
    'approx KL': actor.klSum,
    ...(stepping ? { 'actor gradient norm': actorNorm } : {}),
  });
  const skip =
    !stepping ||
    nonFinite.length > 0 ||
    (config.targetKl > 0 && actor.klSum / losses.denominator > config.targetKl);
  if (!skip) {
    const opt = args.actorOptimizer;
    opt.step(gradients.grads, {
      norm: opt.fused ? gradients.norm! : actorNorm,
      maxNorm: config.maxGradNorm,
    });
  }
  return {
    actor: nonFinite.length === 0 ? actor : null,
    actorNorm: skip ? null : actorNorm,
    nonFinite,
  };
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
  const { config, rng } = args;
  const start = performance.now();
  const { size, mbSize, chunkSize, twosome } = minibatchShape(args);
  args.policy.enterPhase?.('update');
  const totals = new UpdateTotals(args.nonFiniteStreak ?? 0, config.maxNonFiniteSkips);
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
      const losses = twosome
        ? actionLevelLosses(args, idx, chunks)
        : tokenLevelLosses(args, idx, chunks);
      const out = await minibatchStep(args, losses, roles);
      totals.add(out, losses, roles, `epoch ${epoch + 1}, minibatch ${mb + 1}`);
    }
  }
  return totals.diagnostics(args, twosome, start);
}

/**
 * The sizes of an update's minibatches (⌊T·N / numMinibatches⌋ samples, in `gradAccumulation`
 * chunks) and its level (action level for twosome), checked against the config and the advantages.
 */
function minibatchShape(args: PpoUpdateArgs): {
  size: number;
  mbSize: number;
  chunkSize: number;
  twosome: boolean;
} {
  const { buffer, advantages, config } = args;
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
  return { size, mbSize, chunkSize: mbSize / config.gradAccumulation, twosome };
}

/**
 * What an update's minibatches add up to: the loss and norm sums (their means are taken over the
 * minibatches whose critic / actor values were finite), the counts, and the non-finite streak,
 * which throws `NonFiniteUpdateError` once it reaches `maxNonFiniteSkips`.
 */
class UpdateTotals {
  private readonly sums = { pg: 0, entropy: 0, kl: 0, clipped: 0, value: 0, aNorm: 0, cNorm: 0 };
  private actorSteps = 0;
  private skipped = 0;
  private minibatches = 0;
  private tokensSeen = 0;
  private criticCount = 0;
  private actorCount = 0;
  private readonly streak: NonFiniteStreak;

  constructor(streak: number, maxNonFiniteSkips: number) {
    this.streak = new NonFiniteStreak(streak, maxNonFiniteSkips);
  }

  /** Adds one minibatch's outcome; `where` names it in the error. */
  add(out: MinibatchOutcome, losses: MinibatchLosses, roles: MinibatchRoles, where: string): void {
    const { sums } = this;
    const d = losses.denominator;
    this.tokensSeen += losses.tokens;
    if (out.critic !== null) {
      sums.value += out.critic.valueSum / d;
      sums.cNorm += out.critic.norm;
      this.criticCount += 1;
    }
    if (out.actorNorm !== null) {
      sums.aNorm += out.actorNorm;
      this.actorSteps += 1;
    } else if (out.actor !== null && roles.actor === 'step') {
      this.skipped += 1;
    }
    if (out.actor !== null) {
      sums.pg += out.actor.pgSum / d;
      sums.entropy += out.actor.entropySum / d;
      sums.kl += out.actor.klSum / d;
      sums.clipped += out.actor.clippedSum / d;
      this.actorCount += 1;
    }
    this.minibatches += 1;
    if (out.nonFinite.length === 0) this.streak.finite();
    else this.streak.skipped(() => `${where}: ${out.nonFinite.join(', ')}`);
  }

  /** The update's diagnostics (explained variance of the rollout's returns by its old values). */
  diagnostics(args: PpoUpdateArgs, twosome: boolean, start: number): UpdateDiagnostics {
    const { buffer, advantages } = args;
    const { sums, actorCount, criticCount } = this;
    const oldValues = twosome
      ? Float64Array.from(
          { length: buffer.size },
          (_, i) => buffer.values[buffer.actionOffsets[i]!]!,
        )
      : buffer.values;
    const seconds = Math.max(1e-9, (performance.now() - start) / 1000);
    return {
      policyLoss: sums.pg / actorCount,
      valueLoss: sums.value / criticCount,
      entropy: sums.entropy / actorCount,
      approxKl: sums.kl / actorCount,
      clipFraction: sums.clipped / actorCount,
      explainedVariance: explainedVariance(advantages.returns, oldValues),
      actorGradNorm: this.actorSteps > 0 ? sums.aNorm / this.actorSteps : Number.NaN,
      criticGradNorm: sums.cNorm / criticCount,
      minibatches: this.minibatches,
      skippedMinibatches: this.skipped,
      nonFiniteSkips: this.streak.skips,
      nonFiniteStreak: this.streak.length,
      actorSteps: this.actorSteps,
      seconds,
      tokensPerSec: this.tokensSeen / seconds,
    };
  }
}
