import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tokenizer } from 'tokenizers';
import { describe, expect, it } from 'vitest';
import { buildCorpus } from '../src/corpus.js';
import { SPECIAL_TOKENS, trainTokenizer } from '../src/tokenizer.js';

const small = { seed: 3, episodes: 3, sentences: 300, heldOut: 0.1 };

describe('corpus', () => {
  it('is deterministic for a seed and differs across seeds', async () => {
    const a = await buildCorpus(small);
    const b = await buildCorpus(small);
    const c = await buildCorpus({ ...small, seed: 4 });
    expect(a).toEqual(b);
    expect(a.train).not.toEqual(c.train);
  });

  it('holds environment prompts with actions, descriptions, and a disjoint held-out split', async () => {
    const { train, heldOut } = await buildCorpus(small);
    const all = [...train, ...heldOut];
    expect(all.some((l) => l.includes('kitchen'))).toBe(true);
    expect(all.some((l) => /tomato/.test(l))).toBe(true);
    expect(heldOut.length).toBeGreaterThan(0);
    const trainSet = new Set(train);
    expect(heldOut.every((l) => !trainSet.has(l))).toBe(true);
    expect(new Set(all).size).toBe(all.length);
  });
});

describe('tokenizer', () => {
  it('round-trips any text exactly, including bytes never seen in training', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tok-test-'));
    try {
      const { train } = await buildCorpus(small);
      writeFileSync(join(dir, 'train.txt'), train.join('\n'));
      const json = trainTokenizer([join(dir, 'train.txt')]);
      const tok = Tokenizer.fromString(json);
      const vocab = JSON.parse(json).model.vocab as Record<string, number>;
      SPECIAL_TOKENS.forEach((s, i) => {
        expect(vocab[s]).toBe(i);
      });
      for (const text of [
        'You are in the kitchen. open the fridge',
        ' take the chips',
        'naïve € ø Ω 🍕',
      ]) {
        const ids = (await tok.encode(text, null, { addSpecialTokens: false })).getIds();
        expect(ids.every((id) => id > 2)).toBe(true); // no <unk>
        expect(await tok.decode(ids, false)).toBe(text);
      }
      // Frequent words become single tokens.
      const ids = (await tok.encode(' kitchen', null, { addSpecialTokens: false })).getIds();
      expect(ids.length).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
