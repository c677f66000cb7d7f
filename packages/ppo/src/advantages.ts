import { actionGae, archer, ntpo, poad } from '@poad/bellman';
import type { PpoConfig } from './config.js';
import type { RolloutBuffer } from './rollout-buffer.js';

/** Advantages and critic targets of a rollout. */
export interface Advantages {
  /** 'token': aligned with `buffer.actionIds`; 'action': one entry per sample (t·N + n). */
  readonly level: 'token' | 'action';
  /** GAE advantages. */
  readonly advantages: Float64Array;
  /** Returns R = A + V, the critic's regression targets. */
  readonly returns: Float64Array;
}

/**
 * A critic's values of a rollout: per token (aligned with `buffer.actionIds`, entry 0 of a sample
 * V(o)), of each truncated step's final observation (NaN elsewhere) and of each environment's
 * observation after the last step. The buffer holds the acting critic's; a target critic's come
 * with the rollout (`RolloutResult.targetValues`).
 */
export interface RolloutValues {
  /** V(o, w_<k) per action token. */
  readonly values: ArrayLike<number>;
  /** `[T·N]` V(final observation) of truncated steps (NaN elsewhere). */
  readonly finalValues: ArrayLike<number>;
  /** `[N]` V(o_T). */
  readonly bootstrapValues: ArrayLike<number>;
}

/** Consecutive steps of one environment that share a bootstrap (see {@link rolloutSegments}). */
export interface RolloutSegment {
  /** Buffer sample indices t·N + n, in time order. */
  steps: number[];
  /** Value of the observation after the last step (unused when that step is a done). */
  bootstrapValue: number;
}

/**
 * Splits environment n's T steps into segments that each end either at the rollout's end
 * (bootstrap V(o_T)) or after a truncated step (bootstrap V(final observation)); terminated
 * steps stay inside a segment as dones (no bootstrap).
 */
export function rolloutSegments(
  buffer: RolloutBuffer,
  n: number,
  truncAsTerm: boolean,
  critic: RolloutValues = buffer,
): RolloutSegment[] {
  const out: RolloutSegment[] = [];
  let steps: number[] = [];
  for (let t = 0; t < buffer.numSteps; t++) {
    const i = t * buffer.numEnvs + n;
    steps.push(i);
    const cut = !truncAsTerm && buffer.truncated[i] === 1 && buffer.terminated[i] === 0;
    if (cut) {
      out.push({ steps, bootstrapValue: critic.finalValues[i]! });
      steps = [];
    }
  }
  if (steps.length > 0) out.push({ steps, bootstrapValue: critic.bootstrapValues[n]! });
  return out;
}

/**
 * Advantages and returns from `@poad/bellman`, per environment and segment:
 * poad → BAD (γ_w = 1); ntpo → γ_w = `intraGamma ?? γ`; archer → NTPO with the next action's
 * last-token value as bootstrap; twosome → action-level GAE on V(o_t) (value column 0).
 *
 * Truncation: a truncated, non-terminated step ends its segment with bootstrap
 * V(final observation); with `truncationAsTermination` it is a done instead (original code).
 *
 * `critic`: whose values to use (default the buffer's, those of the critic that acted), e.g. a
 * target critic's for the returns the critic regresses on.
 */
export function computeAdvantages(
  buffer: RolloutBuffer,
  config: PpoConfig,
  critic: RolloutValues = buffer,
): Advantages {
  const level = config.algorithm === 'twosome' ? 'action' : 'token';
  const size = level === 'token' ? buffer.tokenCount : buffer.size;
  const advantages = new Float64Array(size);
  const returns = new Float64Array(size);
  const opts = { gamma: config.gamma, lambda: config.gaeLambda };
  // Token level: λ_w between an action's tokens (λ unless set).
  const tokenOpts =
    config.intraLambda === undefined ? opts : { ...opts, intraLambda: config.intraLambda };
  for (let n = 0; n < buffer.numEnvs; n++) {
    for (const seg of rolloutSegments(buffer, n, config.truncationAsTermination, critic)) {
      const rewards = seg.steps.map((i) => buffer.rewards[i]!);
      const dones = seg.steps.map(
        (i) =>
          buffer.terminated[i] === 1 ||
          (config.truncationAsTermination && buffer.truncated[i] === 1),
      );
      if (level === 'action') {
        const values = seg.steps.map((i) => critic.values[buffer.actionOffsets[i]!]!);
        const r = actionGae({ rewards, dones, values, bootstrapValue: seg.bootstrapValue }, opts);
        seg.steps.forEach((i, j) => {
          advantages[i] = r.advantages[j]!;
          returns[i] = r.returns[j]!;
        });
        continue;
      }
      const tokenCounts = seg.steps.map((i) => buffer.actionLength(i));
      const values: number[] = [];
      for (const i of seg.steps) {
        for (let k = buffer.actionOffsets[i]!; k < buffer.actionOffsets[i + 1]!; k++) {
          values.push(critic.values[k]!);
        }
      }
      const segment = { rewards, dones, tokenCounts, values, bootstrapValue: seg.bootstrapValue };
      const r =
        config.algorithm === 'poad'
          ? poad(segment, tokenOpts)
          : config.algorithm === 'archer'
            ? archer(segment, tokenOpts)
            : ntpo(segment, { ...tokenOpts, intraGamma: config.intraGamma ?? config.gamma });
      let o = 0;
      for (const i of seg.steps) {
        for (let k = buffer.actionOffsets[i]!; k < buffer.actionOffsets[i + 1]!; k++, o++) {
          advantages[k] = r.advantages[o]!;
          returns[k] = r.returns[o]!;
        }
      }
    }
  }
  return { level, advantages, returns };
}
