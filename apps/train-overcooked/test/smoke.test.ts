import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import { TINY_RUN, trainingHarness } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';

const h = trainingHarness({
  app: 'apps/train-overcooked/src/main.ts',
  base: ['--model', DEFAULT_MODEL, ...TINY_RUN],
});

describe('npm run train:overcooked', () => {
  it('trains 2 iterations of TWOSOME on tomato-salad and resumes to 3', async () => {
    const a = await h.run(h.args('oc', 2, ['--algo', 'twosome', '--eval-episodes', '1']));
    expect(a.code, a.out).toBe(0);
    const b = await h.run(['--resume', h.dir('oc'), '--max-iterations', '3', '--quiet']);
    expect(b.code, b.out).toBe(0);
    expect(h.rows('oc')).toHaveLength(3);
    // TWOSOME takes the vocabulary; the preset's label token space is the token-level algorithms'.
    expect(h.json('oc', 'config.json')).toMatchObject({
      algo: 'twosome',
      tokenSpace: 'vocabulary',
    });
  });

  it("--algo etpo trains with the preset's label token space", async () => {
    const r = await h.run(h.args('oc-etpo', 1, ['--algo', 'etpo']));
    expect(r.code, r.out).toBe(0);
    expect(h.json('oc-etpo', 'config.json')).toMatchObject({
      algo: 'etpo',
      tokenSpace: 'labels',
      gamma: 0.99,
    });
    const [row] = h.rows('oc-etpo');
    expect(Number.isFinite(row!.valueLoss) && row!.klToReference! >= 0).toBe(true);
  });
});
