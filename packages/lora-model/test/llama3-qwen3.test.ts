import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError } from '@poad/hf-files';
import { activeFusedOps, type FusedOps, setFusedOps } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CausalLM, createCausalLM } from '../src/causal-lm.js';
import { loadAdapter, loadCausalLM, saveAdapter, saveCausalLM } from '../src/checkpoint.js';
import type { HFModelConfig } from '../src/config.js';
import { SeededRng } from '../src/rng.js';
import { MODULE_NAMES } from '../src/weights.js';
import { LLAMA3_SCALING, llama3Config, qwen3Config, tinyConfig } from './configs.js';
import { centralDifference, maxAbsDiff, randomIds, tempDir, useTestBackend } from './helpers.js';

beforeAll(useTestBackend);

const V = 61;

const llama3 = (): HFModelConfig => llama3Config();
const qwen3 = (): HFModelConfig => qwen3Config();

function bitsEqual(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  return x.every((v, i) => v === y[i]);
}

/** Give every LoRA B a random value so the adapter changes the output. */
function randomizeB(model: CausalLM, seed: number, std = 0.3): void {
  const rng = new SeededRng(seed);
  for (const l of model.adapter?.layers ?? []) {
    for (const pair of Object.values(l)) {
      if (!pair) continue;
      pair.B.assign(tf.tensor(rng.fillNormal(new Float32Array(pair.B.size), std), pair.B.shape));
    }
  }
}

const ALL_MODULES = MODULE_NAMES;

describe('save → load round trip', () => {
  for (const [name, make] of [
    ['llama3 rope scaling', llama3],
    ['qwen3', qwen3],
  ] as const) {
    it(`${name}: bit-exact weights and logits, config.json written and read back`, async () => {
      const model = createCausalLM(make(), { seed: 41, initStd: 0.2 });
      const dir = await tempDir();
      await saveCausalLM(model, dir);
      const json = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
      const loaded = await loadCausalLM(dir);
      expect(loaded.config).toEqual(model.config);
      const a = await model.exportWeights();
      const b = await loaded.exportWeights();
      expect([...b.keys()]).toEqual([...a.keys()]);
      for (const [k, t] of a)
        expect(bitsEqual(t.data, b.get(k)?.data as Float32Array), k).toBe(true);
      const ids = [randomIds(new SeededRng(2), 20, V), randomIds(new SeededRng(3), 20, V)];
      expect(bitsEqual(await model.logits(ids), await loaded.logits(ids))).toBe(true);
      // Saving the loaded model writes the same config.json again.
      const again = await tempDir();
      await saveCausalLM(loaded, again);
      expect(JSON.parse(await readFile(join(again, 'config.json'), 'utf8'))).toEqual(json);
      if (name === 'qwen3') {
        expect(json.architectures).toEqual(['Qwen3ForCausalLM']);
        expect(json).toMatchObject({ model_type: 'qwen3', head_dim: 16, attention_bias: false });
        expect(json.rope_scaling).toBeNull();
        expect(a.get('model.layers.1.self_attn.q_norm.weight')?.shape).toEqual([16]);
        expect(a.get('model.layers.1.self_attn.k_norm.weight')?.shape).toEqual([16]);
        expect([...a.keys()].some((k) => k.endsWith('.bias') || k === 'lm_head.weight')).toBe(
          false,
        );
      } else {
        expect(json.architectures).toEqual(['LlamaForCausalLM']);
        expect(json.rope_scaling).toEqual(LLAMA3_SCALING);
        expect(json.head_dim).toBe(16);
      }
      model.dispose();
      loaded.dispose();
    });
  }

  it('a config.json with the older key type: "llama3" loads and is saved as rope_type', async () => {
    const model = createCausalLM(llama3(), { seed: 42, initStd: 0.2 });
    const dir = await tempDir();
    await saveCausalLM(model, dir);
    const path = join(dir, 'config.json');
    const json = JSON.parse(await readFile(path, 'utf8'));
    const { rope_type: _, ...rest } = json.rope_scaling;
    await writeFile(path, JSON.stringify({ ...json, rope_scaling: { ...rest, type: 'llama3' } }));
    const loaded = await loadCausalLM(dir);
    expect(loaded.config.ropeScaling).toEqual(LLAMA3_SCALING);
    const ids = [randomIds(new SeededRng(4), 16, V)];
    expect(bitsEqual(await model.logits(ids), await loaded.logits(ids))).toBe(true);
    const out = await tempDir();
    await saveCausalLM(loaded, out);
    const saved = JSON.parse(await readFile(join(out, 'config.json'), 'utf8'));
    expect(saved.rope_scaling.rope_type).toBe('llama3');
    model.dispose();
    loaded.dispose();
  });

  it('a malformed rope_scaling in a folder is refused naming the file and the field', async () => {
    const model = createCausalLM(llama3(), { seed: 43 });
    const dir = await tempDir();
    await saveCausalLM(model, dir);
    const path = join(dir, 'config.json');
    const json = JSON.parse(await readFile(path, 'utf8'));
    await writeFile(
      path,
      JSON.stringify({ ...json, rope_scaling: { rope_type: 'yarn', factor: 4 } }),
    );
    const err = await loadCausalLM(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointError);
    expect((err as Error).message).toContain(path);
    expect((err as Error).message).toContain('"yarn" is not supported');
    model.dispose();
  });
});

describe('llama3 rope scaling in the model', () => {
  it('changes the logits at long enough positions, and only through the rotary frequencies', async () => {
    const scaled = createCausalLM(llama3(), { seed: 44, initStd: 0.2 });
    const plain = createCausalLM({ ...llama3(), rope_scaling: null }, { seed: 44, initStd: 0.2 });
    // Same weights (same seed and shapes), so only the scaling differs.
    const wa = await scaled.exportWeights();
    const wb = await plain.exportWeights();
    for (const [k, t] of wa) expect(bitsEqual(t.data, wb.get(k)?.data as Float32Array)).toBe(true);
    const ids = [randomIds(new SeededRng(5), 48, V)];
    const a = await scaled.logits(ids);
    const b = await plain.logits(ids);
    // Position 0 has angle 0 whatever the frequencies: its logits agree.
    expect(maxAbsDiff(a.subarray(0, V), b.subarray(0, V))).toBeLessThan(1e-5);
    expect(maxAbsDiff(a, b)).toBeGreaterThan(1e-2);
    scaled.dispose();
    plain.dispose();
  });
});

describe('qwen3 q/k norms', () => {
  it('are frozen under LoRA and trained under full fine-tuning', async () => {
    const rng = new SeededRng(6);
    const prompts = [randomIds(rng, 6, V)];
    const actions = [randomIds(rng, 4, V)];
    for (const full of [false, true]) {
      const model = createCausalLM(qwen3(), {
        seed: 45,
        initStd: 0.2,
        ...(full ? { fullFineTune: true } : { lora: { targetModules: [...ALL_MODULES] } }),
      });
      const qn = model.weights.layers[0]?.qNorm as tf.Tensor;
      const kn = model.weights.layers[1]?.kNorm as tf.Tensor;
      expect(qn.shape).toEqual([16]);
      const vars = model.policyVariables();
      expect(vars.includes(qn as tf.Variable)).toBe(full);
      expect(vars.includes(kn as tf.Variable)).toBe(full);
      const before = await model.exportWeights();
      const opt = tf.train.adam(1e-2);
      const nll = (): tf.Scalar =>
        tf.neg(tf.mean(model.tokenStats(prompts, actions).logProbs)) as tf.Scalar;
      for (let i = 0; i < 3; i++) opt.minimize(nll, true, model.policyVariables())?.dispose();
      const after = await model.exportWeights();
      for (const name of [
        'model.layers.0.self_attn.q_norm.weight',
        'model.layers.1.self_attn.k_norm.weight',
      ]) {
        const d = maxAbsDiff(before.get(name)?.data ?? [], after.get(name)?.data ?? []);
        if (full) expect(d, name).toBeGreaterThan(0);
        else expect(d, name).toBe(0);
      }
      opt.dispose();
      model.dispose();
    }
  });

  it('full fine-tuning: q/k norm gradients match central finite differences', () => {
    const model = createCausalLM(
      { ...qwen3(), num_hidden_layers: 1 },
      { seed: 52, initStd: 0.3, fullFineTune: true },
    );
    const rng = new SeededRng(17);
    const prompts = [randomIds(rng, 5, V)];
    const actions = [randomIds(rng, 4, V)];
    const loss = (): tf.Scalar =>
      tf.tidy(() => tf.sum(model.tokenStats(prompts, actions).logProbs) as tf.Scalar);
    const layer = model.weights.layers[0];
    const vars = [layer?.qNorm, layer?.kNorm] as tf.Variable[];
    const { grads } = tf.variableGrads(loss, vars);
    const eps = 1e-2;
    for (const v of vars) {
      const g = grads[v.name]?.dataSync() as Float32Array;
      let largest = 0;
      for (const idx of [0, 5, 11, 15]) {
        const fd = centralDifference(loss, v, idx, eps);
        expect(Math.abs(fd - (g[idx] as number))).toBeLessThan(2e-3 + 2e-2 * Math.abs(fd));
        largest = Math.max(largest, Math.abs(fd));
      }
      expect(largest, v.name).toBeGreaterThan(1e-3); // the gradient is not trivially zero
    }
    for (const g of Object.values(grads)) g.dispose();
    model.dispose();
  });

  it('act on the logits: changing either norm weight changes them', async () => {
    const model = createCausalLM(qwen3(), { seed: 46, initStd: 0.2 });
    const ids = [randomIds(new SeededRng(7), 12, V)];
    const base = await model.logits(ids);
    for (const which of ['qNorm', 'kNorm'] as const) {
      const layer = model.weights.layers[0];
      if (!layer) throw new Error('no layer 0');
      const old = layer[which] as tf.Tensor1D;
      // A per-dimension change (a uniform scale of q would only change the attention temperature).
      layer[which] = tf.mul(old, tf.linspace(0.5, 1.5, 16)) as tf.Tensor1D;
      expect(maxAbsDiff(await model.logits(ids), base), which).toBeGreaterThan(1e-3);
      layer[which]?.dispose();
      layer[which] = old;
    }
    expect(bitsEqual(await model.logits(ids), base)).toBe(true);
    model.dispose();
  });

  it('LoRA on every projection equals the merged weights', async () => {
    const model = createCausalLM(qwen3(), {
      seed: 47,
      lora: { targetModules: [...ALL_MODULES], r: 4, alpha: 8 },
    });
    randomizeB(model, 8);
    const rng = new SeededRng(9);
    const ids = [randomIds(rng, 11, V), randomIds(rng, 11, V)];
    const base = await model.logits(ids, { adapter: false });
    const adapted = await model.logits(ids);
    expect(maxAbsDiff(adapted, base)).toBeGreaterThan(1e-2);
    const normBefore = await model.exportWeights();
    model.mergeAdapter();
    expect(maxAbsDiff(await model.logits(ids), adapted)).toBeLessThan(1e-4);
    const normAfter = await model.exportWeights();
    const qn = 'model.layers.0.self_attn.q_norm.weight';
    expect(
      bitsEqual(normBefore.get(qn)?.data as Float32Array, normAfter.get(qn)?.data as Float32Array),
    ).toBe(true);
    model.dispose();
  });

  it('PEFT adapter save → load is bit-exact and checked against the base', async () => {
    const model = createCausalLM(qwen3(), {
      seed: 48,
      initStd: 0.2,
      lora: { targetModules: ['q_proj', 'k_proj', 'o_proj', 'up_proj'], r: 4, alpha: 8 },
    });
    randomizeB(model, 10, 0.2);
    const dir = await tempDir();
    await saveCausalLM(model, dir);
    await saveAdapter(model, join(dir, 'adapter'));
    const acfg = JSON.parse(await readFile(join(dir, 'adapter', 'adapter_config.json'), 'utf8'));
    expect(acfg.target_modules).toEqual(['q_proj', 'k_proj', 'o_proj', 'up_proj']);
    const loaded = await loadCausalLM(dir, { adapterDir: join(dir, 'adapter') });
    const va = model.adapter?.variables() ?? [];
    const vb = loaded.adapter?.variables() ?? [];
    expect(vb.length).toBe(va.length);
    expect(va.length).toBe(2 * 4 * 2);
    for (let i = 0; i < va.length; i++) {
      expect(vb[i]?.shape).toEqual(va[i]?.shape);
      expect(
        bitsEqual((await va[i]?.data()) as Float32Array, (await vb[i]?.data()) as Float32Array),
      ).toBe(true);
    }
    // q_proj: [in 32, r] and [r, heads·head_dim 64]; o_proj reads the 64 attention columns.
    expect(loaded.adapter?.layers[0]?.q_proj?.B.shape).toEqual([4, 64]);
    expect(loaded.adapter?.layers[0]?.o_proj?.A.shape).toEqual([64, 4]);
    const ids = [randomIds(new SeededRng(11), 13, V)];
    const adapted = await model.logits(ids);
    expect(maxAbsDiff(adapted, await model.logits(ids, { adapter: false }))).toBeGreaterThan(1e-3);
    expect(bitsEqual(await loaded.logits(ids), adapted)).toBe(true);
    // The same adapter does not fit a qwen3 base with another head size.
    const other = createCausalLM({ ...qwen3(), head_dim: 8 }, { seed: 48 });
    await expect(loadAdapter(other, join(dir, 'adapter'))).rejects.toBeInstanceOf(CheckpointError);
    model.dispose();
    loaded.dispose();
    other.dispose();
  });
});

describe('head_dim different from hidden_size / heads', () => {
  const cfg = (): HFModelConfig => tinyConfig({ head_dim: 12 }); // 4 heads × 12 = 48 ≠ 32

  it('shapes every projection by head_dim and LoRA on every projection equals the merge', async () => {
    const model = createCausalLM(cfg(), {
      seed: 49,
      lora: { targetModules: [...ALL_MODULES], r: 4, alpha: 8 },
    });
    const w = await model.exportWeights();
    expect(w.get('model.layers.0.self_attn.q_proj.weight')?.shape).toEqual([48, 32]);
    expect(w.get('model.layers.0.self_attn.k_proj.weight')?.shape).toEqual([24, 32]);
    expect(w.get('model.layers.0.self_attn.v_proj.weight')?.shape).toEqual([24, 32]);
    expect(w.get('model.layers.0.self_attn.o_proj.weight')?.shape).toEqual([32, 48]);
    expect(model.adapter?.layers[1]?.o_proj?.A.shape).toEqual([48, 4]);
    randomizeB(model, 12);
    const ids = [randomIds(new SeededRng(13), 9, V)];
    const adapted = await model.logits(ids);
    expect(maxAbsDiff(adapted, await model.logits(ids, { adapter: false }))).toBeGreaterThan(1e-2);
    model.mergeAdapter();
    expect(maxAbsDiff(await model.logits(ids), adapted)).toBeLessThan(1e-4);
    model.dispose();
  });

  for (const [name, make] of [
    ['llama, head_dim 12', cfg],
    ['llama3 scaling', llama3],
    ['qwen3', qwen3],
  ] as const) {
    it(`${name}: cached generation, prefix-shared scoring and plain logits agree`, async () => {
      const model = createCausalLM(make(), { seed: 50, initStd: 0.3 });
      const rng = new SeededRng(14);
      const prompt = randomIds(rng, 7, V);
      const cached = await model.generate(prompt, { maxNewTokens: 10, temperature: 0.8, seed: 3 });
      const plain = await model.generate(prompt, {
        maxNewTokens: 10,
        temperature: 0.8,
        seed: 3,
        useCache: false,
      });
      expect(cached.tokens).toEqual(plain.tokens);
      expect(maxAbsDiff(cached.logProbs, plain.logProbs)).toBeLessThan(1e-4);
      const forced = await model.scoreTokens([prompt], [cached.tokens]);
      expect(maxAbsDiff(cached.logProbs, forced.logProbs[0] as number[])).toBeLessThan(1e-4);
      const longest = randomIds(rng, 5, V);
      const cands = [[randomIds(rng, 3, V), randomIds(rng, 1, V), longest]];
      const shared = await model.scoreContinuations([prompt], cands);
      const naive = await model.scoreContinuations([prompt], cands, { prefixSharing: false });
      expect(maxAbsDiff(shared.flat(2), naive.flat(2))).toBeLessThan(1e-4);
      // Against a log-softmax of the plain logits for the longest candidate.
      const seq = [...prompt, ...longest];
      const logits = await model.logits([seq]);
      const want = longest.map((tok, k) => {
        const row = Array.from(
          logits.subarray((prompt.length - 1 + k) * V, (prompt.length + k) * V),
        );
        const m = Math.max(...row);
        const lse = m + Math.log(row.reduce((s, x) => s + Math.exp(x - m), 0));
        return (row[tok] as number) - lse;
      });
      expect(maxAbsDiff(shared[0]?.[2] as number[], want)).toBeLessThan(1e-4);
      const before = tf.memory().numTensors;
      await model.logits([seq]);
      expect(tf.memory().numTensors).toBe(before);
      model.dispose();
    });
  }
});

/**
 * Fused ops written with plain TF.js ops, to run the model's fused-op path on any backend. Records
 * the RMSNorm widths it is called with.
 */
function plainFusedOps(widths: number[]): FusedOps {
  return {
    rmsNorm(x, w, eps) {
      widths.push(x.shape[1]);
      return tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.square(x), -1, true), eps))), w);
    },
    swiGlu: (gate, up) => tf.mul(tf.mul(gate, tf.sigmoid(gate)), up),
    rotaryEmbedding(x, cos, sin, heads) {
      const [rows, width] = x.shape;
      const half = width / heads / 2;
      const x3 = tf.reshape(x, [rows, heads, 2 * half]);
      const [x1, x2] = tf.split(x3, 2, 2) as [tf.Tensor3D, tf.Tensor3D];
      const c = tf.reshape(cos, [rows, 1, half]);
      const s = tf.reshape(sin, [rows, 1, half]);
      const out = tf.concat(
        [tf.sub(tf.mul(x1, c), tf.mul(x2, s)), tf.add(tf.mul(x2, c), tf.mul(x1, s))],
        2,
      );
      return tf.reshape(out, [rows, width]);
    },
    logProbStats(logits, targets) {
      const logp = tf.logSoftmax(logits);
      const idx = tf.tensor2d(
        Array.from(targets, (t, r) => [r, t]),
        [targets.length, 2],
        'int32',
      );
      return {
        logProbs: tf.gatherND(logp, idx) as tf.Tensor1D,
        entropies: tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), -1)) as tf.Tensor1D,
      };
    },
  };
}

describe('with fused ops installed', () => {
  for (const [name, make] of [
    ['llama3 scaling', llama3],
    ['qwen3', qwen3],
  ] as const) {
    it(`${name}: the fused path gives the logits of the TF.js path`, async () => {
      const model = createCausalLM(make(), { seed: 51, initStd: 0.2 });
      const ids = [randomIds(new SeededRng(15), 40, V), randomIds(new SeededRng(16), 40, V)];
      const backend = tf.getBackend();
      const saved = activeFusedOps();
      setFusedOps(null, backend);
      const composed = await model.logits(ids);
      const widths: number[] = [];
      setFusedOps(plainFusedOps(widths), backend);
      let fused: Float32Array;
      try {
        fused = await model.logits(ids);
      } finally {
        setFusedOps(saved, backend);
      }
      expect(maxAbsDiff(fused, composed)).toBeLessThan(1e-5);
      // hidden 32 for the layer norms; head_dim 16 only when q/k norms run through the fused op.
      expect(widths.includes(32)).toBe(true);
      expect(widths.filter((w) => w === 16).length).toBe(name === 'qwen3' ? 2 * 2 : 0);
      model.dispose();
    });
  }
});
