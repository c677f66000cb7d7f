import type * as tf from '@tensorflow/tfjs-core';
import { checkIds } from './batch.js';
import type { AdapterOption, CausalLM } from './causal-lm.js';
import type { KVCache } from './decoder.js';
import { ModelInputError } from './errors.js';
import { SeededRng } from './rng.js';
import { checkSampling, logSoftmaxAt, type SamplingOptions, sampleToken } from './sampling.js';
import { tidyNested } from './variable.js';

/** Options of {@link generate}. */
export interface GenerateOptions extends SamplingOptions, AdapterOption {
  /** Most tokens to produce. Default 32. */
  maxNewTokens?: number;
  /** Stop after producing any of these ids (the stop token is included in the output). */
  stopTokenIds?: readonly number[];
  /** Seed of the sampler. Default 0. */
  seed?: number;
  /** Reuse the KV cache between steps (default true); false recomputes the whole sequence. */
  useCache?: boolean;
}

/** What {@link generate} produced. */
export interface GenerateResult {
  /** The new token ids (without the prompt). */
  tokens: number[];
  /** log π(token | context) over the full vocabulary at temperature 1, per new token. */
  logProbs: number[];
  /** log-probability of each token under the filtered, tempered sampling distribution. */
  samplerLogProbs: number[];
  /** True when a stop token ended generation. */
  stopped: boolean;
}

function disposeCache(c: KVCache | undefined): void {
  for (const e of c ?? []) {
    e.k.dispose();
    e.v.dispose();
  }
}

/** Logits of the last row of a pass over `ids`, plus the new cache when asked. */
function step(
  model: CausalLM,
  ids: number[],
  past: KVCache | undefined,
  adapter: ReturnType<CausalLM['useAdapter']>,
  wantCache: boolean,
): { logits: tf.Tensor; cache?: KVCache } {
  return tidyNested(() => {
    const out = model.forward({
      ids: Int32Array.from(ids),
      batch: 1,
      seq: ids.length,
      past,
      adapter,
      wantCache,
      outputRows: [ids.length - 1],
    });
    const logits = model.head(out.hidden);
    return wantCache ? { logits, cache: out.cache } : { logits };
  });
}

/**
 * Sample a continuation of `prompt` token by token with a KV cache. Seeded: the same seed gives
 * the same tokens. Returns the ids and their temperature-1 full-vocabulary log-probs (what a
 * policy-gradient learner stores) along with the sampler's own log-probs.
 */
export async function generate(
  model: CausalLM,
  prompt: readonly number[],
  opts: GenerateOptions = {},
): Promise<GenerateResult> {
  checkIds('prompt', prompt as number[], model.config.vocabSize, false);
  checkSampling(opts);
  const maxNew = opts.maxNewTokens ?? 32;
  if (!Number.isInteger(maxNew) || maxNew < 0) {
    throw new ModelInputError('maxNewTokens', `must be an integer >= 0, got ${maxNew}`);
  }
  const stops = new Set(opts.stopTokenIds ?? []);
  const rng = new SeededRng(opts.seed ?? 0);
  const adapter = model.useAdapter(opts);
  const useCache = opts.useCache !== false;
  const res: GenerateResult = { tokens: [], logProbs: [], samplerLogProbs: [], stopped: false };
  const seqIds = [...prompt];
  let cache: KVCache | undefined;
  let next: number[] = [...prompt];
  try {
    while (res.tokens.length < maxNew) {
      const out = useCache
        ? step(model, next, cache, adapter, true)
        : step(model, seqIds, undefined, adapter, false);
      if (useCache) {
        disposeCache(cache);
        cache = out.cache;
      }
      const logits = await out.logits.data();
      out.logits.dispose();
      const { token, samplerLogProb } = sampleToken(logits, opts, rng);
      res.tokens.push(token);
      res.logProbs.push(logSoftmaxAt(logits, token));
      res.samplerLogProbs.push(samplerLogProb);
      seqIds.push(token);
      next = [token];
      if (stops.has(token)) {
        res.stopped = true;
        break;
      }
    }
  } finally {
    disposeCache(cache);
  }
  return res;
}
