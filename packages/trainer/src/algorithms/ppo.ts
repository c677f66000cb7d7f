import { type CausalLM, LoraAdapter } from '@poad/lora-model';
import {
  checkPpoConfig,
  type IterationReport,
  type PpoConfig,
  PpoTrainer,
  ppoConfigSchema,
} from '@poad/ppo';
import { LmPolicy } from '../policy/lm-policy.js';
import type { ValueCriticOptions } from '../policy/value-head-critic.js';
import { reportOf } from '../run-trainer.js';
import type { AlgorithmEntry, AlgorithmNeeds } from './types.js';

/** The config fields of a PPO algorithm's flags: all of `PpoConfig` but `algorithm`, which `--algo` picks. */
const { algorithm: _picked, ...fields } = ppoConfigSchema;

/** A PPO algorithm's config as a run holds it (`algorithm` is the entry's name). */
export type PpoRunConfig = PpoConfig;

/** Subfolder of a saved PPO agent that holds the critic's adapter (`criticAdapter: 'lora'`). */
export const PPO_CRITIC_ADAPTER_DIR = 'critic';

/**
 * The critic `config` asks for, on `model`: the value head swapped for one on every layer's
 * hidden states (`criticFeatures: 'layers'`; same sizes and seed, a wider first layer), a LoRA
 * adapter of its own (`criticAdapter: 'lora'`, seeded with seed + 3: the model's actor adapter
 * and head take + 1 and + 2), and the options of the policy's critic. With the defaults: the
 * model's head on the frozen base's final hidden states, and nothing else.
 */
export function criticOf(
  model: CausalLM,
  config: PpoRunConfig,
): { options: ValueCriticOptions; adapters: Record<string, LoraAdapter> } {
  const features = config.criticFeatures ?? 'last';
  const head = model.valueHead;
  if (features === 'layers' && head && head.features !== 'layers') {
    model.addValueHead({ hiddenSizes: head.sizes.slice(1, -1), features: 'layers' });
  }
  if (config.criticAdapter !== 'lora') return { options: { features }, adapters: {} };
  const adapter = LoraAdapter.create(
    model.config,
    {
      r: config.criticLoraRank,
      alpha: config.criticLoraAlpha,
      targetModules: [...config.criticLoraTargets],
    },
    config.seed + 3,
  );
  return { options: { features, adapter }, adapters: { [PPO_CRITIC_ADAPTER_DIR]: adapter } };
}

/**
 * The PPO family of `@poad/ppo` (rollout → advantages from `@poad/bellman` → clipped PPO update),
 * one entry per advantage estimator: its config is `PpoConfig` with `algorithm` fixed to the
 * entry's name; its policy is the LoRA actor with a value head on the frozen base (`LmPolicy`),
 * or on what the critic's options say ({@link criticOf}; a critic adapter is saved in
 * `critic/` beside the actor's).
 */
function ppoAlgorithm(
  name: PpoConfig['algorithm'],
  summary: string,
  needs: AlgorithmNeeds = {},
): AlgorithmEntry<PpoRunConfig, IterationReport> & { name: typeof name } {
  return {
    name,
    summary,
    configSchema: fields,
    fixed: { algorithm: name },
    check: checkPpoConfig,
    needs,
    valueHead: true,
    createPolicy: (model, tokenizer, config, o) => {
      const critic = criticOf(model, config);
      return {
        policy: new LmPolicy(model, tokenizer, o.stopTokenIds, critic.options),
        adapters: critic.adapters,
      };
    },
    Trainer: PpoTrainer,
    report: (r) =>
      reportOf(r, r.update, {
        level: r.advantages.level,
        values: r.advantages.advantages,
        name: 'advantages',
      }),
    settingsOf(config) {
      const { intraGamma, algorithm: _name, ...rest } = config;
      const settings: Record<string, unknown> = { ...rest };
      // The critic's options that another one turns off decide nothing; unset epochs are epochs.
      if (config.criticAdapter !== 'lora') {
        for (const k of ['criticLoraRank', 'criticLoraAlpha', 'criticLoraTargets'])
          delete settings[k];
      }
      if (!(config.targetCriticEvery > 0)) delete settings.targetCriticTau;
      settings.criticEpochs = config.criticEpochs ?? config.epochs;
      // γ_w decides NTPO's numbers only; unset, it is γ.
      return name === 'ntpo' ? { ...settings, intraGamma: intraGamma ?? config.gamma } : settings;
    },
  };
}

/** POAD: token-level PPO on the BAD backup (γ_w = 1 inside an action). */
export const poad = ppoAlgorithm(
  'poad',
  'POAD: token-level PPO whose critic and advantages follow the BAD backup (every token its own credit, the action-level optimum)',
);
/** NTPO: every token a step of the MDP, discounted by γ_w (`--intra-gamma`, unset: γ). */
export const ntpo = ppoAlgorithm(
  'ntpo',
  'NTPO: token-level PPO with each token a step, discounted by γ_w (--intra-gamma)',
);
/** ARCHER's token-level actor: NTPO with the next action's last-token value as bootstrap. */
export const archer = ppoAlgorithm(
  'archer',
  "ARCHER: token-level PPO bootstrapped from the next action's last-token value",
  { labels: true },
);
/** TWOSOME: action-level PPO on the normalised action log-prob. */
export const twosome = ppoAlgorithm(
  'twosome',
  'TWOSOME: action-level PPO on the word-normalised action log-prob',
  { labels: true },
);
