// Trains the default model's byte-level BPE tokenizer on the generated corpus and writes a
// standard tokenizer.json: ids 0, 1, 2 are <unk>, <s>, </s> (the LLaMA convention, pad = 0),
// then the full 256-symbol byte alphabet (so any text encodes, even bytes never seen in
// training), then every learned merge in order.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BPE, byteLevelAlphabet, byteLevelPreTokenizer, Tokenizer } from 'tokenizers';

export const SPECIAL_TOKENS = ['<unk>', '<s>', '</s>'] as const;

interface RawBpe {
  model: { vocab: Record<string, number>; merges: ([string, string] | string)[] };
}

/**
 * Trains on `files` and returns the tokenizer.json text. `maxVocab` keeps only the most frequent
 * merges (BPE learns them in order of frequency, so any prefix of the list is a valid tokenizer).
 */
export function trainTokenizer(files: string[], maxVocab = Number.POSITIVE_INFINITY): string {
  const t = new Tokenizer(BPE.empty());
  t.setPreTokenizer(byteLevelPreTokenizer(false, true));
  // (The native trainer prints a few blank progress lines straight to the terminal.)
  t.train(files);
  const dir = mkdtempSync(join(tmpdir(), 'poad-tok-'));
  try {
    t.save(join(dir, 'raw.json'), false);
    const raw = JSON.parse(readFileSync(join(dir, 'raw.json'), 'utf8')) as RawBpe;
    return JSON.stringify(rebuild(raw, maxVocab), null, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function rebuild(raw: RawBpe, maxVocab: number): unknown {
  const vocab: Record<string, number> = {};
  const add = (tok: string) => {
    if (!(tok in vocab)) vocab[tok] = Object.keys(vocab).length;
  };
  SPECIAL_TOKENS.forEach(add);
  for (const ch of [...byteLevelAlphabet()].sort()) add(ch);
  const merges = raw.model.merges
    .map((m) => (Array.isArray(m) ? m : (m.split(' ') as [string, string])))
    .slice(0, Math.max(0, maxVocab - Object.keys(vocab).length));
  for (const [a, b] of merges) add(a + b);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content, id) => ({
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
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: '<unk>',
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const corpus = resolve(process.argv[2] ?? 'build/corpus');
  const out = resolve(process.argv[3] ?? 'build/tokenizer.json');
  const json = trainTokenizer([join(corpus, 'train.txt')]);
  writeFileSync(out, json);
  const size = Object.keys((JSON.parse(json) as RawBpe).model.vocab).length;
  console.log(`tokenizer: ${size} tokens -> ${out}`);
}
