import { EpisodeOverError, InvalidActionError, NotResetError } from '../src/errors.js';
import { ReturnTracker } from '../src/returns.js';
import { createRng } from '../src/rng.js';
import type { TextEnv, TextStep } from '../src/types.js';

/** Deliberate defects, each of which one conformance check must catch. */
export type GuessBug =
  | 'comma-label'
  | 'empty-list'
  | 'nan-reward'
  | 'never-ends'
  | 'accepts-invalid'
  | 'invalid-mutates'
  | 'no-episode-over'
  | 'no-not-reset'
  | 'ignores-seed'
  | 'reset-leaks'
  | 'no-return-info'
  | 'reset-reward';

export interface GuessEnvOptions {
  bug?: GuessBug;
  /** Free-text mode: the agent types a number (actions === null). */
  open?: boolean;
  maxSteps?: number;
}

const LABELS = ['guess 0', 'guess 1', 'guess 2', 'guess 3', 'guess 4'] as const;

/**
 * A tiny test env: reset draws a hidden number 0..4 from the seed; the agent guesses;
 * +1 and done on a hit, truncated after `maxSteps` (default 3) guesses.
 */
export class GuessEnv implements TextEnv {
  readonly id = 'test/guess';
  private target = 0;
  private steps = 0;
  private done = false;
  private started = false;
  private hits = 0;
  private readonly tracker = new ReturnTracker(0.9);
  private readonly maxSteps: number;
  private entropy = 0;

  constructor(private readonly options: GuessEnvOptions = {}) {
    this.maxSteps = options.maxSteps ?? 3;
  }

  async reset(options: { seed?: number } = {}): Promise<TextStep> {
    const seed = this.options.bug === 'ignores-seed' ? this.entropy++ : (options.seed ?? 0);
    this.target = createRng(seed).int(5);
    this.steps = 0;
    this.done = false;
    this.started = true;
    this.tracker.reset();
    if (this.options.bug !== 'reset-leaks') this.hits = 0;
    return this.view(this.options.bug === 'reset-reward' ? 1 : 0, false, false, {});
  }

  async step(action: string): Promise<TextStep> {
    if (!this.started && this.options.bug !== 'no-not-reset') throw new NotResetError(this.id);
    if (this.done && this.options.bug !== 'no-episode-over') throw new EpisodeOverError(this.id);
    const guess = this.parse(action);
    if (guess === null) {
      if (this.options.bug === 'invalid-mutates') this.steps += 1;
      if (this.options.bug !== 'accepts-invalid' && this.options.bug !== 'invalid-mutates') {
        throw new InvalidActionError(this.id, action, this.labels() ?? []);
      }
      if (this.options.bug === 'invalid-mutates') {
        throw new InvalidActionError(this.id, action, this.labels() ?? []);
      }
      return this.view(0, false, false, {});
    }
    this.steps += 1;
    const hit = guess === this.target;
    if (hit) this.hits += 1;
    const reward = this.options.bug === 'nan-reward' ? Number.NaN : hit ? 1 : 0;
    this.tracker.add(reward);
    const terminated = hit;
    const truncated =
      this.options.bug === 'never-ends' ? false : !terminated && this.steps >= this.maxSteps;
    this.done = terminated || truncated;
    const info: Record<string, unknown> = {};
    if (this.done && this.options.bug !== 'no-return-info') {
      info.discountedReturn = this.tracker.value;
      info.length = this.tracker.length;
      info.success = hit;
    }
    return this.view(reward, terminated, truncated, info);
  }

  async close(): Promise<void> {}

  private parse(action: string): number | null {
    if (this.options.open) {
      const n = Number(action.trim());
      return Number.isInteger(n) && n >= 0 && n < 5 ? n : null;
    }
    const i = LABELS.indexOf(action as (typeof LABELS)[number]);
    return i < 0 ? null : i;
  }

  private labels(): string[] | null {
    if (this.options.open) return null;
    if (this.options.bug === 'empty-list') return [];
    if (this.options.bug === 'comma-label') return ['guess 0, or 1', ...LABELS.slice(2)];
    return [...LABELS];
  }

  private view(
    reward: number,
    terminated: boolean,
    truncated: boolean,
    info: Record<string, unknown>,
  ): TextStep {
    return {
      observation: `I am thinking of a number from 0 to 4 (hits so far: ${this.hits}). Guess ${this.steps + 1}:`,
      actions: this.labels(),
      reward,
      terminated,
      truncated,
      info,
    };
  }
}
