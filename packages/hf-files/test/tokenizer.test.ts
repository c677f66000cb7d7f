import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mulberry32 } from '@poad/dev-kit';
import fc from 'fast-check';
import { Tokenizer } from 'tokenizers';
import { beforeAll, describe, expect, it } from 'vitest';
import { CheckpointError } from '../src/errors.js';
import { loadTokenizer, type TextTokenizer, withByteLevelDecoder } from '../src/tokenizer.js';
import { trainByteLevelTokenizer } from '../src/tokenizer-train.js';
import { tokenizerIdCount } from '../src/tokenizer-vocab.js';
import { withTempDir } from './test-helpers.js';

const WORDS = [
  'walk',
  'to',
  'the',
  'kitchen',
  'grab',
  'apple',
  'open',
  'fridge',
  'put',
  'tomato',
  'on',
  'plate',
];
const SPECIALS = ['<pad>', '<s>', '</s>'];

function corpus(seed: number, lines: number): string {
  const u = mulberry32(seed);
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const n = 3 + Math.floor(u() * 6);
    out.push(Array.from({ length: n }, () => WORDS[Math.floor(u() * WORDS.length)]).join(' '));
  }
  return `${out.join('\n')}\n`;
}

let json: string;
let tok: TextTokenizer;

beforeAll(async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'corpus.txt');
    await writeFile(file, corpus(1, 400));
    json = await trainByteLevelTokenizer([file], { vocabSize: 300, specialTokens: SPECIALS });
  });
  tok = await loadTokenizer(json, { bosToken: '<s>', eosToken: '</s>', padToken: 0 });
});

describe('trainByteLevelTokenizer', () => {
  it('holds the specials first, all 256 byte symbols and learned merges, up to vocabSize', () => {
    expect(tokenizerIdCount(json)).toBe(300);
    expect(tok.vocabSize).toBe(300);
    expect(SPECIALS.map((s) => tok.tokenToId(s))).toEqual([0, 1, 2]);
    expect(tok.tokenToId('Ġkitchen')).toBeGreaterThanOrEqual(3 + 256);
    expect(JSON.parse(json).decoder.type).toBe('ByteLevel');
  });
  it('rejects impossible sizes', async () => {
    await expect(trainByteLevelTokenizer([], { vocabSize: 100 })).rejects.toBeInstanceOf(
      CheckpointError,
    );
  });
});

describe('loadTokenizer', () => {
  it('encodes corpus words into few tokens and decodes them back exactly', async () => {
    const text = 'walk to the kitchen and open the fridge';
    const ids = await tok.encode(text, { addSpecialTokens: false });
    expect(ids.length).toBeLessThan(text.length / 2);
    expect(await tok.decode(ids)).toBe(text);
  });
  it('round-trips any text exactly, bytes it never saw included', async () => {
    for (const text of ['ø € 日本語 🙂', '  two  spaces\n\ttab', '', 'Ġ literal', '<s>kept</s>']) {
      expect(await tok.decode(await tok.encode(text, { addSpecialTokens: false }))).toBe(text);
    }
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 30 }), async (text) => {
        const ids = await tok.encode(text, { addSpecialTokens: false });
        expect(ids.every((id) => id >= 0 && id < tok.vocabSize)).toBe(true);
        expect(await tok.decode(ids)).toBe(text);
      }),
      { numRuns: 200, seed: 41 },
    );
  });
  it('matches special tokens in text and reports their ids', async () => {
    expect([tok.bosId, tok.eosId, tok.padId]).toEqual([1, 2, 0]);
    const ids = await tok.encode('<s>open fridge</s>');
    expect(ids[0]).toBe(1);
    expect(ids.at(-1)).toBe(2);
    expect(await tok.decode(ids, { skipSpecialTokens: true })).toBe('open fridge');
    expect(tok.idToToken(2)).toBe('</s>');
    expect(tok.tokenToId('no-such-token')).toBeUndefined();
  });
  it('encodeBatch equals encode', async () => {
    const texts = ['grab apple', 'put tomato on plate', 'ø'];
    const batch = await tok.encodeBatch(texts);
    for (const [i, t] of texts.entries()) expect(batch[i]).toEqual(await tok.encode(t));
  });
  it('the decoder fix is what makes decoding exact', async () => {
    const raw = JSON.parse(json);
    raw.decoder = null;
    const plain = Tokenizer.fromString(JSON.stringify(raw));
    const ids = await tok.encode('open the fridge', { addSpecialTokens: false });
    expect(await plain.decode(ids, false)).not.toBe('open the fridge');
    expect((withByteLevelDecoder(raw).decoder as { type: string }).type).toBe('ByteLevel');
    const fixed = await loadTokenizer(JSON.stringify(raw));
    expect(await fixed.decode(ids)).toBe('open the fridge');
    const other = { ...raw, pre_tokenizer: { type: 'Whitespace' } };
    expect(withByteLevelDecoder(other)).toBe(other);
  });
  it('loads from a file or folder and takes special tokens from tokenizer_config.json', async () => {
    await withTempDir(async (dir) => {
      await writeFile(join(dir, 'tokenizer.json'), json);
      await writeFile(
        join(dir, 'tokenizer_config.json'),
        JSON.stringify({ bos_token: { content: '<s>' }, eos_token: '</s>', pad_token: null }),
      );
      for (const source of [dir, join(dir, 'tokenizer.json')]) {
        const t = await loadTokenizer(source);
        expect([t.bosId, t.eosId, t.padId]).toEqual([1, 2, undefined]);
        expect(await t.decode(await t.encode('grab apple'))).toBe('grab apple');
      }
    });
  });
  it('fails with typed errors for missing files, bad JSON, unknown specials and bad ids', async () => {
    await withTempDir(async (dir) => {
      await expect(loadTokenizer(join(dir, 'none.json'))).rejects.toMatchObject({
        code: 'missing_file',
        file: join(dir, 'none.json'),
      });
      await expect(loadTokenizer(dir)).rejects.toMatchObject({
        code: 'missing_file',
        file: join(dir, 'tokenizer.json'),
      });
    });
    await expect(loadTokenizer('{"model": 3')).rejects.toMatchObject({ code: 'tokenizer' });
    await expect(loadTokenizer('{"model": {"type": "Nope"}}')).rejects.toMatchObject({
      code: 'tokenizer',
    });
    await expect(loadTokenizer(json, { eosToken: '<eos>' })).rejects.toMatchObject({
      code: 'tokenizer',
    });
    await expect(loadTokenizer(json, { padToken: 300 })).rejects.toMatchObject({
      code: 'tokenizer',
    });
    await expect(tok.decode([5, 300])).rejects.toThrow(RangeError);
  });
});
