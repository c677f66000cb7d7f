import { configResolver, defineSchema, type OptionValues, type ResolveOptions } from '@poad/config';
import { pickPpoFields, TRAINER_FIELDS } from '@poad/ppo';
import { GroupConfigError } from './errors.js';

/** The fields a group-relative run shares with `@poad/ppo`'s config: sampler, update and optimiser. */
const ppo = pickPpoFields([...TRAINER_FIELDS, 'epochs', 'clip', 'entropyCoef']);

/**
 * Every setting of a critic-free, group-relative run (GRPO, RLOO, GiGPO): the sampler, update and
 * optimiser fields of `@poad/ppo` (same names and ranges) and the group's own. An iteration plays
 * `groups` groups of `groupSize` episodes, each group's episodes from one start state, every
 * episode cut at `numSteps` steps; each action's tokens take its episode's (or, for GiGPO, its
 * step's) group-relative advantage; the loss is PPO's clipped surrogate per token, plus
 * `klCoef`·KL(π ‖ π_ref) to the base model, minus the entropy bonus. No critic. As the other
 * trainers' schemas, this one is the type, the flags and the one validation.
 */
export const groupConfigSchema = defineSchema({
  estimator: {
    type: 'enum',
    choices: ['grpo', 'rloo', 'gigpo'],
    default: 'grpo',
    description:
      "How a group's episodes are compared: grpo (return minus the group mean, over the group's std), rloo (minus the mean of the others), gigpo (grpo's episode advantage plus ω times a step advantage over the group's steps from equal states)",
  },
  ...ppo,
  gamma: {
    ...ppo.gamma,
    description:
      "GiGPO: discount γ of the step-level returns; GRPO and RLOO compare the episodes' undiscounted returns",
  },
  numSteps: {
    ...ppo.numSteps,
    default: 32,
    description:
      'Longest episode T of a group rollout: an episode still running after T steps is cut, and its rewards so far are its return',
  },
  entropyCoef: { ...ppo.entropyCoef, default: 0 },
  groups: {
    type: 'integer',
    default: 2,
    min: 1,
    max: 256,
    description:
      'K: groups of episodes per iteration, each group from one start state (one reset seed)',
  },
  groupSize: {
    type: 'integer',
    default: 4,
    min: 2,
    max: 256,
    description: "G: episodes per group (the run's environments are groups × group-size)",
  },
  normalise: {
    type: 'enum',
    choices: ['std', 'none'],
    default: 'std',
    description:
      "GRPO and GiGPO: divide a group's centred returns by its std (std) or not (none: Dr. GRPO); RLOO has no std",
  },
  omega: {
    type: 'number',
    default: 1,
    min: 0,
    max: 1e6,
    description: 'GiGPO: weight ω of the step-level advantage (0 gives GRPO)',
  },
  klCoef: {
    type: 'number',
    default: 0,
    min: 0,
    max: 1e6,
    description:
      'Weight of KL(π ‖ π_ref) to the base model (adapters off), the k3 estimator per token; 0 skips the reference pass',
  },
});

/** Every setting of a group-relative run (see {@link groupConfigSchema}). */
export type GroupConfig = OptionValues<typeof groupConfigSchema>;

/**
 * Fills unset fields from the schema's defaults (below them, `options.layers`, e.g. a preset) and
 * checks every field once. A config this function returned passes through unchanged.
 * @throws GroupConfigError naming the first invalid field.
 */
export const resolveGroupConfig: (
  overrides?: Partial<GroupConfig>,
  options?: ResolveOptions,
) => GroupConfig = configResolver(groupConfigSchema, {
  error: (label, reason) => new GroupConfigError(label, reason),
});
