// Open action spaces: LmPolicy generates for all prompts at once, and each prompt gets what one
// call of generate gives it, with the seeds drawn from the trainer's generator in the same order.
import { loadCausalLM } from '@poad/lora-model';
import { SeededRng } from '@poad/ppo';
import { initBackend } from '@poad/tfjs-kernels';
import { beforeAll, describe, expect, it } from 'vitest';
import { LmPolicy } from '../src/policy/lm-policy.js';
import { tinyModelDir } from './tiny-model.js';

let dir = '';
beforeAll(async () => {
  dir = await tinyModelDir();
  await initBackend('cpu');
});

describe('LmPolicy.generateBatch', () => {
  it('equals one generate call per prompt in order (ids, text and draws from the generator)', async () => {
    const model = await loadCausalLM(dir, { seed: 3, lora: { r: 4, alpha: 8 }, valueHead: true });
    const lm = new LmPolicy(model, model.tokenizer!);
    const prompts = await Promise.all(
      [
        'You are in the kitchen.',
        'A door.',
        'You are in the living room and the television is off; what next?',
      ].map((o) => lm.encodePrompt(o)),
    );
    expect(new Set(prompts.map((p) => p.length)).size).toBe(3);
    for (const greedy of [false, true]) {
      const options = (rng: SeededRng) => ({
        maxTokens: 12,
        temperature: 1,
        topK: 0,
        greedy,
        random: () => rng.float(),
      });
      const a = new SeededRng(11);
      const one = [];
      for (const p of prompts) one.push(await lm.generate(p, options(a)));
      const b = new SeededRng(11);
      const all = await lm.generateBatch(prompts, options(b));
      expect(all.map((g) => Array.from(g.tokenIds))).toEqual(
        one.map((g) => Array.from(g.tokenIds)),
      );
      expect(all.map((g) => g.text)).toEqual(one.map((g) => g.text));
      // Both consumed the generator alike: the next draws agree.
      expect(b.float()).toBe(a.float());
      expect(one.every((g) => g.tokenIds.length > 0)).toBe(true);
      // stopCheckEvery reaches generateBatch (checked there) and changes no token.
      lm.stopCheckEvery = 4;
      const every = await lm.generateBatch(prompts, options(new SeededRng(11)));
      expect(every.map((g) => Array.from(g.tokenIds))).toEqual(
        one.map((g) => Array.from(g.tokenIds)),
      );
      lm.stopCheckEvery = 0;
      await expect(lm.generateBatch(prompts, options(new SeededRng(11)))).rejects.toMatchObject({
        input: 'stopCheckEvery',
      });
      lm.stopCheckEvery = 1;
    }
    model.dispose();
  });
});
