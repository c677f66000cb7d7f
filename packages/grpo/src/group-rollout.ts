import { discountedReturn, type TextStep } from '@poad/envs-core';
import {
  type EpisodeSummary,
  PolicyContractError,
  type RolloutBuffer,
  RolloutBuilder,
  type RolloutStats,
  type SeededRng,
  selectActions,
  type TokenPolicy,
} from '@poad/ppo';
import type { GroupConfig } from './config.js';

/**
 * The vectorised environment a group rollout needs (`VecEnv` of `@poad/envs-core` has it): reset
 * every env with a seed given for it, and step only the envs still playing.
 */
export interface GroupEnvLike {
  readonly size: number;
  resetWith(seeds: readonly number[]): Promise<TextStep[]>;
  stepSome(actions: readonly (string | null)[]): Promise<(TextStep | null)[]>;
}

/** One episode of a group rollout. */
export interface GroupEpisode {
  /** The group k it belongs to (its start state is the group's). */
  readonly group: number;
  /** The buffer samples of its steps, in order. */
  readonly samples: readonly number[];
  /** Its rewards, one per step. */
  readonly rewards: readonly number[];
  /** Its states, one per step: the env's `info.state` when it gives one, else the observation. */
  readonly states: readonly string[];
  /** Ended by the env (terminated or truncated by it), not cut at `numSteps`. */
  readonly finished: boolean;
}

/** What {@link collectGroupRollout} played. */
export interface GroupRollout {
  /**
   * Every step of every episode as a ragged buffer of one "environment" (episode after episode,
   * `numEnvs` 1): prompts, action ids exactly as sampled, behaviour log-probs, candidates, rewards;
   * `terminated`/`truncated` mark each episode's last step (`truncated` also where it was cut).
   * Its `values` are zeros: there is no critic.
   */
  readonly buffer: RolloutBuffer;
  readonly episodes: readonly GroupEpisode[];
  /** The reset seed of each group. */
  readonly seeds: readonly number[];
  readonly stats: RolloutStats;
}

/** The state string GiGPO groups steps by: `info.state` when the env gives a string, else the observation. */
function stateOf(step: TextStep): string {
  const s = step.info.state;
  return typeof s === 'string' ? s : step.observation;
}

/**
 * Plays `groups` groups of `groupSize` episodes: env k·G + g is reset with group k's seed (drawn
 * from `rng`), so a group's episodes start from one state; every env steps until its episode
 * ends or has taken `numSteps` steps (then it is cut). Actions are chosen as in every rollout
 * (`selectActions` of `@poad/ppo`: the TWOSOME sampler on labels, generation on open spaces).
 * `stats.episodes` reports every episode: the env's summary of those it ended, and those cut as
 * not successful (`cut: true`), so the success rate is over all episodes played.
 */
export async function collectGroupRollout(args: {
  policy: TokenPolicy;
  env: GroupEnvLike;
  config: GroupConfig;
  rng: SeededRng;
}): Promise<GroupRollout> {
  const { policy, env, config, rng } = args;
  const G = config.groupSize;
  const n = config.groups * G;
  if (env.size !== n) {
    throw new PolicyContractError(
      'collectGroupRollout(env)',
      `expected groups × group-size = ${config.groups} × ${G} = ${n} environments, got ${env.size}.`,
    );
  }
  const start = performance.now();
  let actMs = 0;
  let envMs = 0;
  const seeds = Array.from({ length: config.groups }, () => rng.int(2 ** 31));
  const steps: TextStep[] = await env.resetWith(
    Array.from({ length: n }, (_, i) => seeds[Math.floor(i / G)]!),
  );
  // Per env: its steps' records, rewards and states.
  const records: Parameters<RolloutBuilder['push']>[0][][] = Array.from({ length: n }, () => []);
  const states: string[][] = Array.from({ length: n }, () => []);
  const finished = new Array<boolean>(n).fill(false);
  const running = new Array<boolean>(n).fill(true);
  const summaries: EpisodeSummary[] = [];
  let massSum = 0;
  let massCount = 0;
  policy.enterPhase?.('acting');
  for (let t = 0; t < config.numSteps; t++) {
    const active = running.flatMap((r, i) => (r ? [i] : []));
    if (active.length === 0) break;
    const t0 = performance.now();
    const sel = await selectActions(
      policy,
      active.map((i) => steps[i]!),
      {
        greedy: config.greedy,
        candidateNormalisation: config.candidateNormalisation,
        tokenSpace: config.tokenSpace,
        maxNewTokens: config.maxNewTokens,
        temperature: config.temperature,
        topK: config.topK,
        stopCheckEvery: config.stopCheckEvery,
        rng,
      },
    );
    actMs += performance.now() - t0;
    const actions: (string | null)[] = new Array(n).fill(null);
    active.forEach((i, j) => {
      actions[i] = sel.labels[j]!;
      states[i]!.push(stateOf(steps[i]!));
      const mass = sel.labelMass[j];
      if (mass !== undefined) {
        massSum += mass;
        massCount += 1;
      }
    });
    const t1 = performance.now();
    const out = await env.stepSome(actions);
    envMs += performance.now() - t1;
    active.forEach((i, j) => {
      const step = out[i]!;
      const done = step.terminated || step.truncated;
      const cut = !done && t === config.numSteps - 1;
      records[i]!.push({
        prompt: sel.prompts[j]!,
        action: sel.actionIds[j]!,
        logProbs: sel.logProbs[j]!,
        values: new Float32Array(sel.actionIds[j]!.length),
        reward: step.reward,
        terminated: step.terminated,
        truncated: step.truncated || cut,
        finalValue: Number.NaN,
        ...(sel.candidates[j] ? { candidates: sel.candidates[j] } : {}),
      });
      if (done) {
        running[i] = false;
        finished[i] = true;
        const ep = step.info.episode as Omit<EpisodeSummary, 'env'> | undefined;
        if (ep) summaries.push({ env: i, ...ep });
      } else {
        steps[i] = step;
        if (cut) {
          running[i] = false;
          // A cut episode is reported too, as not successful: leaving it out would count only the
          // episodes that ended within the limit, and overstate the rollout's success rate.
          const rewards = records[i]!.map((r) => r.reward);
          summaries.push({
            env: i,
            discountedReturn: discountedReturn(rewards, config.gamma),
            length: rewards.length,
            success: false,
            cut: true,
          });
        }
      }
    });
  }
  const total = records.reduce((a, r) => a + r.length, 0);
  const builder = new RolloutBuilder(total, 1);
  const episodes: GroupEpisode[] = [];
  let sample = 0;
  let tokens = 0;
  let rewardSum = 0;
  for (let i = 0; i < n; i++) {
    const samples: number[] = [];
    for (const r of records[i]!) {
      builder.push(r);
      samples.push(sample++);
      tokens += r.action.length;
      rewardSum += r.reward;
    }
    episodes.push({
      group: Math.floor(i / G),
      samples,
      rewards: records[i]!.map((r) => r.reward),
      states: states[i]!,
      finished: finished[i]!,
    });
  }
  const seconds = Math.max(1e-9, (performance.now() - start) / 1000);
  return {
    buffer: builder.build([0]),
    episodes,
    seeds,
    stats: {
      envSteps: total,
      actionTokens: tokens,
      seconds,
      envStepsPerSec: total / seconds,
      tokensPerSec: tokens / seconds,
      meanReward: total > 0 ? rewardSum / total : 0,
      labelMass: massCount > 0 ? massSum / massCount : null,
      episodes: summaries,
      episodesCut: summaries.filter((e) => e.cut).length,
      phaseSeconds: { act: actMs / 1000, values: 0, env: envMs / 1000 },
    },
  };
}
