import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { type CausalLM, createCausalLM } from '../src/causal-lm.js';
import type { SeededRng } from '../src/rng.js';
import { candidateTokenLogProbs } from '../src/scoring.js';
import { tokenStats } from '../src/token-stats.js';
import { tinyConfig } from './configs.js';

let ready: Promise<void> | undefined;

/** Use the wasm backend for tests (cpu when LORA_TEST_BACKEND=cpu). */
export function useTestBackend(): Promise<void> {
  ready ??= (async () => {
    const name = process.env.LORA_TEST_BACKEND ?? 'wasm';
    if (name === 'wasm') await import('@tensorflow/tfjs-backend-wasm');
    else await import('@tensorflow/tfjs-backend-cpu');
    await tf.setBackend(name);
    await tf.ready();
  })();
  return ready;
}

/** Deterministic random token ids. */
export function randomIds(rng: SeededRng, n: number, vocab: number): number[] {
  return Array.from({ length: n }, () => Math.floor(rng.next() * vocab));
}

/** A fresh temporary folder. */
export function tempDir(prefix = 'lora-model-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Largest absolute difference of two equal-length arrays. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length mismatch ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

/** Flatten nested number arrays. */
export function flat(x: number[][] | number[][][]): number[] {
  return (x as unknown[]).flat(2) as number[];
}

/**
 * The objective of a TWOSOME update, Σ w·log p over every candidate token (w seeded uniform), for
 * a tiny model with a randomised adapter, two ways: `shared()` through `candidateTokenLogProbs`
 * (each prompt run once) and `full()` through full-sequence `tokenStats` on the rows `rowsP` +
 * `rowsA`, each giving tf.variableGrads' value and adapter gradients. The caller disposes those,
 * `weights` and `model`.
 */
export function twosomeObjective(
  prompts: number[][],
  cands: number[][][],
): {
  model: CausalLM;
  vars: tf.Variable[];
  weights: tf.Tensor1D;
  rowsP: number[][];
  rowsA: number[][];
  shared: () => { value: tf.Scalar; grads: tf.NamedTensorMap };
  full: () => { value: tf.Scalar; grads: tf.NamedTensorMap };
} {
  const model = createCausalLM(tinyConfig({ rope_theta: 300 }), {
    seed: 21,
    initStd: 0.2,
    lora: true,
  });
  for (const v of model.adapter!.variables())
    v.assign(tf.randomNormal(v.shape, 0, 0.1, 'float32', 5));
  const rowsP = prompts.flatMap((p, i) => cands[i]!.map(() => p));
  const rowsA = cands.flat();
  const weights = tf.randomUniform([rowsA.flat().length], 0, 1, 'float32', 6) as tf.Tensor1D;
  const vars = model.adapter!.variables();
  const f = (lp: () => tf.Tensor1D) =>
    tf.variableGrads(() => tf.sum(tf.mul(lp(), weights)) as tf.Scalar, vars);
  return {
    model,
    vars,
    weights,
    rowsP,
    rowsA,
    shared: () => f(() => candidateTokenLogProbs(model, prompts, cands)),
    full: () => f(() => tokenStats(model, rowsP, rowsA).logProbs as tf.Tensor1D),
  };
}

/**
 * The central difference (step `eps`) of `loss` in element `idx` of the variable `v`, which holds
 * its values again afterwards.
 */
export function centralDifference(
  loss: () => tf.Scalar,
  v: tf.Variable,
  idx: number,
  eps: number,
): number {
  const base = v.dataSync().slice() as Float32Array;
  const probe = (delta: number): number => {
    const d = base.slice();
    d[idx] = (d[idx] as number) + delta;
    v.assign(tf.tensor(d, v.shape));
    const l = loss();
    const out = l.dataSync()[0] as number;
    l.dispose();
    return out;
  };
  const fd = (probe(eps) - probe(-eps)) / (2 * eps);
  v.assign(tf.tensor(base, v.shape));
  return fd;
}
