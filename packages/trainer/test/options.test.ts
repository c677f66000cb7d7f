// How command lines resolve into trainer configurations (no training).
import { describe, expect, it } from 'vitest';
import { trainingOptionsOf } from '../src/cli.js';
import { etpoConfigOf, ppoConfigOf } from '../src/resolve.js';
import { tinyVirtualHomeApp as vh } from './tiny-app.js';

describe('resolved options', () => {
  it('--intra-lambda reaches the PPO config; unset it is null (λ_w = λ)', async () => {
    const set = await trainingOptionsOf(vh, ['--intra-lambda', '1']);
    expect(ppoConfigOf(vh, set)).toMatchObject({ intraLambda: 1, gaeLambda: 0.95 });
    const unset = await trainingOptionsOf(vh, []);
    expect(ppoConfigOf(vh, unset).intraLambda).toBeNull();
    await expect(trainingOptionsOf(vh, ['--intra-lambda', '2'])).rejects.toThrow(/--intra-lambda/);
  });

  it('--advantage-normalisation chunk:4 reaches the config; a bad mode is refused with the forms', async () => {
    const o = await trainingOptionsOf(vh, [
      '--algo',
      'twosome',
      '--advantage-normalisation',
      'chunk:4',
    ]);
    expect(ppoConfigOf(vh, o).advantageNormalisation).toBe('chunk:4');
    expect('advantageNormalisation' in ppoConfigOf(vh, await trainingOptionsOf(vh, []))).toBe(
      false,
    );
    await expect(trainingOptionsOf(vh, ['--advantage-normalisation', 'chunk:0'])).rejects.toThrow(
      /expected masked, nan-trick, none or chunk:N/,
    );
  });

  it("--algo etpo: POAD's sampler and rollout settings plus β, τ and the optimiser from the preset", async () => {
    const o = await trainingOptionsOf(vh, ['--algo', 'etpo', '--tau', '0.02']);
    expect(o).toMatchObject({ beta: 0.1, tau: 0.02, reference: 'base', optimizer: 'adamw' });
    expect(ppoConfigOf(vh, o).algorithm).toBe('poad');
    const c = etpoConfigOf(vh, o);
    expect(c).toMatchObject({ beta: 0.1, tau: 0.02, optimizer: 'adamw', lr: 5e-4, numSteps: 16 });
    expect('algorithm' in c).toBe(false);
    // PPO runs carry no ETPO settings.
    const p = await trainingOptionsOf(vh, []);
    expect([p.beta, p.tau, p.reference, p.optimizer]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('per-algorithm presets', () => {
  // The DataSciCoding learning rates were tuned per algorithm (docs/results.md); ETPO takes POAD's.
  const dsc = { ...vh, family: 'datascicoding' as const };
  const lrs = async (argv: string[]) => {
    const o = await trainingOptionsOf(dsc, argv);
    return [o.lr, o.criticLr];
  };

  it("DataSciCoding: NTPO's own learning rates, POAD's for POAD and ETPO; a flag still wins", async () => {
    expect(await lrs(['--algo', 'poad'])).toEqual([1e-3, 3e-3]);
    expect(await lrs(['--algo', 'etpo'])).toEqual([1e-3, 3e-3]);
    expect(await lrs(['--algo', 'ntpo'])).toEqual([3e-4, 9e-4]);
    expect(await lrs(['--algo', 'ntpo', '--lr', '2e-4'])).toEqual([2e-4, 9e-4]);
    const ntpo = await trainingOptionsOf(dsc, ['--algo', 'ntpo']);
    expect(ppoConfigOf(dsc, ntpo)).toMatchObject({ algorithm: 'ntpo', lr: 3e-4, criticLr: 9e-4 });
    // Every other setting stays shared.
    const poad = await trainingOptionsOf(dsc, ['--algo', 'poad']);
    expect({ ...ppoConfigOf(dsc, ntpo), algorithm: 0, lr: 0, criticLr: 0 }).toEqual({
      ...ppoConfigOf(dsc, poad),
      algorithm: 0,
      lr: 0,
      criticLr: 0,
    });
  });

  it('VirtualHome: one set of learning rates for every algorithm', async () => {
    for (const algo of ['poad', 'ntpo', 'twosome', 'archer']) {
      const o = await trainingOptionsOf(vh, ['--algo', algo]);
      expect([o.lr, o.criticLr]).toEqual([5e-4, 1e-3]);
    }
  });
});

describe('the model option', () => {
  it("an app's defaultModel is the --model default; 'default-code' names the embedded code model", async () => {
    const { defaultCodeModelPath, defaultModelPath, informativePriorModelPath } = await import(
      '@poad/default-model'
    );
    const { resolveModelPath } = await import('../src/model-path.js');
    expect((await trainingOptionsOf(vh, [])).model).toBe('default');
    const code = { ...vh, defaultModel: 'default-code' };
    expect((await trainingOptionsOf(code, [])).model).toBe('default-code');
    expect((await trainingOptionsOf(code, ['--model', 'default'])).model).toBe('default');
    expect(resolveModelPath('default-code')).toBe(defaultCodeModelPath);
    expect(resolveModelPath('default')).toBe(defaultModelPath);
    expect(resolveModelPath('default-code')).not.toBe(defaultModelPath);
    expect(resolveModelPath('informative-prior')).toBe(informativePriorModelPath);
  });
});
