import { checkEnvOutput } from './check-output.js';
import { EnvArgumentError, NotResetError } from './errors.js';
import { deriveSeed } from './rng.js';
import type { TextEnv, TextStep } from './types.js';

/** Statistics of a finished episode, placed in `info.episode` by `VecEnv` on auto-reset. */
export interface EpisodeStats {
  /** The env's `info.discountedReturn`, or the plain sum of rewards when the env gives none. */
  discountedReturn: number;
  /** The env's `info.length`, or the number of `step` calls when the env gives none. */
  length: number;
  /** The env's `info.success`, when it reports one. */
  success?: boolean;
}

/**
 * Where every env of a {@link VecEnv} stands, as plain data: how many resets it has had and the
 * actions taken since the last one. Environments are deterministic given their reset seed, so
 * `VecEnv.restore` rebuilds the exact state by replaying the actions.
 */
export interface VecEnvState {
  seed: number;
  /** Resets done by each env (its current episode is number `episodes[i] - 1`). */
  episodes: number[];
  /** Actions taken by each env since its last reset, in order. */
  actions: string[][];
  /**
   * The seed each env's current episode was reset with when it was given explicitly
   * ({@link VecEnv.resetWith}); `null` where the episode took its derived seed. Absent when no
   * seed was given.
   */
  seeds?: (number | null)[];
}

/** Options of `VecEnv` and `makeVecEnv`. */
export interface VecEnvOptions {
  /** Base seed (default 0); see `VecEnv.episodeSeed` for how each reset's seed is derived. */
  seed?: number;
}

/**
 * Steps N environments together, concurrently, with same-step auto-reset.
 *
 * When env i's step ends its episode (`terminated || truncated`), the returned `TextStep` carries
 * the finished step's `reward`, `terminated` and `truncated`, but the NEW episode's first
 * `observation` and `actions`. Its `info` holds the reset's info plus `finalObservation`,
 * `finalActions`, `finalInfo` (the finished step's info) and `episode` ({@link EpisodeStats}).
 *
 * Every reset of env i uses the seed `deriveSeed(seed, i, k)`, where k counts that env's resets
 * (0 for the first), so a run is reproducible from `options.seed` alone.
 *
 * Every result of an env's `reset` and `step` is checked before it is returned (see
 * `checkEnvOutput`): a non-finite reward, non-boolean `terminated`/`truncated`, an empty label
 * list while the episode runs, or a switch between a label list and an open action space
 * mid-episode rejects with an `EnvOutputError` naming the env id, its index, episode and step.
 */
export class VecEnv {
  /** Number of environments. */
  readonly size: number;
  private readonly baseSeed: number;
  private readonly episodes: number[];
  private readonly rewardSums: number[];
  private readonly stepCounts: number[];
  private readonly actionLogs: string[][];
  /** Whether each env's current episode has an open action space (from its reset). */
  private readonly open: boolean[];
  /** The seed of each env's current episode when it was given explicitly (else null). */
  private readonly explicitSeeds: (number | null)[];
  private started = false;
  private closed = false;
  private busy = false;

  constructor(
    private readonly envs: TextEnv[],
    options: VecEnvOptions = {},
  ) {
    if (!Array.isArray(envs) || envs.length === 0) {
      throw new EnvArgumentError('VecEnv(envs)', 'expected a non-empty array of TextEnv.');
    }
    const seed = options.seed ?? 0;
    if (!Number.isInteger(seed)) {
      throw new EnvArgumentError('VecEnv(options.seed)', `expected an integer, got ${seed}.`);
    }
    this.baseSeed = seed;
    this.size = envs.length;
    this.episodes = envs.map(() => 0);
    this.rewardSums = envs.map(() => 0);
    this.stepCounts = envs.map(() => 0);
    this.actionLogs = envs.map(() => []);
    this.open = envs.map(() => false);
    this.explicitSeeds = envs.map(() => null);
  }

  /** The plain-data state to save with a checkpoint (see {@link VecEnvState}). */
  getState(): VecEnvState {
    if (!this.started) throw new NotResetError(this.label());
    return {
      seed: this.baseSeed,
      episodes: [...this.episodes],
      actions: this.actionLogs.map((a) => [...a]),
      ...(this.explicitSeeds.some((x) => x !== null) ? { seeds: [...this.explicitSeeds] } : {}),
    };
  }

  /**
   * Puts every env back where `state` says, by resetting it with the seed of its current
   * episode and replaying the recorded actions; returns the current steps (as `reset` would).
   * The environments must be deterministic and of the same kind as when the state was saved.
   */
  async restore(state: VecEnvState): Promise<TextStep[]> {
    this.assertReady('restore');
    if (
      state?.seed !== this.baseSeed ||
      !Array.isArray(state.episodes) ||
      state.episodes.length !== this.size ||
      !Array.isArray(state.actions) ||
      state.actions.length !== this.size ||
      state.episodes.some((e) => !Number.isInteger(e) || e < 1) ||
      (state.seeds !== undefined &&
        (!Array.isArray(state.seeds) ||
          state.seeds.length !== this.size ||
          state.seeds.some((x) => x !== null && !Number.isInteger(x))))
    ) {
      throw new EnvArgumentError(
        'VecEnv.restore(state)',
        `the state does not fit this VecEnv (size ${this.size}, seed ${this.baseSeed}); restore with the same number of envs and seed it was saved with.`,
      );
    }
    this.busy = true;
    try {
      const steps = await Promise.all(
        this.envs.map(async (env, i) => {
          const episode = (state.episodes[i] as number) - 1;
          const explicit = state.seeds?.[i] ?? null;
          this.explicitSeeds[i] = explicit;
          let step = await env.reset({ seed: explicit ?? this.episodeSeed(i, episode) });
          this.episodes[i] = episode + 1;
          this.rewardSums[i] = 0;
          this.stepCounts[i] = 0;
          this.actionLogs[i] = [];
          this.open[i] = checkEnvOutput(step, this.site(i), null);
          for (const action of state.actions[i] as string[]) {
            step = await env.step(action);
            this.open[i] = checkEnvOutput(step, this.site(i, 1), this.open[i] as boolean);
            this.rewardSums[i] = (this.rewardSums[i] as number) + step.reward;
            this.stepCounts[i] = (this.stepCounts[i] as number) + 1;
            (this.actionLogs[i] as string[]).push(action);
            if (step.terminated || step.truncated) {
              throw new EnvArgumentError(
                'VecEnv.restore(state)',
                `replaying env ${i} ended its episode early; the environment is not deterministic or differs from the one saved.`,
              );
            }
          }
          return step;
        }),
      );
      this.started = true;
      return steps;
    } finally {
      this.busy = false;
    }
  }

  /** The seed of env `index`'s reset number `episode` (0-based): `deriveSeed(seed, index, episode)`. */
  episodeSeed(index: number, episode: number): number {
    return deriveSeed(this.baseSeed, index, episode);
  }

  /** Resets every env (each with its next derived seed). */
  async reset(): Promise<TextStep[]> {
    this.assertReady('reset');
    this.busy = true;
    try {
      const steps = await Promise.all(this.envs.map((_, i) => this.resetOne(i)));
      this.started = true;
      return steps;
    } finally {
      this.busy = false;
    }
  }

  /**
   * Resets every env with the seed given for it (e.g. one seed for each group of envs, so that a
   * group's episodes start from the same state). The reset counts as each env's next episode; a
   * later auto-reset takes the derived seed again. `getState`/`restore` keep the given seeds.
   */
  async resetWith(seeds: readonly number[]): Promise<TextStep[]> {
    this.assertReady('resetWith');
    if (
      !Array.isArray(seeds) ||
      seeds.length !== this.size ||
      seeds.some((x) => !Number.isInteger(x))
    ) {
      throw new EnvArgumentError(
        'VecEnv.resetWith(seeds)',
        `expected ${this.size} integer seeds (one per env), got ${Array.isArray(seeds) ? `[${seeds.join(', ')}]` : typeof seeds}.`,
      );
    }
    this.busy = true;
    try {
      const steps = await Promise.all(this.envs.map((_, i) => this.resetOne(i, seeds[i])));
      this.started = true;
      return steps;
    } finally {
      this.busy = false;
    }
  }

  /**
   * {@link step} for some envs only: env i takes `actions[i]`, and an env whose action is `null`
   * is left where it is (its entry of the result is `null`). Envs whose episode ends auto-reset as
   * in `step`.
   */
  async stepSome(actions: readonly (string | null)[]): Promise<(TextStep | null)[]> {
    this.assertReady('stepSome');
    if (!this.started) throw new NotResetError(this.label());
    if (!Array.isArray(actions) || actions.length !== this.size) {
      throw new EnvArgumentError(
        'VecEnv.stepSome(actions)',
        `expected ${this.size} entries (an action or null per env), got ${Array.isArray(actions) ? actions.length : typeof actions}.`,
      );
    }
    this.busy = true;
    try {
      return await Promise.all(
        this.envs.map((env, i) =>
          actions[i] === null ? null : this.stepOne(env, i, actions[i] as string),
        ),
      );
    } finally {
      this.busy = false;
    }
  }

  /**
   * Steps env i with `actions[i]`, auto-resetting envs whose episode ended. If an env throws
   * (e.g. `InvalidActionError`) or returns an invalid result (`EnvOutputError`), the promise
   * rejects with that error; the other envs may already have taken their step.
   */
  async step(actions: readonly string[]): Promise<TextStep[]> {
    this.assertReady('step');
    if (!this.started) throw new NotResetError(this.label());
    if (!Array.isArray(actions) || actions.length !== this.size) {
      throw new EnvArgumentError(
        'VecEnv.step(actions)',
        `expected ${this.size} actions (one per env), got ${Array.isArray(actions) ? actions.length : typeof actions}.`,
      );
    }
    this.busy = true;
    try {
      return await Promise.all(
        this.envs.map((env, i) => this.stepOne(env, i, actions[i] as string)),
      );
    } finally {
      this.busy = false;
    }
  }

  /** Closes every env. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.envs.map((env) => env.close()));
  }

  private async resetOne(i: number, given?: number): Promise<TextStep> {
    const env = this.envs[i] as TextEnv;
    const seed = given ?? this.episodeSeed(i, this.episodes[i] as number);
    this.explicitSeeds[i] = given ?? null;
    this.episodes[i] = (this.episodes[i] as number) + 1;
    this.rewardSums[i] = 0;
    this.stepCounts[i] = 0;
    this.actionLogs[i] = [];
    const step = await env.reset({ seed });
    this.open[i] = checkEnvOutput(step, this.site(i), null);
    return step;
  }

  private async stepOne(env: TextEnv, i: number, action: string): Promise<TextStep> {
    const step = await env.step(action);
    this.open[i] = checkEnvOutput(step, this.site(i, 1), this.open[i] as boolean);
    (this.actionLogs[i] as string[]).push(action);
    this.rewardSums[i] = (this.rewardSums[i] as number) + step.reward;
    this.stepCounts[i] = (this.stepCounts[i] as number) + 1;
    if (!step.terminated && !step.truncated) return step;
    const episode = episodeStats(step, this.rewardSums[i] as number, this.stepCounts[i] as number);
    const next = await this.resetOne(i);
    return {
      observation: next.observation,
      actions: next.actions,
      reward: step.reward,
      terminated: step.terminated,
      truncated: step.truncated,
      info: {
        ...next.info,
        finalObservation: step.observation,
        finalActions: step.actions,
        finalInfo: step.info,
        episode,
      },
    };
  }

  private assertReady(method: string): void {
    if (this.closed) {
      throw new EnvArgumentError(`VecEnv.${method}`, 'this VecEnv is closed; create a new one.');
    }
    if (this.busy) {
      throw new EnvArgumentError(
        `VecEnv.${method}`,
        'the previous reset() or step() has not finished; await it before calling again.',
      );
    }
  }

  /** Env i's position for error messages: its current episode and the step about to be counted. */
  private site(i: number, ahead = 0) {
    return {
      envId: (this.envs[i] as TextEnv).id,
      index: i,
      episode: this.episodes[i] as number,
      step: (this.stepCounts[i] as number) + ahead,
    };
  }

  private label(): string {
    return `VecEnv(${this.envs.map((e) => e.id).join(', ')})`;
  }
}

function episodeStats(step: TextStep, rewardSum: number, steps: number): EpisodeStats {
  const { discountedReturn, length, success } = step.info;
  const stats: EpisodeStats = {
    discountedReturn:
      typeof discountedReturn === 'number' && Number.isFinite(discountedReturn)
        ? discountedReturn
        : rewardSum,
    length: typeof length === 'number' && Number.isFinite(length) ? length : steps,
  };
  if (typeof success === 'boolean') stats.success = success;
  return stats;
}

/** Creates `n` environments with `factory` and wraps them in a {@link VecEnv}. */
export function makeVecEnv(factory: () => TextEnv, n: number, options: VecEnvOptions = {}): VecEnv {
  if (!Number.isInteger(n) || n < 1) {
    throw new EnvArgumentError('makeVecEnv(n)', `expected a positive integer, got ${String(n)}.`);
  }
  if (typeof factory !== 'function') {
    throw new EnvArgumentError('makeVecEnv(factory)', 'expected a function returning a TextEnv.');
  }
  return new VecEnv(
    Array.from({ length: n }, () => factory()),
    options,
  );
}
