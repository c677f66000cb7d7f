import { discountedReturn, type TextStep } from '@poad/envs-core';
import {
  type EpisodeSummary,
  PolicyContractError,
  type RolloutBuffer,
  RolloutBuilder,
  type RolloutStats,
  type SeededRng,
  type SelectedActions,
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

/** One step's record of one episode, as the buffer builder takes it. */
type StepRecord = Parameters<RolloutBuilder['push']>[0];

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
  const { env, config, rng } = args;
  const G = config.groupSize;
  const n = config.groups * G;
  if (env.size !== n) {
    throw new PolicyContractError(
      'collectGroupRollout(env)',
      `expected groups × group-size = ${config.groups} × ${G} = ${n} environments, got ${env.size}.`,
    );
  }
  const start = performance.now();
  const seeds = Array.from({ length: config.groups }, () => rng.int(2 ** 31));
  const steps: TextStep[] = await env.resetWith(
    Array.from({ length: n }, (_, i) => seeds[Math.floor(i / G)]!),
  );
  const play = new GroupPlay(args, steps);
  args.policy.enterPhase?.('acting');
  for (let t = 0; t < config.numSteps; t++) {
    if (!(await play.step(t))) break;
  }
  return play.finish(seeds, start);
}

/**
 * A group rollout being played: per env its step records, states, and whether it still plays or
 * ended; the summaries of the episodes over so far, the label mass seen and the time spent.
 * {@link step} acts for the envs still playing, steps them and records what they did;
 * {@link finish} lays the episodes out as one buffer.
 */
class GroupPlay {
  private readonly policy: TokenPolicy;
  private readonly env: GroupEnvLike;
  private readonly config: GroupConfig;
  private readonly rng: SeededRng;
  private readonly n: number;
  /** Per env: its steps' records and states, in order. */
  private readonly records: StepRecord[][];
  private readonly states: string[][];
  /** Per env: ended by the env / still playing. */
  private readonly finished: boolean[];
  private readonly running: boolean[];
  private readonly summaries: EpisodeSummary[] = [];
  private massSum = 0;
  private massCount = 0;
  /** Milliseconds spent choosing actions and waiting for the envs. */
  private readonly ms = { act: 0, env: 0 };

  constructor(
    args: { policy: TokenPolicy; env: GroupEnvLike; config: GroupConfig; rng: SeededRng },
    /** Each env's current step. */
    private readonly steps: TextStep[],
  ) {
    this.policy = args.policy;
    this.env = args.env;
    this.config = args.config;
    this.rng = args.rng;
    const n = args.env.size;
    this.n = n;
    this.records = Array.from({ length: n }, () => []);
    this.states = Array.from({ length: n }, () => []);
    this.finished = new Array<boolean>(n).fill(false);
    this.running = new Array<boolean>(n).fill(true);
  }

  /** Step `t` of every env still playing; false when none was (the rollout is over). */
  async step(t: number): Promise<boolean> {
    const active = this.running.flatMap((r, i) => (r ? [i] : []));
    if (active.length === 0) return false;
    const sel = await this.act(active);
    const actions: (string | null)[] = new Array(this.n).fill(null);
    active.forEach((i, j) => {
      actions[i] = sel.labels[j]!;
    });
    const t1 = performance.now();
    const out = await this.env.stepSome(actions);
    this.ms.env += performance.now() - t1;
    active.forEach((i, j) => {
      this.record(i, j, sel, out[i]!, t);
    });
    return true;
  }

  /**
   * The actions of the envs `active` (see `selectActions`); each one's state is recorded and the
   * label mass counted.
   */
  private async act(active: readonly number[]): Promise<SelectedActions> {
    const { config, steps } = this;
    const t0 = performance.now();
    const sel = await selectActions(
      this.policy,
      active.map((i) => steps[i]!),
      {
        greedy: config.greedy,
        candidateNormalisation: config.candidateNormalisation,
        tokenSpace: config.tokenSpace,
        maxNewTokens: config.maxNewTokens,
        temperature: config.temperature,
        topK: config.topK,
        stopCheckEvery: config.stopCheckEvery,
        rng: this.rng,
      },
    );
    this.ms.act += performance.now() - t0;
    active.forEach((i, j) => {
      this.states[i]!.push(stateOf(steps[i]!));
      const mass = sel.labelMass[j];
      if (mass !== undefined) {
        this.massSum += mass;
        this.massCount += 1;
      }
    });
    return sel;
  }

  /**
   * Env `i`'s step at `t` (row `j` of `sel`) into its records; an episode that ended (or is cut,
   * at the last step) stops playing, and its summary is kept.
   */
  private record(i: number, j: number, sel: SelectedActions, step: TextStep, t: number): void {
    const { config } = this;
    const done = step.terminated || step.truncated;
    const cut = !done && t === config.numSteps - 1;
    this.records[i]!.push({
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
      this.running[i] = false;
      this.finished[i] = true;
      const ep = step.info.episode as Omit<EpisodeSummary, 'env'> | undefined;
      if (ep) this.summaries.push({ env: i, ...ep });
      return;
    }
    this.steps[i] = step;
    if (cut) {
      this.running[i] = false;
      // A cut episode is reported too, as not successful: leaving it out would count only the
      // episodes that ended within the limit, and overstate the rollout's success rate.
      const rewards = this.records[i]!.map((r) => r.reward);
      this.summaries.push({
        env: i,
        discountedReturn: discountedReturn(rewards, config.gamma),
        length: rewards.length,
        success: false,
        cut: true,
      });
    }
  }

  /**
   * The rollout: every env's episode, one after another, as a buffer of one "environment", the
   * episodes' samples, rewards and states, and the counters (`start`: when it began).
   */
  finish(seeds: readonly number[], start: number): GroupRollout {
    const { records, n } = this;
    const G = this.config.groupSize;
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
        states: this.states[i]!,
        finished: this.finished[i]!,
      });
    }
    const seconds = Math.max(1e-9, (performance.now() - start) / 1000);
    const { summaries, ms } = this;
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
        labelMass: this.massCount > 0 ? this.massSum / this.massCount : null,
        episodes: summaries,
        episodesCut: summaries.filter((e) => e.cut).length,
        phaseSeconds: { act: ms.act / 1000, values: 0, env: ms.env / 1000 },
      },
    };
  }
}
