/** Perplexity of an agent's policy (LoRA adapter on) on lines of text. */
import type { TextTokenizer } from '@poad/hf-files';
import { type CausalLM, tokenStats } from '@poad/lora-model';

/** Lines scored together in one `tokenStats` call. */
const LINES_PER_BATCH = 16;

/**
 * exp of the mean negative log-likelihood per token of `lines`, each line scored on its own after
 * the BOS token (id 1 when the tokenizer has none), its text tokenized without special tokens.
 */
export async function perplexity(
  model: CausalLM,
  tokenizer: TextTokenizer,
  lines: readonly string[],
): Promise<number> {
  let nll = 0;
  let n = 0;
  for (let i = 0; i < lines.length; i += LINES_PER_BATCH) {
    const chunk = lines.slice(i, i + LINES_PER_BATCH);
    const ids = await Promise.all(
      chunk.map((l) => tokenizer.encode(l, { addSpecialTokens: false })),
    );
    const bos = tokenizer.bosId ?? 1;
    const s = tokenStats(
      model,
      ids.map(() => [bos]),
      ids,
    );
    const lp = (await s.logProbs.data()) as Float32Array;
    s.logProbs.dispose();
    s.entropies.dispose();
    for (const v of lp) nll -= v;
    n += lp.length;
  }
  return Math.exp(nll / Math.max(1, n));
}
