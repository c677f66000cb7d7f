import {
  checkPpoConfig,
  type IterationReport,
  type PpoConfig,
  PpoTrainer,
  ppoConfigSchema,
} from '@poad/ppo';
import { LmPolicy } from '../policy/lm-policy.js';
import { reportOf } from '../run-trainer.js';
import type { AlgorithmEntry, AlgorithmNeeds } from './types.js';

/** The config fields of a PPO algorithm's flags: all of `PpoConfig` but `algorithm`, which `--algo` picks. */
const { algorithm: _picked, ...fields } = ppoConfigSchema;

/** A PPO algorithm's config as a run holds it (`algorithm` is the entry's name). */
export type PpoRunConfig = PpoConfig;

/**
 * The PPO family of `@poad/ppo` (rollout → advantages from `@poad/bellman` → clipped PPO update),
 * one entry per advantage estimator: its config is `PpoConfig` with `algorithm` fixed to the
 * entry's name; its policy is the LoRA actor with a value head on the frozen base (`LmPolicy`).
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
    createPolicy: (model, tokenizer, _config, o) => ({
      policy: new LmPolicy(model, tokenizer, o.stopTokenIds),
      adapters: {},
    }),
    Trainer: PpoTrainer,
    report: (r) =>
      reportOf(r, r.update, {
        level: r.advantages.level,
        values: r.advantages.advantages,
        name: 'advantages',
      }),
    settingsOf(config) {
      const { intraGamma, algorithm: _name, ...rest } = config;
      // γ_w decides NTPO's numbers only; unset, it is γ.
      return name === 'ntpo' ? { ...rest, intraGamma: intraGamma ?? config.gamma } : rest;
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
