import {
  createRng,
  EnvArgumentError,
  EpisodeOverError,
  InvalidActionError,
  NotResetError,
  ReturnTracker,
  type Rng,
  type TextEnv,
  type TextStep,
} from '@poad/envs-core';
import { type CreditMdp, type CreditState, indexMdp } from './mdp.js';
import { resolveMdp } from './tasks.js';

/** Options of {@link createCreditEnv}. */
export interface CreditEnvOptions {
  /** Step limit (default: the task's `maxSteps`). */
  maxSteps?: number;
}

/**
 * What a step's `info` holds: the canonical id of the state the observation shows, and at the
 * end of an episode its discounted return, length and success.
 */
export interface CreditStepInfo {
  /** Canonical id of the state now (`CreditMdp.states[].id`). */
  state: string;
  /** Σ γ^(t−1)·r_t at the end of an episode. */
  discountedReturn?: number;
  /** Steps at the end of an episode. */
  length?: number;
  /** Whether the episode ended in a success state (false when truncated). */
  success?: boolean;
}

/**
 * A credit task as a `TextEnv`: it plays its {@link CreditMdp} label by label. Rewards,
 * termination and truncation are deterministic; a label with several outcomes draws one from a
 * generator seeded by `reset({ seed })`, so the same seed and labels replay the same episode.
 */
export class CreditEnv implements TextEnv {
  readonly id: string;
  readonly mdp: CreditMdp;
  private readonly maxSteps: number;
  private readonly index: ReadonlyMap<string, number>;
  private readonly tracker: ReturnTracker;
  private rng: Rng = createRng(0);
  private state: CreditState;
  private steps = 0;
  private started = false;
  private done = false;

  constructor(task: string | CreditMdp, options: CreditEnvOptions = {}) {
    this.mdp = resolveMdp(task, 'createCreditEnv(task)');
    this.index = indexMdp(this.mdp, 'createCreditEnv(task)').index;
    this.id = this.mdp.id;
    this.maxSteps = options.maxSteps ?? this.mdp.maxSteps;
    if (!Number.isInteger(this.maxSteps) || this.maxSteps < 1) {
      throw new EnvArgumentError(
        'createCreditEnv(options.maxSteps)',
        `expected a positive integer step limit, got ${String(options.maxSteps)}.`,
      );
    }
    this.tracker = new ReturnTracker(this.mdp.gamma);
    this.state = this.lookup(this.mdp.start);
  }

  async reset(options: { seed?: number } = {}): Promise<TextStep> {
    return this.resetSync(options);
  }

  async step(action: string): Promise<TextStep> {
    return this.stepSync(action);
  }

  async close(): Promise<void> {}

  /** `reset` without the promise. */
  resetSync(options: { seed?: number } = {}): TextStep {
    // The only randomness (the outcome of a chance label) comes from the reset seed.
    this.rng = createRng(options.seed ?? 0);
    this.state = this.lookup(this.mdp.start);
    this.steps = 0;
    this.started = true;
    this.done = false;
    this.tracker.reset();
    return this.view(0, false, false);
  }

  /** `step` without the promise. */
  stepSync(action: string): TextStep {
    if (!this.started) throw new NotResetError(this.id);
    if (this.done) throw new EpisodeOverError(this.id);
    const chosen = this.state.actions.find((a) => a.label === action);
    if (!chosen) throw new InvalidActionError(this.id, action, this.labels());

    const outcomes = chosen.outcomes;
    let outcome = outcomes[0]!;
    if (outcomes.length > 1) {
      const u = this.rng.float();
      let total = 0;
      for (const o of outcomes) {
        total += o.prob;
        outcome = o;
        if (u < total) break;
      }
    }
    this.state = this.lookup(outcome.state);
    this.steps += 1;
    this.tracker.add(outcome.reward);
    const terminated = this.state.terminal;
    const truncated = !terminated && this.steps >= this.maxSteps;
    this.done = terminated || truncated;
    return this.view(outcome.reward, terminated, truncated);
  }

  private lookup(id: string): CreditState {
    return this.mdp.states[this.index.get(id)!]!;
  }

  private labels(): string[] {
    return this.state.actions.map((a) => a.label);
  }

  private view(reward: number, terminated: boolean, truncated: boolean): TextStep {
    const info: Record<string, unknown> = { state: this.state.id } satisfies CreditStepInfo;
    if (terminated || truncated) {
      info.discountedReturn = this.tracker.value;
      info.length = this.tracker.length;
      info.success = terminated && this.state.success;
    }
    return {
      observation: this.state.observation,
      actions: this.labels(),
      reward,
      terminated,
      truncated,
      info,
    };
  }
}

/**
 * Creates the environment of a credit task (`'key-token'` or `'credit/key-token'`), or of any
 * {@link CreditMdp} (its `id` is the environment's id).
 */
export function createCreditEnv(task: string | CreditMdp, options?: CreditEnvOptions): CreditEnv {
  return new CreditEnv(task, options);
}
