// The value head's features: the final hidden state ('last') or every layer's ('layers'), with
// the adapter off or with an adapter of the caller's (a critic's own LoRA); heads on either kind
// saved and loaded back.
import { join } from 'node:path';
import { CheckpointError } from '@poad/hf-files';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { causalLMFromTensors, createCausalLM } from '../src/causal-lm.js';
import { loadValueHead, saveValueHead } from '../src/checkpoint.js';
import { featureRows, featureSize } from '../src/features.js';
import { LoraAdapter } from '../src/lora.js';
import { SeededRng } from '../src/rng.js';
import { tinyConfig } from './configs.js';
import { maxAbsDiff, randomIds, tempDir, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

const H = 32;

/** Three prompts and actions of the tiny vocabulary, and their teacher-forced rows. */
function batchOf(seed: number, vocab: number) {
  const rng = new SeededRng(seed);
  const prompts = [randomIds(rng, 5, vocab), randomIds(rng, 3, vocab), randomIds(rng, 6, vocab)];
  const actions = [randomIds(rng, 2, vocab), randomIds(rng, 4, vocab), randomIds(rng, 1, vocab)];
  const seq = Math.max(...prompts.map((p, i) => p.length + actions[i]!.length));
  const ids = new Int32Array(prompts.length * seq);
  const rows: number[] = [];
  prompts.forEach((p, i) => {
    ids.set([...p, ...actions[i]!], i * seq);
    for (let k = 0; k < actions[i]!.length; k++) rows.push(i * seq + p.length - 1 + k);
  });
  return { prompts, actions, input: { ids, batch: prompts.length, seq }, rows };
}

describe("'layers' features", () => {
  it('are numLayers × hidden wide: block i is layer i through the final norm, the last block the final hidden state', async () => {
    const model = createCausalLM(tinyConfig({ num_hidden_layers: 3 }), { seed: 4, initStd: 0.2 });
    const b = batchOf(1, model.config.vocabSize);
    expect(featureSize(model.config, 'layers')).toBe(3 * H);
    expect(featureSize(model.config, 'last')).toBe(H);
    const layers = tf.tidy(() => featureRows(model, b.input, b.rows, 'layers'));
    const last = tf.tidy(() => featureRows(model, b.input, b.rows, 'last'));
    expect(layers.shape).toEqual([b.rows.length, 3 * H]);
    expect(last.shape).toEqual([b.rows.length, H]);
    const l = (await layers.data()) as Float32Array;
    const f = (await last.data()) as Float32Array;
    const block = (x: Float32Array, r: number, i: number) =>
      x.subarray(r * 3 * H + i * H, r * 3 * H + (i + 1) * H);
    for (let r = 0; r < b.rows.length; r++) {
      expect(maxAbsDiff(block(l, r, 2), f.subarray(r * H, (r + 1) * H))).toBe(0);
    }
    // Block i is the final hidden state of the model cut after layer i (same weights, same final
    // norm): an independent computation of what the decoder's layer outputs should be.
    const host = await model.exportWeights();
    for (const i of [0, 1]) {
      const cut = causalLMFromTensors(tinyConfig({ num_hidden_layers: i + 1 }), host);
      const t = tf.tidy(() => featureRows(cut, b.input, b.rows, 'last'));
      const c = (await t.data()) as Float32Array;
      for (let r = 0; r < b.rows.length; r++) {
        expect(maxAbsDiff(block(l, r, i), c.subarray(r * H, (r + 1) * H))).toBeLessThan(1e-5);
      }
      // The blocks differ from one another (the comparison is not of equal things).
      expect(maxAbsDiff(block(l, 0, i), block(l, 0, 2))).toBeGreaterThan(1e-3);
      t.dispose();
      cut.dispose();
    }
    tf.dispose([layers, last]);
    model.dispose();
  });

  it('feed a value head of that width: token values, prompt values and base features agree', async () => {
    const model = createCausalLM(tinyConfig(), {
      seed: 6,
      initStd: 0.2,
      lora: true,
      valueHead: { hiddenSizes: [16], features: 'layers' },
    });
    expect(model.valueHead?.features).toBe('layers');
    expect(model.valueHead?.sizes).toEqual([2 * H, 16, 1]);
    const b = batchOf(2, model.config.vocabSize);
    const feats = await model.baseFeatures(b.prompts, b.actions);
    expect(feats.dim).toBe(2 * H);
    expect(feats.data.length).toBe(b.rows.length * 2 * H);
    const values = await model.tokenValues(b.prompts, b.actions);
    const boot = await model.promptValues(b.prompts);
    expect(
      maxAbsDiff(
        boot,
        values.map((v) => v[0]!),
      ),
    ).toBeLessThan(1e-5);
    const pf = await model.promptFeatures(b.prompts);
    expect(pf.length).toBe(b.prompts.length * 2 * H);
    model.dispose();
  });

  it('a pass with an adapter of its own moves them, and the gradient reaches that adapter', async () => {
    const model = createCausalLM(tinyConfig(), { seed: 8, initStd: 0.2, lora: true });
    const critic = LoraAdapter.create(model.config, { r: 4, alpha: 8 }, 11);
    for (const v of critic.variables()) v.assign(tf.randomNormal(v.shape, 0, 0.2, 'float32', 3));
    const b = batchOf(3, model.config.vocabSize);
    const base = tf.tidy(() => featureRows(model, b.input, b.rows, 'layers'));
    const own = tf.tidy(() =>
      featureRows(model, { ...b.input, adapter: critic }, b.rows, 'layers'),
    );
    expect(maxAbsDiff(await base.data(), await own.data())).toBeGreaterThan(1e-3);
    const { value, grads } = tf.variableGrads(
      () =>
        tf.sum(
          tf.square(featureRows(model, { ...b.input, adapter: critic }, b.rows, 'layers')),
        ) as tf.Scalar,
      [...critic.variables(), ...model.policyVariables()],
    );
    const norms = await Promise.all(
      [...critic.variables(), ...model.policyVariables()].map(
        // A variable the loss does not reach gets no gradient (null): norm 0.
        async (v) => (grads[v.name] ? (await tf.norm(grads[v.name]!).data())[0]! : 0),
      ),
    );
    const n = critic.variables().length;
    // Every pair of the critic's adapter gets a gradient (its B is non-zero), the actor's none.
    expect(norms.slice(0, n).every((x) => x > 0)).toBe(true);
    expect(norms.slice(n).every((x) => x === 0)).toBe(true);
    tf.dispose([base, own, value, ...Object.values(grads).filter((g) => g)]);
    critic.dispose();
    model.dispose();
  });

  it('cannot be asked of a pass that runs its last layer on some rows only', () => {
    const model = createCausalLM(tinyConfig(), { seed: 1 });
    expect(() =>
      tf.tidy(() => {
        model.forward({
          ids: new Int32Array([1, 2]),
          batch: 1,
          seq: 2,
          outputRows: [1],
          allLayers: true,
        });
      }),
    ).toThrow(/allLayers cannot be combined with outputRows/);
    model.dispose();
  });
});

describe('a saved value head', () => {
  it("loads back with the features its width says ('layers' or 'last'), bit for bit", async () => {
    for (const features of ['layers', 'last'] as const) {
      const model = createCausalLM(tinyConfig(), {
        seed: 12,
        valueHead: { hiddenSizes: [8], features },
      });
      for (const v of model.valueVariables())
        v.assign(tf.randomNormal(v.shape, 0, 0.3, 'float32', 2));
      const dir = await tempDir();
      await saveValueHead(model, dir);
      const other = createCausalLM(tinyConfig(), { seed: 12, valueHead: { hiddenSizes: [8] } });
      const head = await loadValueHead(other, dir);
      expect(head.features).toBe(features);
      const b = batchOf(5, model.config.vocabSize);
      expect(await other.tokenValues(b.prompts, b.actions)).toEqual(
        await model.tokenValues(b.prompts, b.actions),
      );
      model.dispose();
      other.dispose();
    }
  });

  it('of a width that fits neither kind is refused, naming the file', async () => {
    const model = createCausalLM(tinyConfig({ hidden_size: 16 }), {
      seed: 1,
      valueHead: { hiddenSizes: [8] },
    });
    const dir = await tempDir();
    await saveValueHead(model, dir);
    const other = createCausalLM(tinyConfig(), { seed: 1 });
    const err = await loadValueHead(other, dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointError);
    expect(String((err as Error).message)).toContain(join(dir, 'value_head.safetensors'));
    expect(String((err as Error).message)).toMatch(/input width 16 fits neither/);
    expect(other.valueHead).toBeNull();
    model.dispose();
    other.dispose();
  });
});
