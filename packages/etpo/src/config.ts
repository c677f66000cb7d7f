import { configResolver, defineSchema, type OptionValues, type ResolveOptions } from '@poad/config';
import { pickPpoFields, TRAINER_FIELDS } from '@poad/ppo';
import { EtpoArgumentError } from './errors.js';

/** The fields ETPO shares with `@poad/ppo`'s config: the rollout, the sampler and the optimisers. */
const ppo = pickPpoFields([
  ...TRAINER_FIELDS,
  'truncationAsTermination',
  'epochs',
  'criticLr',
  'criticMaxGradNorm',
]);

/**
 * Every setting of an ETPO run: the rollout, sampler and optimiser fields it shares with
 * `@poad/ppo` (same names, ranges and defaults) and its own β, τ, reference, optimiser, policy
 * loss and critic scale. As for PPO, this schema is the {@link EtpoConfig} type, the flags of
 * `--algo etpo`, the keys of config files and config.json, and the one validation
 * ({@link resolveEtpoConfig}). PPO's clip, GAE λ, entropy bonus, KL stop and gradient
 * accumulation are not ETPO's and are not here.
 */
export const etpoConfigSchema = defineSchema({
  ...ppo,
  gamma: { ...ppo.gamma, description: 'Discount γ between actions of the soft BAD backup' },
  lr: { ...ppo.lr, description: 'Actor (LoRA) learning rate' },
  criticLr: {
    ...ppo.criticLr,
    description:
      'Critic learning rate (a second LoRA adapter whose head gives Q over the vocabulary)',
  },
  weightDecay: {
    ...ppo.weightDecay,
    description: 'Decoupled weight decay of both optimisers (AdamW and Lion)',
  },
  adamEps: { ...ppo.adamEps, description: 'Adam ε of both optimisers (AdamW only)' },
  adamBeta1: { ...ppo.adamBeta1, description: 'Adam β1 of both optimisers (AdamW only)' },
  adamBeta2: { ...ppo.adamBeta2, description: 'Adam β2 of both optimisers (AdamW only)' },
  beta: {
    type: 'number',
    default: 0.1,
    min: 1e-6,
    description: 'β, the weight of KL(π ‖ π̄) in the soft backup and the policy loss',
  },
  tau: {
    type: 'number',
    default: 0.005,
    min: 1e-6,
    max: 1,
    description:
      "τ of the target critic, a Polyak average of the critic adapter updated after every critic step (the authors' 0.995·target + 0.005·critic)",
  },
  reference: {
    type: 'enum',
    choices: ['base', 'uniform'],
    default: 'base',
    description:
      "The reference policy π̄ of the KL term: the base model with its adapters off (the authors' frozen copy of the initial model), or uniform (plain entropy regularisation)",
  },
  optimizer: {
    type: 'enum',
    choices: ['adamw', 'lion'],
    default: 'adamw',
    description:
      "Optimiser of actor and critic: adamw (as the PPO algorithms), or lion, the ETPO authors' choice (sign updates: use a 3–10× smaller lr; β1 0.9, β2 0.99)",
  },
  policyLoss: {
    type: 'enum',
    choices: ['objective', 'released'],
    default: 'objective',
    description:
      "The actor's loss at each token: objective, the π-weighted Σ_w π(w)·(β·log(π(w)/π̄(w)) − Q(w)) of ETPO's objective (minimised by π ∝ π̄·e^{Q/β}); or released, the form of the authors' released code, the plain mean over the token space of β·log π(w) − Q(w) (Q held constant: its gradient, β·(1/V − π) per logit, carries nothing from Q, and descent on it sharpens π)",
  },
  criticScale: {
    type: 'number',
    default: 1,
    min: 1e-6,
    max: 1,
    description:
      "Q over the vocabulary is this factor times the critic head's output, for the online and the target critic alike (critic loss, soft values and targets, policy loss): 1 starts Q as the language model's logits, a smaller factor brings that start to the size of the returns",
  },
});

/** Every setting of an ETPO run (see {@link etpoConfigSchema}). */
export type EtpoConfig = OptionValues<typeof etpoConfigSchema>;

/**
 * Fills unset fields from the schema's defaults (below them, `options.layers`, e.g. a preset)
 * and checks every field, once. A config this function returned passes through unchanged;
 * `options` also says how errors name a field (`config.tau` by default).
 * @throws EtpoArgumentError naming the first invalid field.
 */
export const resolveEtpoConfig: (
  overrides?: Partial<EtpoConfig>,
  options?: ResolveOptions,
) => EtpoConfig = configResolver(etpoConfigSchema, {
  error: (label, reason) => new EtpoArgumentError(label, reason),
});
