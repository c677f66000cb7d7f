/**
 * Generating text: an action for an open action space, sampled from the LoRA policy token by
 * token with the KV cache (`generateBatch` of `@poad/lora-model`).
 */
import type { TextTokenizer } from '@poad/hf-files';
import { type CausalLM, generateBatch } from '@poad/lora-model';
import type { GeneratedAction, GenerateOptions } from '@poad/ppo';
import { idLists } from './action-rows.js';

/** What a policy fixes for every generation: where an action ends and how often to look. */
export interface GenerationDefaults {
  /** Ids that end an action (kept in it). */
  readonly stopTokenIds: readonly number[];
  /** Tokens between two reads of the drawn ids when `options.stopCheckEvery` is unset. */
  readonly stopCheckEvery: number;
}

/**
 * One action per prompt, with one decoder pass per token for all of them. Each prompt's seed is
 * drawn from `options.random` in prompt order, so each prompt gets what a call for it alone
 * would give it. The ids are returned exactly as generated (stop token included); the text is
 * their decoding without special tokens.
 */
export async function generateActions(
  model: CausalLM,
  tokenizer: TextTokenizer,
  prompts: readonly Int32Array[],
  options: GenerateOptions,
  defaults: GenerationDefaults,
): Promise<GeneratedAction[]> {
  const seeds = prompts.map(() => Math.floor(options.random() * 2 ** 31));
  const out = await generateBatch(model, idLists(prompts), {
    maxNewTokens: options.maxTokens,
    temperature: options.greedy ? 0 : options.temperature,
    topK: options.topK,
    stopTokenIds: [...defaults.stopTokenIds],
    seeds,
    stopCheckEvery: options.stopCheckEvery ?? defaults.stopCheckEvery,
  });
  return Promise.all(
    out.map(async (o) => {
      const ids = Int32Array.from(o.tokens);
      // Models may pad their vocabulary past the tokenizer's (e.g. to a multiple of 64): such
      // ids stay in the stored action exactly as sampled but have no text.
      const known = Array.from(ids).filter((t) => t < tokenizer.vocabSize);
      return {
        tokenIds: ids,
        text: await tokenizer.decode(known, { skipSpecialTokens: true }),
      };
    }),
  );
}
