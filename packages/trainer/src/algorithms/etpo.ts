import {
  type EtpoConfig,
  type EtpoIterationReport,
  EtpoTrainer,
  etpoConfigSchema,
} from '@poad/etpo';
import { EtpoLmPolicy } from '../policy/etpo-lm-policy.js';
import { reportOf } from '../run-trainer.js';
import type { AlgorithmEntry, AlgorithmTrainer } from './types.js';

/** Subfolders of a saved ETPO agent that hold its critic and target-critic adapters. */
export const ETPO_ADAPTER_DIRS = { critic: 'critic', target: 'target' } as const;

/**
 * ETPO (`@poad/etpo`): token-level soft Q-learning on the soft BAD backup, KL-regularised towards
 * a reference policy. Its critic is a second LoRA adapter whose language-model head gives Q over
 * the vocabulary, with a Polyak-averaged target copy (`EtpoLmPolicy`; no value head); both are
 * saved as PEFT adapters in `critic/` and `target/` beside the actor's.
 */
export const etpo: AlgorithmEntry<EtpoConfig, EtpoIterationReport> & { name: 'etpo' } = {
  name: 'etpo',
  summary:
    'ETPO: token-level soft Q-learning on the soft BAD backup, KL-regularised towards a reference (--beta, --tau, --reference, --optimizer, --policy-loss, --critic-scale)',
  configSchema: etpoConfigSchema,
  valueHead: false,
  createPolicy(model, tokenizer, config, o) {
    const policy = new EtpoLmPolicy(model, tokenizer, {
      beta: config.beta,
      reference: config.reference,
      criticScale: config.criticScale,
      seed: config.seed,
      ...(o.stopTokenIds ? { stopTokenIds: o.stopTokenIds } : {}),
    });
    return {
      policy,
      adapters: {
        [ETPO_ADAPTER_DIRS.critic]: policy.critic,
        [ETPO_ADAPTER_DIRS.target]: policy.target,
      },
    };
  },
  // Its policy is the EtpoLmPolicy createPolicy builds.
  Trainer: EtpoTrainer as unknown as AlgorithmTrainer<EtpoConfig, EtpoIterationReport>,
  report(r) {
    // Soft TD error of every token: its soft-BAD target minus the soft value stored for it.
    const td = new Float64Array(r.targets.length);
    for (let k = 0; k < td.length; k++) td[k] = r.targets[k]! - r.buffer.values[k]!;
    return reportOf(
      r,
      { ...r.update, approxKl: null, clipFraction: null, skippedMinibatches: 0 },
      { level: 'token', values: td, name: 'soft TD errors y − V' },
    );
  },
};
