import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokenizerFromJson } from '../src/bpe-tokenizer.js';
import { CheckpointError } from '../src/errors.js';
import { loadTokenizer, type TextTokenizer } from '../src/tokenizer.js';
import { trainByteLevelTokenizer } from '../src/tokenizer-train.js';
import { withTempDir } from './test-helpers.js';

// The embedded models' tokenizers (files of @poad/default-model, read in place).
const MODELS = ['model', 'models/default-code', 'models/informative-prior'].map((d) =>
  readFileSync(new URL(`../../default-model/${d}/tokenizer.json`, import.meta.url), 'utf8'),
);

const FIXED = [
  '',
  ' ',
  'walk to the kitchen',
  'Task: heat the pancake.\nYou see: fridge (closed), microwave (closed).\nAction: open the fridge',
  "it's what they've done, we'll see; I'd say you're right, I'm sure",
  '  two  spaces   and\ttabs\n\n\nnewlines  ',
  '<s>Action:</s> <unk> <s><s> a<s>b',
  'def build_model():\n    from sklearn.svm import SVC\n    return SVC(C=1.0, probability=True)\n',
  'numbers 12345 3.14159 -7e10 0x1F',
  'unicode: café naïve 東京 😀👍🏽 ✓ — “quotes”',
  '\u0000\u0001 control \u007f bytes',
];

const textArb = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc
    .array(
      fc.constantFrom(
        'the',
        ' pancake',
        'microwave',
        '\n',
        ' ',
        '  ',
        '<s>',
        '</s>',
        "'s",
        '123',
        '(',
        ')',
        ':',
        'é',
        '😀',
        'import',
        ' sklearn',
        '.',
      ),
      { maxLength: 30 },
    )
    .map((xs) => xs.join('')),
);

async function sameAsNative(json: string, opts: { bosToken?: string; eosToken?: string } = {}) {
  const native = await loadTokenizer(json, opts);
  const ours = tokenizerFromJson(json, opts);
  expect(ours.vocabSize).toBe(native.vocabSize);
  expect([ours.bosId, ours.eosId, ours.padId]).toEqual([native.bosId, native.eosId, native.padId]);
  const check = async (text: string) => {
    for (const addSpecialTokens of [false, true]) {
      const ids = await ours.encode(text, { addSpecialTokens });
      expect(ids, JSON.stringify(text)).toEqual(await native.encode(text, { addSpecialTokens }));
      for (const skipSpecialTokens of [false, true]) {
        expect(await ours.decode(ids, { skipSpecialTokens })).toBe(
          await native.decode(ids, { skipSpecialTokens }),
        );
      }
    }
  };
  for (const t of FIXED) await check(t);
  await fc.assert(fc.asyncProperty(textArb, check), { numRuns: 300, seed: 7 });
  // Arbitrary id sequences decode the same (partial UTF-8 sequences included).
  await fc.assert(
    fc.asyncProperty(fc.array(fc.nat(native.vocabSize - 1), { maxLength: 20 }), async (ids) => {
      expect(await ours.decode(ids)).toBe(await native.decode(ids));
    }),
    { numRuns: 300, seed: 8 },
  );
  for (const id of [0, 1, 5, native.vocabSize - 1]) {
    expect(ours.idToToken(id)).toBe(native.idToToken(id));
    expect(ours.tokenToId(ours.idToToken(id)!)).toBe(id);
  }
  return { native, ours };
}

describe('tokenizerFromJson (byte-level BPE without native code)', () => {
  it.each(MODELS.map((json, i) => [i, json] as const))(
    'gives the native ids and texts on embedded tokenizer %i',
    async (_i, json) => {
      await sameAsNative(json, { bosToken: '<s>', eosToken: '</s>' });
    },
  );

  it('adds the special tokens of a TemplateProcessing post-processor as the native library does', async () => {
    const json = JSON.parse(MODELS[0]!) as Record<string, unknown>;
    json.post_processor = {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '<s>', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '</s>', type_id: 0 } },
      ],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: {
        '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] },
        '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] },
      },
    };
    const { ours } = await sameAsNative(JSON.stringify(json));
    const ids = await ours.encode('open the fridge');
    expect(ids[0]).toBe(1);
    expect(ids.at(-1)).toBe(2);
  });

  it('matches a freshly trained tokenizer with add_prefix_space', async () => {
    await withTempDir(async (dir) => {
      const file = join(dir, 'corpus.txt');
      await writeFile(
        file,
        'grab the apple\nopen the fridge\nput the tomato on the plate\n'.repeat(50),
      );
      const trained = JSON.parse(
        await trainByteLevelTokenizer([file], { vocabSize: 290, specialTokens: ['<pad>', '<s>'] }),
      ) as { pre_tokenizer: Record<string, unknown> };
      trained.pre_tokenizer.add_prefix_space = true;
      await sameAsNative(JSON.stringify(trained));
    });
  });

  it('refuses pipelines it does not implement, naming the component', () => {
    const base = JSON.parse(MODELS[0]!) as Record<string, unknown>;
    const bad = (patch: Record<string, unknown>, what: RegExp) => {
      let err: unknown;
      try {
        tokenizerFromJson({ ...base, ...patch }, { fileName: 'x/tokenizer.json' });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(CheckpointError);
      expect((err as Error).message).toMatch(what);
      expect((err as Error).message).toMatch(/x\/tokenizer\.json/);
    };
    bad({ normalizer: { type: 'NFC' } }, /normalizer NFC/);
    bad({ pre_tokenizer: { type: 'Metaspace' } }, /pre-tokenizer Metaspace/);
    bad({ model: { type: 'Unigram', vocab: [] } }, /model Unigram/);
    bad({ post_processor: { type: 'RobertaProcessing' } }, /post-processor RobertaProcessing/);
    bad({ decoder: { type: 'Metaspace' } }, /decoder Metaspace/);
    expect(() => tokenizerFromJson('{ nope')).toThrow(/not valid JSON/);
    expect(() => tokenizerFromJson(MODELS[0]!, { bosToken: '<nope>' })).toThrow(
      /BOS token "<nope>" is not in the vocabulary/,
    );
  });

  it('refuses ids outside the vocabulary when decoding', async () => {
    const tok: TextTokenizer = tokenizerFromJson(MODELS[0]!);
    await expect(tok.decode([3, 1e6])).rejects.toThrow(/ids\[1\] = 1000000/);
  });
});
