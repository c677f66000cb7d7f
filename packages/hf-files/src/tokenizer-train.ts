import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointError } from './errors.js';
import { withByteLevelDecoder } from './tokenizer.js';

/** Options for {@link trainByteLevelTokenizer}. */
export interface TrainTokenizerOptions {
  /** Total ids including special tokens and the 256 byte symbols (at least 256 + specials). */
  vocabSize: number;
  /** Special tokens, given ids 0, 1, … in this order (e.g. `['<pad>', '<s>', '</s>']`). */
  specialTokens?: readonly string[];
}

/**
 * Train a byte-level BPE tokenizer on text files with the `tokenizers` package and return its
 * `tokenizer.json` text. The result always holds all 256 byte symbols (so any text encodes and
 * decodes back exactly), the special tokens first, then the learned merges in the order they were
 * learned, cut to `vocabSize`. The library's trainer has a fixed configuration (its vocabulary
 * stops at 30000 entries), so sizes above that give fewer ids than asked.
 */
export async function trainByteLevelTokenizer(
  files: readonly string[],
  options: TrainTokenizerOptions,
): Promise<string> {
  const specials = [...(options.specialTokens ?? [])];
  if (new Set(specials).size !== specials.length || specials.some((s) => s.length === 0)) {
    throw new CheckpointError(
      'tokenizer',
      '<options>',
      'specialTokens must be distinct non-empty strings',
    );
  }
  const { BPE, Tokenizer, byteLevelAlphabet, byteLevelPreTokenizer } = await import('tokenizers');
  const alphabet = byteLevelAlphabet().sort();
  if (
    !Number.isSafeInteger(options.vocabSize) ||
    options.vocabSize < alphabet.length + specials.length
  ) {
    throw new CheckpointError(
      'tokenizer',
      '<options>',
      `vocabSize must be an integer >= ${alphabet.length + specials.length} (256 byte symbols + special tokens), got ${options.vocabSize}`,
    );
  }
  const tok = new Tokenizer(BPE.empty());
  tok.setPreTokenizer(byteLevelPreTokenizer(false, true));
  tok.train([...files]);
  const tmp = await mkdtemp(join(tmpdir(), 'poad-tokenizer-'));
  let trained: { model: { vocab: Record<string, number>; merges: (string | [string, string])[] } };
  try {
    tok.save(join(tmp, 'tokenizer.json'), false);
    trained = JSON.parse(await readFile(join(tmp, 'tokenizer.json'), 'utf8'));
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }

  const vocab = new Map<string, number>();
  for (const s of specials) vocab.set(s, vocab.size);
  for (const c of alphabet) if (!vocab.has(c)) vocab.set(c, vocab.size);
  const learned = Object.entries(trained.model.vocab).sort((a, b) => a[1] - b[1]);
  for (const [t] of learned) {
    if (vocab.size >= options.vocabSize) break;
    if (!vocab.has(t)) vocab.set(t, vocab.size);
  }
  return JSON.stringify(
    withByteLevelDecoder({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: specials.map((content, id) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      })),
      normalizer: null,
      pre_tokenizer: {
        type: 'ByteLevel',
        add_prefix_space: false,
        trim_offsets: true,
        use_regex: true,
      },
      post_processor: null,
      decoder: null,
      model: {
        type: 'BPE',
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: false,
        ignore_merges: false,
        vocab: Object.fromEntries(vocab),
        merges: trained.model.merges
          .map((m): [string, string] => {
            if (Array.isArray(m)) return m;
            const i = m.indexOf(' ');
            return [m.slice(0, i), m.slice(i + 1)];
          })
          .filter(([a, b]) => vocab.has(a) && vocab.has(b) && vocab.has(a + b)),
      },
    }),
  );
}
