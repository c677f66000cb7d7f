import type { OptionsSchema } from '@poad/config';
import type { VecEnv } from '@poad/envs-core';
import type { TextTokenizer } from '@poad/hf-files';
import type { CausalLM, LoraAdapter } from '@poad/lora-model';
import type { RolloutConfig, TokenPolicy } from '@poad/ppo';
import type { RunIterationReport, TrainerLike } from '../run-trainer.js';

/**
 * What every algorithm's config has: the seed of every random choice of a run, the rollout's
 * length T (steps per environment per iteration, or the longest episode of a group rollout) and
 * the sampler's settings, which evaluation and `play` act with too.
 */
export interface AlgorithmConfigBase
  extends Omit<RolloutConfig, 'truncationAsTermination' | 'stopCheckEvery'> {
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
 * What an algorithm needs of an environment (see `EnvTraits` of `@poad/envs-core`); an
 * environment that does not offer it is refused with the reason.
 */
export interface AlgorithmNeeds {
  /** Valid action labels at every step (a restricted action space, e.g. TWOSOME, ARCHER). */
  readonly labels?: boolean;
  /** Resets from a seed to the same start state, to play a group of episodes from one state. */
  readonly seededResets?: boolean;
}

/** The trainer an entry builds: any class with the skeleton's interface (see `TrainerBase`). */
export type AlgorithmTrainer<C, Report> = new (o: {
  policy: TokenPolicy;
  env: VecEnv;
  config: C;
}) => TrainerLike<unknown> & { iterate(): Promise<Report> };

/**
 * One algorithm, as the training commands, `train()`, `compare` and the playground see it. Adding
 * an algorithm is one such entry in one module (see `ppo.ts`, `etpo.ts`, `group.ts`) and one line
 * in `registry.ts`, or `registerAlgorithm(entry)` from outside the package; nothing else names it.
 * Its config is resolved once, with the run (`resolveRun`): the schema's fields under the
 * environment's preset, `fixed` over them, then `check`; the trainer gets that config as it is.
 */
export interface AlgorithmEntry<
  C extends AlgorithmConfigBase = AlgorithmConfigBase,
  Report = unknown,
> {
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
   * Config fields the entry decides and the user does not (not flags), e.g. `{ algorithm:
   * 'poad' }` of the PPO family's entries; they come first in the config.
   */
  readonly fixed?: Readonly<Record<string, string | number | boolean>>;
  /**
   * The rules between fields that the schema's per-field checks cannot state, run once on the
   * resolved config; throws a `UserError` naming the field and the fix.
   */
  check?(config: C): void;
  /** What it needs of an environment (default: nothing beyond the text interface). */
  readonly needs?: AlgorithmNeeds;
  /** Whether the model gets a value head (PPO's critic) when it is loaded for this algorithm. */
  readonly valueHead: boolean;
  /** Builds the policy on a loaded model (its LoRA adapter is the actor). */
  createPolicy(
    model: CausalLM,
    tokenizer: TextTokenizer,
    config: C,
    o: { stopTokenIds?: readonly number[] },
  ): AlgorithmPolicy;
  /** Its trainer class, constructed with the policy, the environments and the resolved config. */
  readonly Trainer: AlgorithmTrainer<C, Report>;
  /** One iteration of its trainer as the run loop's report (its metrics columns, its credit). */
  report(iteration: Report): RunIterationReport;
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
  /**
   * The config reduced to what decides the numbers, for recognising equal runs (`compare
   * --reuse`): fields the algorithm ignores dropped, fields whose unset value means another's
   * filled in. Default: the config as it is.
   */
  settingsOf?(config: C): Record<string, unknown>;
}
