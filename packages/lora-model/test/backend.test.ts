import { initBackend } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import * as pkg from '../src/index.js';

/** A one-layer model of `vocab_size` tokens, 16 wide. */
const oneLayer = (vocab_size: number) => ({
  vocab_size,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 1,
  num_attention_heads: 2,
});

// The model on the backends of @poad/tfjs-kernels (whose own tests cover choosing them).
describe('the model on cpu and wasm', () => {
  it('importing the package initialises no backend', () => {
    expect(typeof pkg.createCausalLM).toBe('function');
    expect(tf.engine().backendName ?? null).toBeNull();
    expect(tf.findBackendFactory('wasm')).toBeNull();
    expect(tf.findBackendFactory('cpu')).toBeNull();
  });

  it('full fine-tuning (embedding gradient through the row-scatter kernel) matches on cpu and wasm', async () => {
    const cfg = oneLayer(30);
    const grads: number[][] = [];
    for (const b of ['cpu', 'wasm'] as const) {
      await initBackend(b);
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
    const cfg = oneLayer(40);
    await initBackend('cpu');
    const a = pkg.createCausalLM(cfg, { seed: 1, initStd: 0.3 });
    const la = await a.logits([[1, 2, 3, 4]]);
    a.dispose();
    await initBackend('wasm');
    const b = pkg.createCausalLM(cfg, { seed: 1, initStd: 0.3 });
    const lb = await b.logits([[1, 2, 3, 4]]);
    b.dispose();
    let m = 0;
    for (let i = 0; i < la.length; i++)
      m = Math.max(m, Math.abs((la[i] as number) - (lb[i] as number)));
    expect(m).toBeLessThan(1e-5);
  });
});
