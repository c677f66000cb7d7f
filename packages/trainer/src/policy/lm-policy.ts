/**
 * `LmPolicy`, the policy that acts and learns: a `@poad/lora-model` causal LM as `@poad/ppo`'s
 * `TokenPolicy`. It holds the model and composes the pieces, each in its own module:
 * - text → ids: `prompt-encoding.ts` (the prompt format, the prompt and label caches);
 * - scoring labels: `label-scores.ts` (acting, and TWOSOME's update);
 * - generating text: `generation.ts` (open action spaces);
 * - the update's log-probs: `token-log-probs.ts`;
 * - the critic's values: `value-head-critic.ts` (the value head on cached frozen-base features,
 *   or on features through the critic's own adapter or the actor's);
 * - the row layout they share: `action-rows.ts`.
 * `EtpoLmPolicy` and `GroupLmPolicy` extend it with their own critic or reference.
 */
import type { TextTokenizer } from '@poad/hf-files';
import type { CausalLM, LoraAdapter } from '@poad/lora-model';
import type {
  GeneratedAction,
  GenerateOptions,
  IterationPhase,
  TokenBatch,
  TokenPolicy,
  TokenScores,
} from '@poad/ppo';
import { setGpuPhase } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { hiddenRows } from './action-rows.js';
import { generateActions } from './generation.js';
import { labelLogProbs, labelTokenLogProbs } from './label-scores.js';
import { PromptEncoder, type PromptFormat } from './prompt-encoding.js';
import { tokenLogProbs } from './token-log-probs.js';
import { type ValueCriticOptions, ValueHeadCritic } from './value-head-critic.js';

/**
 * Adapts a `@poad/lora-model` causal LM to `@poad/ppo`'s `TokenPolicy`:
 * - prompts and candidate labels are tokenized as the {@link PromptFormat} says (default
 *   `plain`: `<s>` + the observation's ids, a label's ids those of `' ' + label`, i.e. the tokens
 *   of `observation + ' ' + label` after the prompt with a byte-level BPE), cached per string;
 * - the actor is the LoRA policy (`tokenStats`: full-vocabulary log-probs and entropies, or
 *   renormalised over the label tree's continuations when the batch carries `allowed`);
 * - the critic is the value head on the frozen base's final hidden states, whose features are
 *   computed once per rollout in `prepareValues` and reused across PPO epochs (`critic` options:
 *   every layer's hidden states, a LoRA adapter of the critic's own, or the actor's features);
 * - candidate scoring shares each prompt's KV cache (`scoreContinuations`).
 */
export class LmPolicy implements TokenPolicy {
  private readonly encoder: PromptEncoder;
  private readonly valueHead: ValueHeadCritic;
  /**
   * Tokens generated between two reads of the drawn ids on webgpu (`stopCheckEvery` of
   * `generateBatch`) when a call does not say (training passes the run option `stopCheckEvery`,
   * default 8); 1 reads after every token. A larger value waits for the GPU less often and costs
   * at most that many − 1 decoder steps after the last row stops; the tokens are the same for
   * every value. cpu and wasm sample on the host and ignore it.
   */
  stopCheckEvery = 1;

  constructor(
    readonly model: CausalLM,
    readonly tokenizer: TextTokenizer,
    readonly stopTokenIds: readonly number[] = tokenizer.eosId === undefined
      ? []
      : [tokenizer.eosId],
    /** What the value head reads (default: the frozen base's final hidden states). */
    critic: ValueCriticOptions = {},
  ) {
    this.encoder = new PromptEncoder(tokenizer);
    this.valueHead = new ValueHeadCritic(model, critic);
  }

  /**
   * Samples an action for an open action space with the LoRA policy and the KV cache. The ids are
   * returned exactly as generated (stop token included); the text is their decoding without
   * special tokens. The seed of each call is drawn from the trainer's generator.
   */
  async generate(prompt: Int32Array, options: GenerateOptions): Promise<GeneratedAction> {
    return (await this.generateBatch([prompt], options))[0]!;
  }

  /**
   * {@link generate} for several prompts at once: one decoder pass per token for all of them. The
   * seeds are drawn from the trainer's generator in prompt order, as calls of `generate` would
   * draw them, so each prompt gets what `generate` would give it.
   */
  generateBatch(
    prompts: readonly Int32Array[],
    options: GenerateOptions,
  ): Promise<GeneratedAction[]> {
    return generateActions(this.model, this.tokenizer, prompts, options, {
      stopTokenIds: this.stopTokenIds,
      stopCheckEvery: this.stopCheckEvery,
    });
  }

  /** How observations become prompts (default `plain`). */
  get promptFormat(): PromptFormat {
    return this.encoder.format;
  }

  /**
   * Switches how observations become prompts and labels their ids (see {@link PromptFormat});
   * set it before the first prompt is encoded, as `createLmAgent` does.
   */
  setPromptFormat(format: PromptFormat): void {
    this.encoder.setFormat(format);
  }

  /**
   * The trainer's phase (acting, values, update) becomes the GPU phase that the programs and
   * reads that follow are counted in (`gpuCounters` of `@poad/tfjs-kernels`, on webgpu).
   */
  enterPhase(phase: IterationPhase): void {
    setGpuPhase(phase);
  }

  /** Forgets cached base features (see `Agent.beginIteration`). */
  clearFeatureCache(): void {
    this.valueHead.clear();
  }

  get actorVariables(): tf.Variable[] {
    return this.model.policyVariables();
  }

  get criticVariables(): tf.Variable[] {
    return this.valueHead.variables;
  }

  encodePrompt(observation: string): Promise<Int32Array> {
    return this.encoder.prompt(observation);
  }

  encodeContinuations(_observation: string, candidates: readonly string[]): Promise<Int32Array[]> {
    return this.encoder.labelIds(candidates);
  }

  scoreTokens(batch: TokenBatch): TokenScores {
    const s = tokenLogProbs(this.model, batch, 'policy');
    return { logProbs: s.logProbs, entropies: s.entropies };
  }

  /** TWOSOME's update: each prompt once, its KV cache shared by its candidates (differentiable). */
  scoreCandidateTokens(
    prompts: readonly Int32Array[],
    candidates: readonly (readonly Int32Array[])[],
  ): tf.Tensor1D {
    return labelTokenLogProbs(this.model, prompts, candidates);
  }

  scoreCandidates(
    prompts: readonly Int32Array[],
    candidates: readonly (readonly Int32Array[])[],
  ): Promise<Float32Array[][]> {
    return labelLogProbs(this.model, prompts, candidates);
  }

  /**
   * On webgpu a rollout's values are computed in one batch when it ends (`valuesAtRolloutEnd` of
   * `@poad/ppo`): the frozen base runs over all its samples in a few passes instead of one pass
   * per step, each of which costs the same number of GPU programs whatever its size. CPU backends
   * keep one batch per step, and so does a critic whose features are not cached (they would be
   * computed in one pass over every sample).
   */
  get valuesAtRolloutEnd(): boolean {
    return tf.getBackend() === 'webgpu' && this.valueHead.cachesFeatures;
  }

  prepareValues(prompts: readonly Int32Array[], actions: readonly Int32Array[]): Promise<void> {
    return this.valueHead.prepare(prompts, actions);
  }

  tokenValues(batch: TokenBatch): tf.Tensor1D {
    return this.valueHead.tokenValues(batch.prompts, batch.actions);
  }

  promptValues(prompts: readonly Int32Array[]): tf.Tensor1D {
    return this.valueHead.promptValues(prompts);
  }

  /**
   * Final hidden states with `adapter` (undefined: the frozen base) at the positions that predict
   * each action token, rows concatenated: one per action token, or one (the last prompt token)
   * for an empty action (`hiddenRows` of `action-rows.ts`).
   */
  protected hiddenRows(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[],
    adapter: LoraAdapter | undefined,
  ): tf.Tensor2D {
    return hiddenRows(this.model, prompts, actions, adapter);
  }
}
