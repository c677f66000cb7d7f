import type { Tensor1D, Tensor2D, Variable } from '@tensorflow/tfjs-core';

/**
 * A batch of (prompt, action) token sequences for one teacher-forced pass.
 *
 * Row i is the prompt `prompts[i]` followed by the action `actions[i]`. The action ids are the
 * ones the trainer stored, exactly as scored or generated; the policy never re-tokenises text.
 */
export interface TokenBatch {
  /** Prompt token ids, one array per row, as returned by {@link TokenPolicy.encodePrompt}. */
  readonly prompts: readonly Int32Array[];
  /** Action token ids, one array per row (each with at least one id). */
  readonly actions: readonly Int32Array[];
  /**
   * Column count L of every `[B, L]` result: at least the longest action. Columns at or beyond a
   * row's action length are padding; the trainer masks them out, so they may hold any finite
   * value (the policy must not let them affect the real columns).
   */
  readonly width: number;
  /**
   * Optional restriction of the token space (`tokenSpace: 'labels'`): `allowed[i][k]` lists the
   * token ids that may follow row i's prompt and action tokens w_<k, with `actions[i][k]` among
   * them. When given, `scoreTokens` returns log-probs and entropies of the next-token
   * distribution renormalised over those ids; a position with a single allowed id has
   * log-prob 0 and entropy 0.
   */
  readonly allowed?: readonly (readonly Int32Array[])[];
}

/**
 * Per-token results of the actor for a {@link TokenBatch}. Each tensor is either a padded
 * `[B, L]` matrix (entry (i, k) for token k of row i) or the rows concatenated without padding,
 * a flat `[Σ_i actions[i].length]` vector (the form `@poad/lora-model`'s `tokenStats` returns).
 */
export interface TokenScores {
  /**
   * log π(w_k | o_i, w_<k), the full-vocabulary log-softmax at temperature 1 gathered at the
   * stored token w_k (renormalised over `allowed[i][k]` when the batch has `allowed`).
   * Differentiable w.r.t. the actor variables.
   */
  readonly logProbs: Tensor2D | Tensor1D;
  /**
   * Entropy of the full-vocabulary distribution at the position that predicts w_k (of the
   * renormalised distribution over `allowed[i][k]` when the batch has `allowed`).
   * Differentiable w.r.t. the actor variables.
   */
  readonly entropies: Tensor2D | Tensor1D;
}

/** Options the trainer passes to {@link TokenPolicy.generate} for open action spaces. */
export interface GenerateOptions {
  /** Largest number of new tokens (`maxNewTokens`). */
  readonly maxTokens: number;
  /** Sampling temperature (the original code samples at 0.5; stored log-probs use 1). */
  readonly temperature: number;
  /** Keep only the k most likely tokens when sampling (0 = no top-k filter). */
  readonly topK: number;
  /** Pick the most likely token at each position instead of sampling. */
  readonly greedy: boolean;
  /** The trainer's seeded uniform generator in [0, 1); use it for every random choice. */
  readonly random: () => number;
  /**
   * Tokens to generate between two reads of the drawn ids where sampling runs on the device
   * (`stopCheckEvery`); a policy may ignore it. It must not change the tokens.
   */
  readonly stopCheckEvery?: number;
}

/** A generated action for an open action space. */
export interface GeneratedAction {
  /** Generated ids, stop token included; these exact ids are stored and trained on. */
  readonly tokenIds: Int32Array;
  /** The text sent to the environment (usually the decoded ids without special tokens). */
  readonly text: string;
}

/**
 * The parts of a training iteration, as a trainer tells its policy (see
 * {@link TokenPolicy.enterPhase}): `acting` chooses actions (scoring or generating them),
 * `values` computes the critic's values of the rollout and its bootstraps, `update` learns from
 * the rollout.
 */
export type IterationPhase = 'acting' | 'values' | 'update';

/**
 * The structural interface `@poad/ppo` needs from a language-model agent: an actor (causal LM,
 * typically with LoRA adapters) and a critic (a value head, typically on the frozen base model).
 * Any object with these members works; `@poad/lora-model` satisfies it through a thin adapter in
 * the apps.
 *
 * Contract:
 * - The trainer calls the tensor methods inside `tf.tidy`/`tf.variableGrads`; they must be
 *   synchronous and must not dispose their inputs or keep tensors alive between calls.
 * - `tokenValues(batch)` column 0 equals `promptValues(batch.prompts)`: both are V(o), read at
 *   the last real prompt token. Column k is V(o, w_<k), the value before action token k.
 * - Padding never influences real columns, and rows never influence each other.
 */
export interface TokenPolicy {
  /** Token ids of an observation used as a prompt (BOS included if the model uses one). */
  encodePrompt(observation: string): Int32Array | Promise<Int32Array>;
  /**
   * In-context token ids of each candidate action label as it is scored after the prompt (for
   * LLaMA: the ids of `observation + ' ' + label` after the prompt ids). One non-empty array per
   * candidate, in the order given.
   */
  encodeContinuations(
    observation: string,
    candidates: readonly string[],
  ): Int32Array[] | Promise<Int32Array[]>;
  /** Teacher-forced actor pass: per-token log-probs and entropies (padded or flat, see {@link TokenScores}). */
  scoreTokens(batch: TokenBatch): TokenScores;
  /**
   * Critic pass: V(o_i, w_<k) per action token, padded `[B, width]` or flat `[Σ lengths]`.
   * Differentiable w.r.t. the critic. The base model is frozen, so an adapter may cache its
   * features per (prompt, action) across epochs and only apply the value head here.
   */
  tokenValues(batch: TokenBatch): Tensor2D | Tensor1D;
  /**
   * Critic pass over prompts only: `[B]`, V(o_i). Differentiable w.r.t. the critic variables.
   * With `tokenSpace: 'labels'` the trainer passes `allowed`: `allowed[i]` lists the ids that may
   * start row i's next action (the first tokens of its valid labels; empty: no restriction), as
   * `TokenBatch.allowed` does for `tokenValues`. A critic whose value depends on the policy's
   * token space (ETPO's soft value E_π[Q̄] − β·KL(π ‖ π̄)) uses them; a value head ignores them.
   */
  promptValues(prompts: readonly Int32Array[], allowed?: readonly Int32Array[]): Tensor1D;
  /**
   * Optional, asynchronous preparation of critic inputs. The base model is frozen, so its
   * features can be computed once and reused across epochs; `tokenValues` and `promptValues`
   * must be synchronous (they run inside `tf.variableGrads`). The trainer awaits this hook
   * before it needs values for rows: once per rollout step, before every bootstrap, and once per
   * iteration with every sample of the rollout before the update (an adapter may drop older
   * cached entries then). An empty action array means only V(o) is needed. Callers of
   * `ppoUpdate` on their own must call it themselves.
   */
  prepareValues?(prompts: readonly Int32Array[], actions: readonly Int32Array[]): Promise<void>;
  /**
   * Optional: true when the rollout may compute the critic's values of all its steps in one
   * batch when it ends, rather than one batch per step. The policy does not change during a
   * rollout, so the values are the same numbers up to float rounding (a batch of another shape
   * may sum in another order); a policy opts in where one large batch saves work, e.g. on a GPU,
   * where each batch costs a fixed number of programs. Unset: one batch per step.
   */
  readonly valuesAtRolloutEnd?: boolean;
  /** Samples an action for an open action space (`actions === null`). Optional otherwise. */
  generate?(
    prompt: Int32Array,
    options: GenerateOptions,
  ): GeneratedAction | Promise<GeneratedAction>;
  /**
   * Optional fast path of {@link generate} for several prompts at once (e.g. one decoder pass per
   * token for all of them). Must return what `generate` returns for each prompt in order, drawing
   * from `options.random` as those calls would in that order, so that a run is the same with or
   * without it.
   */
  generateBatch?(
    prompts: readonly Int32Array[],
    options: GenerateOptions,
  ): GeneratedAction[] | Promise<GeneratedAction[]>;
  /**
   * Optional fast path for TWOSOME's update: per-token log-probs of every candidate continuing
   * its prompt, differentiable w.r.t. the actor variables, flat in prompt, candidate, token
   * order (`result` = the concatenation of `candidates[j][c]`'s log-probs). Equals
   * `scoreTokens` on the rows (prompt j, candidate c) to float tolerance; a model can run each
   * prompt once for all its candidates. Synchronous (runs inside `tf.variableGrads`).
   */
  scoreCandidateTokens?(
    prompts: readonly Int32Array[],
    candidates: readonly (readonly Int32Array[])[],
  ): Tensor1D;
  /**
   * Optional fast path for the TWOSOME sampler: per-token log-probs (full vocabulary,
   * temperature 1) of every candidate continuing its prompt, e.g. with the prompt's KV cache
   * shared by its candidates. Must equal `scoreTokens` on the same rows (to float tolerance).
   * `result[j][c][k]` = log π(candidates[j][c][k] | prompts[j], candidates[j][c][<k]).
   */
  scoreCandidates?(
    prompts: readonly Int32Array[],
    candidates: readonly (readonly Int32Array[])[],
  ): Promise<Float32Array[][]>;
  /**
   * Optional: called when the trainer enters a phase of an iteration, before the phase's first
   * call of the policy and before the reads of what it computes, so that the device work that
   * follows can be attributed to it (the trainer's language-model policy counts GPU programs and
   * reads per phase). Never changes what is computed.
   */
  enterPhase?(phase: IterationPhase): void;
  /** Variables the actor optimiser (AdamW) trains, e.g. the LoRA A/B matrices. */
  readonly actorVariables: readonly Variable[];
  /** Variables the critic optimiser (Adam) trains, e.g. the value-head MLP. */
  readonly criticVariables: readonly Variable[];
}
