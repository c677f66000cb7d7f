import type { TextStep } from '@poad/envs-core';
import type { VecEnvLike } from '../src/index.js';

/**
 * The synthetic credit-assignment task (like the paper's Figure 1): one fixed prompt, K
 * candidate actions of `length` words that are identical except for one key word at position
 * `keyPos`; reward 1 for the correct key, 0 otherwise; every episode is one step.
 */
export interface KeyTokenTask {
  readonly prompt: string;
  readonly candidates: string[];
  readonly correct: number;
  readonly keyPos: number;
  readonly words: string[];
}

/** Builds the task for an action length (>= 2), key at position 1. */
export function keyTokenTask(length: number, keys = 4): KeyTokenTask {
  const fillers = Array.from({ length }, (_, i) => `f${i}`);
  const keyWords = Array.from({ length: keys }, (_, i) => `k${i}`);
  const keyPos = 1;
  const candidates = keyWords.map((k) => fillers.map((f, i) => (i === keyPos ? k : f)).join(' '));
  const prompt = 'choose the right tool';
  return {
    prompt,
    candidates,
    correct: 2,
    keyPos,
    words: [...prompt.split(' '), ...fillers, ...keyWords, 'done', 'step'],
  };
}

/** The task's first step: its prompt with every candidate allowed. */
export function keyTokenStart(task: KeyTokenTask): TextStep {
  return {
    observation: task.prompt,
    actions: task.candidates,
    reward: 0,
    terminated: false,
    truncated: false,
    info: {},
  };
}

/** N copies of the task behind a VecEnvLike with same-step auto-reset. */
export class KeyTokenVecEnv implements VecEnvLike {
  readonly size: number;

  constructor(
    private readonly task: KeyTokenTask,
    size: number,
  ) {
    this.size = size;
  }

  async reset(): Promise<TextStep[]> {
    return Array.from({ length: this.size }, () => keyTokenStart(this.task));
  }

  async step(actions: readonly string[]): Promise<TextStep[]> {
    return actions.map((a) => {
      const reward = a === this.task.candidates[this.task.correct] ? 1 : 0;
      return {
        ...keyTokenStart(this.task),
        reward,
        terminated: true,
        info: {
          finalObservation: this.task.prompt,
          episode: { discountedReturn: reward, length: 1, success: reward > 0 },
        },
      };
    });
  }
}

/**
 * A counting task with a step limit: the prompt is `step` repeated t+1 times; any action gives
 * reward 1; episodes are truncated after `limit` steps (never terminated).
 */
export class TruncatingVecEnv implements VecEnvLike {
  readonly size: number;
  private t: number[];

  constructor(
    size: number,
    private readonly limit: number,
    private readonly options: { open?: boolean } = {},
  ) {
    this.size = size;
    this.t = new Array(size).fill(0);
  }

  private obs(t: number): string {
    return Array.from({ length: t + 1 }, () => 'step').join(' ');
  }

  private actions(): string[] | null {
    return this.options.open ? null : ['f0 k0', 'f0 k1 f1'];
  }

  async reset(): Promise<TextStep[]> {
    this.t = this.t.map(() => 0);
    return this.t.map((t) => ({
      observation: this.obs(t),
      actions: this.actions(),
      reward: 0,
      terminated: false,
      truncated: false,
      info: {},
    }));
  }

  async step(actions: readonly string[]): Promise<TextStep[]> {
    return actions.map((_, i) => {
      this.t[i]! += 1;
      const truncated = this.t[i]! >= this.limit;
      const final = this.obs(this.t[i]!);
      if (truncated) this.t[i] = 0;
      return {
        observation: this.obs(this.t[i]!),
        actions: this.actions(),
        reward: 1,
        terminated: false,
        truncated,
        info: truncated
          ? { finalObservation: final, episode: { discountedReturn: 1, length: this.limit } }
          : {},
      };
    });
  }
}
