import type { TextStep } from '@poad/envs-core';
import * as tf from '@tensorflow/tfjs-core';
import type { RolloutValues } from './advantages.js';
import { concatInto } from './concat.js';
import type { PpoConfig, SAMPLER_FIELDS } from './config.js';
import { PolicyContractError } from './errors.js';
import { nextTokenSets, openActionSpaceError } from './label-tokens.js';
import { toPadded } from './padding.js';
import type { TokenBatch, TokenPolicy } from './policy.js';
import { readFloats } from './read-floats.js';
import type { SeededRng } from './rng.js';
import { type RolloutBuffer, RolloutBuilder, type StepRecord } from './rollout-buffer.js';
import { maxLength, type SelectedActions, selectActions } from './select-actions.js';
import type { VecEnvLike } from './vec-env-like.js';

/** A finished episode seen during a rollout (from `info.episode`). */
export interface EpisodeSummary {
  /** Environment index. */
  readonly env: number;
  /** The environment's discounted return. */
  readonly discountedReturn: number;
  /** Agent steps in the episode. */
  readonly length: number;
  /** Task success, when the environment reports it. */
  readonly success?: boolean;
  /**
   * True when the rollout stopped the episode at its step limit before the environment ended it
   * (group rollouts cut episodes at `numSteps`). Such an episode has not succeeded: its `success`
   * is false and its return is the discounted sum of the rewards it got.
   */
  readonly cut?: boolean;
}

/** Counters and throughput of one rollout. */
export interface RolloutStats {
  /** Environment steps taken (T·N). */
  readonly envSteps: number;
  /** Action tokens stored. */
  readonly actionTokens: number;
  /** Wall-clock seconds of the rollout. */
  readonly seconds: number;
  /** Environment steps per second. */
  readonly envStepsPerSec: number;
  /** Action tokens per second. */
  readonly tokensPerSec: number;
  /** Mean reward per step. */
  readonly meanReward: number;
  /**
   * Mean over restricted-action steps of the next-token probability on the valid labels' first
   * tokens (see `SelectedActions.labelMass`); null when every action space was open.
   */
  readonly labelMass: number | null;
  /** Episodes that ended during the rollout (in a group rollout, the cut ones too). */
  readonly episodes: readonly EpisodeSummary[];
  /**
   * Episodes the rollout cut at its step limit (`cut` in {@link episodes}); set by rollouts that
   * cut episodes (group rollouts, 0 included), absent where episodes run on across rollouts.
   */
  readonly episodesCut?: number;
  /**
   * Where the rollout's wall time went, in seconds: `act` choosing actions (generating or scoring
   * them with the policy, including the log-prob pass), `values` the critic's per-token values
   * (and the bootstrap values), `env` waiting for the environments' steps. The rest is
   * bookkeeping.
   */
  readonly phaseSeconds: { readonly act: number; readonly values: number; readonly env: number };
}

/** Result of {@link collectRollout}. */
export interface RolloutResult {
  /** The stored ragged trajectories. */
  readonly buffer: RolloutBuffer;
  /** Each environment's current step after the rollout (start of the next one). */
  readonly nextSteps: TextStep[];
  /** Counters and throughput. */
  readonly stats: RolloutStats;
  /**
   * With {@link CollectRolloutArgs.alsoValuedBy}: the values of every token, final observation and
   * bootstrap under those weights, laid out as the buffer's.
   */
  readonly targetValues?: RolloutValues;
}

/**
 * Another set of the critic's weights (a target critic's) that a rollout also values its steps
 * with: `within(f)` runs `f` with them in place of the critic's, and puts the critic's back after,
 * exactly as they were.
 */
export interface AlternateCritic {
  within<T>(f: () => Promise<T>): Promise<T>;
}

/**
 * The config fields a rollout reads: its length, the sampler and generation settings
 * ({@link SAMPLER_FIELDS}) and the truncation mode. `PpoConfig` and ETPO's config both have them.
 */
export type RolloutConfig = Pick<
  PpoConfig,
  (typeof SAMPLER_FIELDS)[number] | 'truncationAsTermination'
>;

/** Inputs of {@link collectRollout}. */
export interface CollectRolloutArgs {
  /** The acting policy (no gradients are taken). */
  readonly policy: TokenPolicy;
  /** The vectorised environment. */
  readonly env: VecEnvLike;
  /** The steps to act on (from `env.reset()` or the previous rollout's `nextSteps`). */
  readonly steps: readonly TextStep[];
  /** The rollout's settings (a trainer's config has them all). */
  readonly config: RolloutConfig;
  /** The trainer's seeded generator; advanced by every sample. */
  readonly rng: SeededRng;
  /**
   * Optional: other critic weights whose values of the same rows the rollout records too
   * (`RolloutResult.targetValues`), e.g. a target critic's. Nothing else changes: the buffer holds
   * the policy's own values and the generator is not touched.
   */
  readonly alsoValuedBy?: AlternateCritic;
}

/**
 * Values V(o) of a list of prompts, as a tensor of one value per prompt left on the device (calls
 * `policy.prepareValues` first); `allowed`: the first tokens of each prompt's valid labels
 * (`tokenSpace: 'labels'`), passed on to `policy.promptValues`. The caller disposes it.
 */
async function promptValuesTensor(
  policy: TokenPolicy,
  prompts: readonly Int32Array[],
  allowed?: readonly Int32Array[],
): Promise<tf.Tensor> {
  await policy.prepareValues?.(
    prompts,
    prompts.map(() => new Int32Array(0)),
  );
  const t = tf.tidy(() =>
    allowed ? policy.promptValues(prompts, allowed) : policy.promptValues(prompts),
  );
  if (t.size !== prompts.length) {
    t.dispose();
    throw new PolicyContractError(
      'policy.promptValues',
      `expected ${prompts.length} values, got ${t.size}.`,
    );
  }
  return t;
}

/** {@link promptValuesTensor}, read back as numbers. */
export async function promptValuesOf(
  policy: TokenPolicy,
  prompts: readonly Int32Array[],
  allowed?: readonly Int32Array[],
): Promise<Float64Array> {
  if (prompts.length === 0) return new Float64Array(0);
  const t = await promptValuesTensor(policy, prompts, allowed);
  try {
    return Float64Array.from((await t.data()) as Float32Array);
  } finally {
    t.dispose();
  }
}

/**
 * Collects `config.numSteps` steps from every environment.
 *
 * Restricted action spaces use the TWOSOME sampler for every algorithm: each valid label is
 * scored as a continuation of the prompt, its summed token log-prob is divided by its word or
 * token count, and an action is sampled from the softmax (or taken greedily). The chosen label's
 * in-context ids and per-token log-probs from that same scoring pass are stored. Open action
 * spaces generate tokens with `policy.generate`, then a teacher-forced pass records their
 * temperature-1 log-probs. A critic pass records V(o, w_<k) per token.
 *
 * Truncated (and not terminated) steps are bootstrapped from V(info.finalObservation) unless
 * `config.truncationAsTermination` is set.
 */
export async function collectRollout(args: CollectRolloutArgs): Promise<RolloutResult> {
  const pending: PendingValues[] = [];
  try {
    return await collect(args, pending);
  } finally {
    tf.dispose(pending.map((p) => p.tensor));
  }
}

/**
 * The rollout of a trainer whose environments continue across iterations (PPO, ETPO): from the
 * trainer's current steps (the environments reset first when it has none), which it leaves at
 * the rollout's `nextSteps`, as in the original runners (no reset between iterations).
 */
export async function continueRollout(trainer: {
  readonly policy: TokenPolicy;
  readonly env: VecEnvLike;
  readonly config: RolloutConfig;
  readonly rng: SeededRng;
  steps: TextStep[] | null;
  /** Critic weights whose values the rollout records too (see `CollectRolloutArgs.alsoValuedBy`). */
  readonly targetCritic?: AlternateCritic | null;
}): Promise<RolloutResult> {
  if (trainer.steps === null) trainer.steps = await trainer.env.reset();
  const { policy, env, config, rng } = trainer;
  const alsoValuedBy = trainer.targetCritic ?? undefined;
  const rollout = await collectRollout({
    policy,
    env,
    steps: trainer.steps,
    config,
    rng,
    ...(alsoValuedBy ? { alsoValuedBy } : {}),
  });
  trainer.steps = rollout.nextSteps;
  return rollout;
}

/** A step's padded `[N, width]` values, still on the device, and the array they are read into. */
interface PendingValues {
  readonly tensor: tf.Tensor;
  readonly into: Float32Array;
}

/**
 * Reads every step's values in one batch (one host read on webgpu) into their arrays, which the
 * step records already hold, and disposes the tensors.
 */
async function readPending(pending: PendingValues[]): Promise<void> {
  const all = pending.splice(0);
  try {
    const data = await readFloats(all.map((p) => p.tensor));
    all.forEach((p, i) => {
      p.into.set(data[i]!);
    });
  } finally {
    tf.dispose(all.map((p) => p.tensor));
  }
}

/** The critic's values of `batch`, prepared, evaluated and padded to `[N, batch.width]`. */
async function paddedValues(policy: TokenPolicy, batch: TokenBatch): Promise<tf.Tensor> {
  await policy.prepareValues?.(batch.prompts, batch.actions);
  return tf.tidy(() => toPadded(policy.tokenValues(batch), batch, 'policy.tokenValues'));
}

/** A step whose values are computed when the rollout ends (`valuesAtRolloutEnd`). */
interface DeferredValues {
  readonly batch: TokenBatch;
  /** The step's padded `[N, batch.width]` values, filled after the read. */
  readonly into: Float32Array;
}

/**
 * The values of every deferred step in one batch: their rows are prepared and evaluated at once
 * and the padded result joins `pending`; the returned function copies it into each step's array
 * once `pending` has been read.
 */
async function deferredValues(
  policy: TokenPolicy,
  steps: DeferredValues[],
  pending: PendingValues[],
): Promise<() => void> {
  if (steps.length === 0) return () => {};
  const prompts = steps.flatMap((s) => s.batch.prompts);
  const actions = steps.flatMap((s) => s.batch.actions);
  const width = Math.max(...steps.map((s) => s.batch.width));
  const allowed = steps.every((s) => s.batch.allowed)
    ? steps.flatMap((s) => s.batch.allowed!)
    : undefined;
  const batch: TokenBatch = { prompts, actions, width, ...(allowed ? { allowed } : {}) };
  const all = new Float32Array(prompts.length * width);
  pending.push({ tensor: await paddedValues(policy, batch), into: all });
  return () => {
    let row = 0;
    for (const s of steps) {
      const w = s.batch.width;
      for (let i = 0; i < s.batch.prompts.length; i++, row++) {
        s.into.set(all.subarray(row * width, row * width + w), i * w);
      }
    }
  };
}

/** One rollout: every step of every environment, then the values read back and the buffer built. */
async function collect(args: CollectRolloutArgs, pending: PendingValues[]): Promise<RolloutResult> {
  const rollout = new RolloutInProgress(args, pending);
  for (let t = 0; t < args.config.numSteps; t++) await rollout.step(t);
  return rollout.finish();
}

/** One step's critic values: padded `[N, width]`, filled from the device when the rollout ends. */
interface StepValues {
  readonly values: Float32Array;
  readonly width: number;
}

/**
 * A rollout being collected: what it has stored and counted so far. {@link step} runs one step of
 * every environment in four phases (act, record the critic's values, step the environments and
 * value the final observations of the truncated episodes, store); {@link finish} values what was
 * deferred and the bootstrap observations, reads every value in one batch and builds the buffer.
 */
class RolloutInProgress {
  private readonly policy: TokenPolicy;
  private readonly env: VecEnvLike;
  private readonly config: RolloutConfig;
  private readonly rng: SeededRng;
  /** The other critic's weights (`alsoValuedBy`), if any. */
  private readonly other: AlternateCritic | undefined;
  private readonly n: number;
  /** The label-restricted token space: critics may need each position's allowed ids. */
  private readonly labelSpace: boolean;
  private readonly start: number;
  private readonly builder: RolloutBuilder;
  private readonly episodes: EpisodeSummary[] = [];
  private current: TextStep[];
  /** Steps whose values are computed when the rollout ends (`valuesAtRolloutEnd`). */
  private readonly deferred: DeferredValues[] = [];
  // The other critic's values (alsoValuedBy): per step as the policy's, and each sample's view.
  private readonly otherDeferred: DeferredValues[] = [];
  private readonly otherRows: Float32Array[] = [];
  private readonly otherFinal: Float64Array;
  private rewardSum = 0;
  private tokens = 0;
  private massSum = 0;
  private massCount = 0;
  /** Milliseconds spent in each phase (`RolloutStats.phaseSeconds`). */
  private readonly ms = { act: 0, values: 0, env: 0 };

  constructor(
    args: CollectRolloutArgs,
    /** Values on the device until the rollout's one read (the caller disposes what is left). */
    private readonly pending: PendingValues[],
  ) {
    this.policy = args.policy;
    this.env = args.env;
    this.config = args.config;
    this.rng = args.rng;
    this.other = args.alsoValuedBy;
    this.n = args.env.size;
    if (args.steps.length !== this.n) {
      throw new PolicyContractError(
        'collectRollout(steps)',
        `expected ${this.n} steps, got ${args.steps.length}.`,
      );
    }
    this.start = performance.now();
    this.builder = new RolloutBuilder(this.config.numSteps, this.n);
    this.current = [...args.steps];
    this.otherFinal = new Float64Array(this.config.numSteps * this.n).fill(Number.NaN);
    this.labelSpace = this.config.tokenSpace === 'labels';
  }

  /** Step `t` of every environment. */
  async step(t: number): Promise<void> {
    const selected = await this.act();
    const values = await this.recordValues(selected);
    const next = await this.stepEnvs(selected.labels);
    const finalValue = await this.finalValues(next, t);
    checkStepResults(next, t);
    this.store(selected, values, next, finalValue);
    this.current = next;
  }

  /** Acting: one action per environment (see `selectActions`), and the label mass it saw. */
  private async act(): Promise<SelectedActions> {
    const actStart = performance.now();
    this.policy.enterPhase?.('acting');
    const selected = await selectActions(this.policy, this.current, {
      ...this.config,
      rng: this.rng,
    });
    this.ms.act += performance.now() - actStart;
    for (const m of selected.labelMass) {
      if (m === undefined) continue;
      this.massSum += m;
      this.massCount++;
    }
    return selected;
  }

  /**
   * The critic's V(o, w_<k) per token of the chosen actions (and the other critic's). The values
   * stay on the device until the rollout ends, and come back then in one read; the step records
   * hold views of the returned array, filled before the buffer is built. A policy that asks for it
   * gets one batch of every step's rows at the end instead of one batch per step.
   */
  private async recordValues(selected: SelectedActions): Promise<StepValues> {
    const valuesStart = performance.now();
    const { policy, other, n } = this;
    const { prompts, actionIds, candidates } = selected;
    policy.enterPhase?.('values');
    const width = maxLength(actionIds);
    const valueBatch = {
      prompts,
      actions: actionIds,
      width,
      ...(this.labelSpace ? { allowed: chosenTokenSets(candidates) } : {}),
    };
    const vals = new Float32Array(n * width);
    if (policy.valuesAtRolloutEnd) {
      this.deferred.push({ batch: valueBatch, into: vals });
    } else {
      this.pending.push({ tensor: await paddedValues(policy, valueBatch), into: vals });
    }
    const otherVals = other ? new Float32Array(n * width) : null;
    if (other && otherVals) {
      if (policy.valuesAtRolloutEnd) {
        this.otherDeferred.push({ batch: valueBatch, into: otherVals });
      } else {
        const tensor = await other.within(() => paddedValues(policy, valueBatch));
        this.pending.push({ tensor, into: otherVals });
      }
      for (let i = 0; i < n; i++)
        this.otherRows.push(otherVals.subarray(i * width, i * width + actionIds[i]!.length));
    }
    this.ms.values += performance.now() - valuesStart;
    return { values: vals, width };
  }

  /** The environments' next steps after `labels`. */
  private async stepEnvs(labels: readonly string[]): Promise<TextStep[]> {
    const envStart = performance.now();
    const next = await this.env.step(labels);
    this.ms.env += performance.now() - envStart;
    if (next.length !== this.n) {
      throw new PolicyContractError('env.step', `expected ${this.n} steps, got ${next.length}.`);
    }
    return next;
  }

  /**
   * Bootstrap values of the episodes truncated at step `t`: V(info.finalObservation) for each
   * (NaN for the others, and for all with `truncationAsTermination`); the other critic's go to
   * `otherFinal`.
   */
  private async finalValues(next: readonly TextStep[], t: number): Promise<Float64Array> {
    const valuesStart = performance.now();
    const { policy, other, n, labelSpace } = this;
    const truncIdx = this.config.truncationAsTermination
      ? []
      : next.flatMap((s, i) => (s.truncated && !s.terminated ? [i] : []));
    const finalPrompts = await Promise.all(
      truncIdx.map(async (i) => {
        const fo = next[i]!.info.finalObservation;
        if (typeof fo !== 'string') {
          throw new PolicyContractError(
            'env.step',
            `env ${i} was truncated without info.finalObservation; use an auto-resetting VecEnv or set truncationAsTermination.`,
          );
        }
        return await policy.encodePrompt(fo);
      }),
    );
    const finalAllowed = labelSpace
      ? await firstTokenSets(
          policy,
          truncIdx.map((i) => next[i]!.info.finalObservation as string),
          truncIdx.map((i) => next[i]!.info.finalActions as readonly string[] | null),
        )
      : undefined;
    const finalVals = await promptValuesOf(policy, finalPrompts, finalAllowed);
    if (other && truncIdx.length > 0) {
      const v = await other.within(() => promptValuesOf(policy, finalPrompts, finalAllowed));
      truncIdx.forEach((i, j) => {
        this.otherFinal[t * n + i] = v[j]!;
      });
    }
    this.ms.values += performance.now() - valuesStart;
    const finalValue = new Float64Array(n).fill(Number.NaN);
    truncIdx.forEach((i, j) => {
      finalValue[i] = finalVals[j]!;
    });
    return finalValue;
  }

  /** One step record per environment into the builder, and the episodes that ended. */
  private store(
    selected: SelectedActions,
    { values, width }: StepValues,
    next: readonly TextStep[],
    finalValue: Float64Array,
  ): void {
    const { prompts, actionIds, logProbs, candidates } = selected;
    for (let i = 0; i < this.n; i++) {
      const s = next[i]!;
      const len = actionIds[i]!.length;
      this.tokens += len;
      this.rewardSum += s.reward;
      const rec: StepRecord = {
        prompt: prompts[i]!,
        action: actionIds[i]!,
        logProbs: logProbs[i]!,
        values: values.subarray(i * width, i * width + len),
        reward: s.reward,
        terminated: s.terminated,
        truncated: s.truncated,
        finalValue: finalValue[i]!,
        ...(candidates[i] ? { candidates: candidates[i] } : {}),
      };
      this.builder.push(rec);
      const ep = s.info.episode as
        | { discountedReturn?: number; length?: number; success?: boolean }
        | undefined;
      if ((s.terminated || s.truncated) && ep !== undefined) {
        this.episodes.push({
          env: i,
          discountedReturn: Number(ep.discountedReturn),
          length: Number(ep.length),
          ...(ep.success === undefined ? {} : { success: Boolean(ep.success) }),
        });
      }
    }
  }

  /**
   * The end of the rollout: the deferred steps' values and V(o_T) of every environment (and the
   * other critic's) join the pending values, all are read in one batch, and the buffer is built.
   */
  async finish(): Promise<RolloutResult> {
    const bootStart = performance.now();
    const { policy, other, n, pending, current, labelSpace } = this;
    policy.enterPhase?.('values');
    const scatterDeferred = await deferredValues(policy, this.deferred, pending);
    const scatterOther = other
      ? await other.within(() => deferredValues(policy, this.otherDeferred, pending))
      : () => {};
    // V(o_T) of every environment, read with the rollout's step values in one batch.
    const bootPrompts = await Promise.all(current.map((s) => policy.encodePrompt(s.observation)));
    const bootAllowed = labelSpace
      ? await firstTokenSets(
          policy,
          current.map((s) => s.observation),
          current.map((s) => s.actions),
        )
      : undefined;
    const boot = new Float32Array(n);
    if (n > 0) {
      pending.push({
        tensor: await promptValuesTensor(policy, bootPrompts, bootAllowed),
        into: boot,
      });
    }
    const otherBoot = new Float32Array(n);
    if (other && n > 0) {
      const tensor = await other.within(() => promptValuesTensor(policy, bootPrompts, bootAllowed));
      pending.push({ tensor, into: otherBoot });
    }
    await readPending(pending);
    scatterDeferred();
    scatterOther();
    this.ms.values += performance.now() - bootStart;
    const buffer = this.builder.build(Float64Array.from(boot));
    return {
      buffer,
      nextSteps: current,
      ...(other
        ? {
            targetValues: {
              values: concatInto(new Float32Array(buffer.tokenCount), this.otherRows),
              finalValues: this.otherFinal,
              bootstrapValues: Float64Array.from(otherBoot),
            },
          }
        : {}),
      stats: this.stats(),
    };
  }

  /** The rollout's counters and throughput. */
  private stats(): RolloutStats {
    const seconds = Math.max(1e-9, (performance.now() - this.start) / 1000);
    const envSteps = this.config.numSteps * this.n;
    const { tokens, ms } = this;
    return {
      envSteps,
      actionTokens: tokens,
      seconds,
      envStepsPerSec: envSteps / seconds,
      tokensPerSec: tokens / seconds,
      meanReward: this.rewardSum / envSteps,
      labelMass: this.massCount ? this.massSum / this.massCount : null,
      episodes: this.episodes,
      phaseSeconds: { act: ms.act / 1000, values: ms.values / 1000, env: ms.env / 1000 },
    };
  }
}

/**
 * What enters the buffer must be numbers a learner can use (VecEnv of @poad/envs-core already
 * checks more, naming the env id; this covers any VecEnvLike).
 */
function checkStepResults(next: readonly TextStep[], t: number): void {
  next.forEach((s, i) => {
    if (typeof s.reward !== 'number' || !Number.isFinite(s.reward)) {
      throw new PolicyContractError(
        'env.step',
        `env ${i} returned the reward ${String(s.reward)} at rollout step ${t + 1}; rewards must be finite numbers. Fix the environment.`,
      );
    }
    if (typeof s.terminated !== 'boolean' || typeof s.truncated !== 'boolean') {
      throw new PolicyContractError(
        'env.step',
        `env ${i} returned terminated ${String(s.terminated)} and truncated ${String(s.truncated)} at rollout step ${t + 1}; both must be booleans. Fix the environment.`,
      );
    }
  });
}

/** `tokenSpace: 'labels'`: the allowed ids at every token of each row's chosen label. */
function chosenTokenSets(candidates: readonly (StepRecord['candidates'] | undefined)[]) {
  return candidates.map((c) => {
    if (!c) throw openActionSpaceError('this environment');
    return nextTokenSets(c.ids)[c.chosen]!;
  });
}

/**
 * `tokenSpace: 'labels'`: the distinct first tokens of each observation's valid labels (what may
 * start its next action); an empty set for an observation that offers no label (no restriction).
 */
async function firstTokenSets(
  policy: TokenPolicy,
  observations: readonly string[],
  labels: readonly (readonly string[] | null | undefined)[],
): Promise<Int32Array[]> {
  return Promise.all(
    observations.map(async (o, i) => {
      const ls = labels[i];
      if (ls === null) throw openActionSpaceError('this environment');
      if (!ls || ls.length === 0) return new Int32Array(0);
      const ids = await policy.encodeContinuations(o, ls);
      return Int32Array.from(new Set(ids.map((c) => c[0]!)));
    }),
  );
}
