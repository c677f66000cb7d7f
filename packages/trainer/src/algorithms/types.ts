import type { OptionsSchema, ResolveOptions } from '@poad/config';
import type { VecEnv } from '@poad/envs-core';
import type { TextTokenizer } from '@poad/hf-files';
import type { CausalLM, LoraAdapter } from '@poad/lora-model';
import type { RolloutConfig, TokenPolicy } from '@poad/ppo';
import type { RunTrainer } from '../run-trainer.js';

/**
 * What every algorithm's config has: the seed of every random choice of a run, the rollout's
 * length T (steps per environment per iteration, or the longest episode of a group rollout) and
 * the sampler's settings, which evaluation and `play` act with too.
 */
export interface AlgorithmConfigBase
  extends Pick<
    RolloutConfig,
    | 'numSteps'
    | 'greedy'
    | 'candidateNormalisation'
    | 'tokenSpace'
    | 'maxNewTokens'
    | 'temperature'
    | 'topK'
  > {
  readonly seed: number;
}

/** The policy an algorithm trains, built on a language model, and what it saves besides the LoRA adapter. */
export interface AlgorithmPolicy {
  /** The policy the trainer drives (actor, critic, scoring, generation). */
  readonly policy: TokenPolicy & { clearFeatureCache(): void; dispose?(): void };
  /**
   * LoRA adapters saved beside the actor's, by subfolder (PEFT format; e.g. ETPO's critic and
   * target critic).
   */
  readonly adapters: Readonly<Record<string, LoraAdapter>>;
}

/**
 * One algorithm, as the training commands, `train()`, `compare` and the playground see it. Adding
 * an algorithm is one such entry in one module (see `ppo.ts`, `etpo.ts`) and one line in
 * `registry.ts`, or `registerAlgorithm(entry)` from outside the package; nothing else names it.
 */
export interface AlgorithmEntry<C extends AlgorithmConfigBase = AlgorithmConfigBase> {
  /** The `--algo` value, e.g. `poad`. */
  readonly name: string;
  /** One line for `--help` and the docs. */
  readonly summary: string;
  /**
   * The fields of its config: its flags (kebab-case), config-file and config.json keys, and
   * their defaults, ranges and meanings. `seed` is one of them.
   */
  readonly configSchema: OptionsSchema;
  /**
   * The config from explicit values and layered defaults (presets) over the schema's defaults:
   * every value checked once, errors naming the field as `options` says.
   */
  resolveConfig(explicit: Readonly<Record<string, unknown>>, options: ResolveOptions): C;
  /** Whether the model gets a value head (PPO's critic) when it is loaded for this algorithm. */
  readonly valueHead: boolean;
  /** Builds the policy on a loaded model (its LoRA adapter is the actor). */
  createPolicy(
    model: CausalLM,
    tokenizer: TextTokenizer,
    config: C,
    o: { stopTokenIds?: readonly number[] },
  ): AlgorithmPolicy;
  /**
   * Run options the algorithm's config decides (e.g. `envs` = groups × group size for the
   * group-relative algorithms): above the preset's, and a different explicit value is refused.
   */
  runOptions?(config: C): Readonly<Record<string, unknown>>;
  /**
   * True when an iteration plays whole episodes (`numSteps` caps an episode, as in the
   * group-relative algorithms), so that it takes a varying number of env steps: the run then
   * stops once it has taken `--env-steps` of them, not after `env-steps / (envs × num-steps)`
   * iterations, and its progress counts env steps.
   */
  readonly episodicIterations?: boolean;
  /** Wraps the algorithm's trainer over `policy` and `env` as the run loop's {@link RunTrainer}. */
  createTrainer(o: { policy: TokenPolicy; env: VecEnv; config: C }): RunTrainer;
  /**
   * The config reduced to what decides the numbers, for recognising equal runs (`compare
   * --reuse`): fields the algorithm ignores dropped, fields whose unset value means another's
   * filled in. Default: the config as it is.
   */
  settingsOf?(config: C): Record<string, unknown>;
}
