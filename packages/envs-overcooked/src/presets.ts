import { type EnvPresets, SMALL_MODEL_VALUES } from '@poad/envs-core';

/**
 * Overcooked's training presets (field names as in the trainers' config schemas).
 *
 * - `small`: the VirtualHome values for the embedded default model with γ 0.99 and the token space
 *   restricted to the labels. With it POAD's greedy policy solved tomato-salad in 2 of 3 seeds
 *   within 30,000 steps; with the full vocabulary no learning rate (1e-4–5e-4), entropy
 *   coefficient (0–1e-3) or critic ratio (up to 20×) learned it (docs/results.md). TWOSOME
 *   keeps `vocabulary`, its word-normalised softmax, the sampler of the results so far; with
 *   `--token-space labels` it acts from the same label-tree product as the others.
 * - `paper`: the authors' train_overcooked.py for POAD; NTPO and TWOSOME have no script of their
 *   own and take POAD's values for a like-for-like comparison, as ETPO does.
 *
 * The group-relative algorithms (GRPO, RLOO, GiGPO) take the same values, with 2 groups of 4
 * episodes per iteration and episodes cut at 48 macro-actions (`numSteps` is their longest
 * episode). These are a first choice, not tuned.
 */
/**
 * The best checkpoint and the collapse monitor: the episode return averaged over 10 iterations (an
 * episode's sampled success can fall to 0 while its return stays high); a fall of more than 0.5
 * for 10 iterations in a row counts as a collapse (replayed over the archived runs,
 * apps/compare/scripts/collapse-replay.ts, it fires on none of them).
 */
const OVERCOOKED_MONITOR = {
  keepBest: 'episodeReturn:max@10',
  collapseDrop: 0.5,
  collapsePatience: 10,
} as const;

export const OVERCOOKED_PRESETS: EnvPresets = {
  traits: { actions: 'labels', seededResets: true },
  default: 'small',
  presets: {
    small: {
      source:
        'small: the VirtualHome values with γ 0.99 and the token space restricted to the labels (docs/results.md)',
      values: {
        ...SMALL_MODEL_VALUES,
        envSteps: 30_000,
        gamma: 0.99,
        tokenSpace: 'labels',
        ...OVERCOOKED_MONITOR,
      },
      byAlgorithm: {
        twosome: { tokenSpace: 'vocabulary' },
        grpo: { numSteps: 48, groups: 2, groupSize: 4 },
        rloo: { numSteps: 48, groups: 2, groupSize: 4 },
        gigpo: { numSteps: 48, groups: 2, groupSize: 4 },
      },
    },
    paper: {
      source: 'paper: Overcooked POAD, train_overcooked.py',
      values: {
        envs: 4,
        envSteps: 40_000,
        numSteps: 32,
        lr: 5e-7,
        criticLr: 1e-5,
        gamma: 0.99,
        epochs: 5,
        numMinibatches: 2,
        gradAccumulation: 1,
        entropyCoef: 1e-4,
        maxNewTokens: 10,
        ...OVERCOOKED_MONITOR,
      },
    },
  },
};

/**
 * Best logged return of a task (envs.md): tomato-salad 0.9205 (28 primitive steps, the optimum);
 * tomato-lettuce-salad 0.9477 (the best known).
 */
export function overcookedOptimalReturn(task: string): number {
  return task === 'tomato-salad' ? 0.9205 : 0.9477;
}
