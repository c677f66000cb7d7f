import { activeFusedOps, initBackend, setFusedOps } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { createCausalLM } from '../src/causal-lm.js';
import { SeededRng } from '../src/rng.js';
import { tinyConfig } from './configs.js';
import { randomIds } from './helpers.js';

// initBackend('wasm') installs @poad/tfjs-native's fused ops when its addon is built (CI installs
// OpenBLAS and builds it). The model must give the same numbers with and without them.
await initBackend('wasm');
const fusedAvailable = activeFusedOps() !== null;
if (!fusedAvailable && process.env.CI) {
  throw new Error('CI builds @poad/tfjs-native, so initBackend("wasm") must install fused ops');
}

function close(a: ArrayLike<number>, b: ArrayLike<number>, tol: number): void {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs((a[i] as number) - (b[i] as number)) / (1 + Math.abs(b[i] as number));
    worst = Math.max(worst, d);
  }
  expect(worst).toBeLessThan(tol);
}

/** Run `fn` once with the fused ops and once with the TF.js compositions. */
async function both<T>(fn: () => Promise<T> | T): Promise<[T, T]> {
  const saved = activeFusedOps();
  expect(saved).not.toBeNull();
  const withFused = await fn();
  setFusedOps(null);
  try {
    expect(activeFusedOps()).toBeNull();
    return [withFused, await fn()];
  } finally {
    setFusedOps(saved);
  }
}

describe.runIf(fusedAvailable)('fused native ops in the model', () => {
  const cfg = tinyConfig({ num_hidden_layers: 2, hidden_size: 32, num_attention_heads: 4 });
  const rng = new SeededRng(7);
  const prompts = [randomIds(rng, 5, 61), randomIds(rng, 2, 61), randomIds(rng, 7, 61)];
  const actions = [randomIds(rng, 4, 61), randomIds(rng, 6, 61), randomIds(rng, 1, 61)];

  it('includes the fused attention op', () => {
    expect(typeof activeFusedOps()?.attention).toBe('function');
  });

  for (const restricted of [false, true]) {
    it(`token log-probs, entropies and LoRA gradients equal the TF.js path${restricted ? ' (restricted to allowed ids)' : ''}`, async () => {
      const model = createCausalLM(cfg, { seed: 3, lora: true, initStd: 0.2 });
      const opts = restricted
        ? {
            allowed: actions.map((a) =>
              a.map((t, k) => (k === 0 ? [t] : [t, ...randomIds(rng, 4, 61)])),
            ),
          }
        : {};
      // A non-zero B so the adapter contributes to the forward pass and every gradient is live.
      for (const v of model.policyVariables())
        v.assign(tf.randomNormal(v.shape, 0, 0.1, 'float32', 5));
      const run = () =>
        tf.tidy(() => {
          const vars = model.policyVariables();
          const { value, grads } = tf.variableGrads(() => {
            const s = model.tokenStats(prompts, actions, opts);
            return tf.add(tf.sum(s.logProbs), tf.mul(0.3, tf.sum(s.entropies))) as tf.Scalar;
          }, vars);
          const s = model.tokenStats(prompts, actions, opts);
          return {
            value: value.dataSync()[0] as number,
            logProbs: Array.from(s.logProbs.dataSync()),
            entropies: Array.from(s.entropies.dataSync()),
            grads: vars.map((v) => Array.from((grads[v.name] as tf.Tensor).dataSync())),
          };
        });
      const [f, p] = await both(run);
      close(f.logProbs, p.logProbs, 1e-5);
      close(f.entropies, p.entropies, 1e-5);
      close([f.value], [p.value], 1e-5);
      expect(f.grads.length).toBeGreaterThan(0);
      f.grads.forEach((g, i) => {
        close(g, p.grads[i] as number[], 1e-4);
      });
      model.dispose();
    });
  }

  it('prefix-shared scoring and cached generation equal the TF.js path', async () => {
    const model = createCausalLM(cfg, { seed: 4, initStd: 0.3 });
    const cands = [randomIds(rng, 3, 61), randomIds(rng, 5, 61), randomIds(rng, 1, 61)];
    const [fs, ps] = await both(() => model.scoreContinuations([prompts[0]!], [cands]));
    close(fs.flat(2), ps.flat(2), 1e-5);
    const [fg, pg] = await both(() =>
      model.generate(prompts[1]!, { maxNewTokens: 8, temperature: 0, seed: 1 }),
    );
    expect(fg.tokens).toEqual(pg.tokens);
    model.dispose();
  });

  it('a forward/backward step leaks no tensors with fused ops', () => {
    const model = createCausalLM(cfg, { seed: 5, lora: true });
    const step = () =>
      tf.tidy(() => {
        const { grads } = tf.variableGrads(
          () => tf.sum(model.tokenStats(prompts, actions).logProbs) as tf.Scalar,
          model.policyVariables(),
        );
        for (const g of Object.values(grads)) g.dataSync();
      });
    step();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 5; i++) step();
    expect(tf.memory().numTensors).toBe(before);
    model.dispose();
  });
});
