import { type EnvPresets, SMALL_MODEL_VALUES } from '@poad/envs-core';

/**
 * The credit tasks' training presets (field names as in the trainers' config schemas).
 *
 * - `small`: for the embedded default model on 2 CPU cores. These are a first choice, not yet
 *   tuned on these tasks: VirtualHome's `small` values (8 environments × 16 steps = 128 actions
 *   per iteration, actor lr 5e-4, critic lr 1e-3, 2 epochs of 4 minibatches, entropy bonus 1e-3,
 *   γ 0.95, the tasks' own discount) with 4096 environment steps (32 iterations): the episodes
 *   are 1 to 13 steps long, so that is 300 to 4000 episodes, and every iteration has 128 chosen
 *   actions to correlate with their exact A^π. The token space is restricted to the labels (as
 *   Overcooked's preset found necessary on the default model), so the policy that acts is the
 *   policy that is optimised and the labels' shared words carry no choice. TWOSOME keeps
 *   `vocabulary`, its word-normalised softmax, the sampler of the results so far; with
 *   `--token-space labels` it acts from the same label-tree product as the others.
 * - The group-relative algorithms (GRPO, RLOO, GiGPO) take the same values with 4 groups of 8
 *   episodes per iteration (32 episodes, so even the one-step key-token task gives 32 chosen
 *   actions per iteration) and episodes cut at 16 steps, above every task's own step limit, so
 *   no episode is cut short. Also a first choice, not tuned.
 */
export const CREDIT_PRESETS: EnvPresets = {
  traits: { actions: 'labels', seededResets: true },
  default: 'small',
  presets: {
    small: {
      source: 'small: a first choice for the embedded default model, not yet tuned on these tasks',
      values: {
        ...SMALL_MODEL_VALUES,
        envSteps: 4096,
        tokenSpace: 'labels',
        // The best checkpoint by the sampled success over 10 iterations; a fall of 0.3 for 10
        // iterations counts as a collapse (replayed over the archived runs it fires on none).
        keepBest: 'successRate:max@10',
        collapseDrop: 0.3,
        collapsePatience: 10,
      },
      byAlgorithm: {
        twosome: { tokenSpace: 'vocabulary' },
        grpo: { numSteps: 16, groups: 4, groupSize: 8 },
        rloo: { numSteps: 16, groups: 4, groupSize: 8 },
        gigpo: { numSteps: 16, groups: 4, groupSize: 8 },
      },
    },
  },
};
