import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The folder of the embedded default model: `config.json` (Hugging Face LLaMA config),
 * `model.safetensors`, `tokenizer.json` and `training.json` (how it was built). Pass it wherever
 * a Hugging Face model folder is expected, e.g. `train({ model: defaultModelPath, … })` or
 * `loadCausalLM(defaultModelPath)`.
 */
export const defaultModelPath: string = fileURLToPath(new URL('../model', import.meta.url));

/**
 * Held-out text of the default model's pretraining corpus (one sentence per line), on which
 * training runs measure perplexity before and after RL fine-tuning.
 */
export const heldOutTextPath: string = fileURLToPath(new URL('../heldout.txt', import.meta.url));

/** The first `limit` non-empty lines of the held-out text. */
export function heldOutLines(limit = 200): string[] {
  return readFileSync(heldOutTextPath, 'utf8').split('\n').filter(Boolean).slice(0, limit);
}
