import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of the embedded default model: `config.json` (Hugging Face LLaMA config),
 * `model.safetensors`, `tokenizer.json` and `training.json` (how it was built). Pass it wherever
 * a Hugging Face model folder is expected, e.g. `train({ model: defaultModelPath, … })` or
 * `loadCausalLM(defaultModelPath)`.
 */
export const defaultModelPath: string = fileURLToPath(new URL('../model', import.meta.url));

/**
 * The id of `</s>`, which ends every text the embedded models were trained on, so a generated
 * action (e.g. a DataSciCoding program) ends with it. Their tokenizers declare no special tokens,
 * so a policy on them stops at this id rather than at a tokenizer's EOS.
 */
export const END_OF_TEXT_ID = 2;

/**
 * Held-out text of the default model's pretraining corpus (one sentence per line), on which
 * training runs measure perplexity before and after RL fine-tuning.
 */
export const heldOutTextPath: string = fileURLToPath(new URL('../heldout.txt', import.meta.url));

/** The first `limit` non-empty lines of the held-out text. */
export function heldOutLines(limit = 200): string[] {
  return readFileSync(heldOutTextPath, 'utf8').split('\n').filter(Boolean).slice(0, limit);
}

/**
 * The folder of the embedded code model of DataSciCoding (`--model default-code`): the default
 * model's architecture, pretrained on the environment's own prompts followed by scikit-learn
 * `build_model` bodies, and fix-it prompts followed by corrected bodies. Besides the Hugging Face
 * files it holds `training.json` and `heldout.jsonl` (held-out `{ prompt, completion }` samples).
 */
export const defaultCodeModelPath: string = fileURLToPath(
  new URL('../models/default-code', import.meta.url),
);

/**
 * The folder of the informative-prior variant of the default model (`--model informative-prior`):
 * the same architecture and pretraining steps, with procedural common sense about kitchens and
 * demonstrations in VirtualHome's own layout on foods and appliances no task uses added to the
 * corpus, so that its prior ranks sensible actions higher than the default model's does.
 * `heldout.txt` inside is its corpus's held-out text.
 */
export const informativePriorModelPath: string = fileURLToPath(
  new URL('../models/informative-prior', import.meta.url),
);

/** One held-out sample of the code model's corpus: a prompt and the text written after it. */
export interface HeldOutSample {
  prompt: string;
  completion: string;
}

/** The first `limit` held-out samples of a model folder's `heldout.jsonl` ([] when it has none). */
export function heldOutSamples(modelDir: string, limit = 64): HeldOutSample[] {
  let text: string;
  try {
    text = readFileSync(join(modelDir, 'heldout.jsonl'), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .slice(0, limit)
    .map((l) => JSON.parse(l) as HeldOutSample);
}
