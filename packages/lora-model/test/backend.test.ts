import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import * as pkg from '../src/index.js';

describe('initBackend', () => {
  it('importing the package initialises no backend', () => {
    expect(typeof pkg.createCausalLM).toBe('function');
    expect(tf.engine().backendName ?? null).toBeNull();
    expect(tf.findBackendFactory('wasm')).toBeNull();
    expect(tf.findBackendFactory('cpu')).toBeNull();
  });

  it('auto falls back to wasm when the native packages are absent, and says so', async () => {
    const info = await pkg.initBackend('auto');
    // The native bindings are optional; on machines without them auto must land on wasm.
    expect(['tensorflow', 'wasm']).toContain(info.backend);
    expect(tf.getBackend()).toBe(info.backend);
    if (info.backend === 'wasm') {
      // With the optional @poad/tfjs-native addon built, wasm runs with native kernels and says so.
      expect([
        '@tensorflow/tfjs-backend-wasm',
        '@tensorflow/tfjs-backend-wasm + @poad/tfjs-native',
      ]).toContain(info.source);
      expect(info.description).toMatch(
        info.source.includes('native') ? /^wasm \+ native kernels \(.+, \d+ threads?\)$/ : /^wasm$/,
      );
    }
  });

  it('POAD_NATIVE_KERNELS=0 keeps the stock wasm kernels', async () => {
    process.env.POAD_NATIVE_KERNELS = '0';
    try {
      const { execFileSync } = await import('node:child_process');
      const out = execFileSync(
        process.execPath,
        [
          '--import',
          'tsx',
          '-e',
          "import { initBackend } from '@poad/lora-model'; console.log(JSON.stringify(await initBackend('wasm')))",
        ],
        { encoding: 'utf8', env: { ...process.env, POAD_NATIVE_KERNELS: '0' } },
      );
      expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({
        backend: 'wasm',
        source: '@tensorflow/tfjs-backend-wasm',
        description: 'wasm',
      });
    } finally {
      delete process.env.POAD_NATIVE_KERNELS;
    }
  });

  it("threads sets the native kernels' thread count and reports it; bad counts are rejected", async () => {
    const before = await pkg.initBackend('wasm');
    if (before.threads === undefined) {
      // Stock wasm kernels: nothing to set, and nothing claimed.
      expect((await pkg.initBackend('wasm', { threads: 3 })).threads).toBeUndefined();
    } else {
      try {
        for (const n of [1, 3]) {
          const info = await pkg.initBackend('wasm', { threads: n });
          expect(info.threads).toBe(n);
          expect(info.description).toMatch(new RegExp(`, ${n} threads?\\)$`));
        }
        // Without the option the count stays what it was last set to.
        expect((await pkg.initBackend('wasm')).threads).toBe(3);
      } finally {
        await pkg.initBackend('wasm', { threads: before.threads });
      }
    }
    for (const bad of [0, -1, 1.5]) {
      await expect(pkg.initBackend('wasm', { threads: bad })).rejects.toThrow(
        /threads must be a positive integer/,
      );
    }
  });

  it('explicit choices switch backends; unavailable ones throw a typed error', async () => {
    expect((await pkg.initBackend('cpu')).backend).toBe('cpu');
    expect(tf.getBackend()).toBe('cpu');
    expect((await pkg.initBackend('wasm')).backend).toBe('wasm');
    let native = true;
    try {
      await import('@tensorflow/tfjs-node' as string);
    } catch {
      native = false;
    }
    if (!native) {
      await expect(pkg.initBackend('tensorflow')).rejects.toBeInstanceOf(
        pkg.BackendUnavailableError,
      );
    }
    await expect(pkg.initBackend('nope' as 'cpu')).rejects.toBeInstanceOf(
      pkg.BackendUnavailableError,
    );
  });

  it('full fine-tuning (embedding gradient through the row-scatter kernel) matches on cpu and wasm', async () => {
    const cfg = {
      vocab_size: 30,
      hidden_size: 16,
      intermediate_size: 24,
      num_hidden_layers: 1,
      num_attention_heads: 2,
    };
    const grads: number[][] = [];
    for (const b of ['cpu', 'wasm'] as const) {
      await pkg.initBackend(b);
      const m = pkg.createCausalLM(cfg, { seed: 2, initStd: 0.3, fullFineTune: true });
      const embed = m.weights.embed as unknown as tf.Variable;
      const { grads: g } = tf.variableGrads(
        () => tf.neg(tf.sum(m.tokenStats([[1, 2, 2]], [[3, 1, 4]]).logProbs)) as tf.Scalar,
        [embed],
      );
      const ge = g[embed.name] as tf.Tensor;
      expect(ge.shape).toEqual([30, 16]);
      grads.push(Array.from(ge.dataSync()));
      ge.dispose();
      m.dispose();
    }
    const [a, b] = grads as [number[], number[]];
    expect(a.some((x) => x !== 0)).toBe(true);
    let m = 0;
    for (let i = 0; i < a.length; i++)
      m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
    expect(m).toBeLessThan(1e-5);
  });

  it('models compute the same logits on cpu and wasm', async () => {
    const cfg = {
      vocab_size: 40,
      hidden_size: 16,
      intermediate_size: 24,
      num_hidden_layers: 1,
      num_attention_heads: 2,
    };
    await pkg.initBackend('cpu');
    const a = pkg.createCausalLM(cfg, { seed: 1, initStd: 0.3 });
    const la = await a.logits([[1, 2, 3, 4]]);
    a.dispose();
    await pkg.initBackend('wasm');
    const b = pkg.createCausalLM(cfg, { seed: 1, initStd: 0.3 });
    const lb = await b.logits([[1, 2, 3, 4]]);
    b.dispose();
    let m = 0;
    for (let i = 0; i < la.length; i++)
      m = Math.max(m, Math.abs((la[i] as number) - (lb[i] as number)));
    expect(m).toBeLessThan(1e-5);
  });
});
