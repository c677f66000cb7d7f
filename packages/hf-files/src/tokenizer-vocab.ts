import { CheckpointError } from './errors.js';

/**
 * The number of token ids a `tokenizer.json` text uses: one more than the largest id in its model
 * vocabulary and added tokens. Raises a {@link CheckpointError} (`tokenizer`) on malformed JSON.
 */
export function tokenizerIdCount(tokenizerJson: string, file = 'tokenizer.json'): number {
  let json: unknown;
  try {
    json = JSON.parse(tokenizerJson);
  } catch (cause) {
    throw new CheckpointError('tokenizer', file, 'tokenizer is not valid JSON', undefined, {
      cause,
    });
  }
  const root = json as { model?: { vocab?: unknown }; added_tokens?: unknown } | null;
  if (
    typeof root !== 'object' ||
    root === null ||
    typeof root.model !== 'object' ||
    root.model === null
  ) {
    throw new CheckpointError('tokenizer', file, 'tokenizer JSON has no "model" object');
  }
  let count = 0;
  const vocab = root.model.vocab;
  if (Array.isArray(vocab)) {
    count = vocab.length;
  } else if (typeof vocab === 'object' && vocab !== null) {
    for (const id of Object.values(vocab)) {
      if (typeof id === 'number' && id + 1 > count) count = id + 1;
    }
  }
  if (Array.isArray(root.added_tokens)) {
    for (const t of root.added_tokens as { id?: unknown }[]) {
      if (typeof t?.id === 'number' && t.id + 1 > count) count = t.id + 1;
    }
  }
  return count;
}

/**
 * Check that every id of a tokenizer fits the model's embedding (`vocab_size` rows). A tokenizer
 * may use fewer ids than `vocab_size` (models often pad the embedding), never more.
 */
export function checkTokenizerVocab(
  tokenizerJson: string,
  vocabSize: number,
  file = 'tokenizer.json',
): void {
  const count = tokenizerIdCount(tokenizerJson, file);
  if (count > vocabSize) {
    throw new CheckpointError(
      'vocab_mismatch',
      file,
      `tokenizer uses ids up to ${count - 1} but config vocab_size is ${vocabSize}; use the tokenizer that belongs to this model or enlarge vocab_size`,
    );
  }
}
