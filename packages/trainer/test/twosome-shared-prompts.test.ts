// TWOSOME's update through the prompt-shared differentiable scoring equals the one-row-per-
// candidate update, on a tiny model and an environment written against TextEnv.
import { makeVecEnv } from '@poad/envs-core';
import { loadCausalLM } from '@poad/lora-model';
import { PpoTrainer, type TokenPolicy } from '@poad/ppo';
import { initBackend } from '@poad/tfjs-kernels';
import { beforeAll, describe, expect, it } from 'vitest';
import { LmPolicy } from '../src/policy/lm-policy.js';
import { DoorEnv } from './door-env.js';
import { tinyModelDir } from './tiny-model.js';

let dir = '';
beforeAll(async () => {
  dir = await tinyModelDir();
  // The backend the training runs use: the stock cpu one takes about ten times as long here.
  await initBackend('wasm');
});

async function run(shared: boolean) {
  const model = await loadCausalLM(dir, { seed: 3, lora: { r: 4, alpha: 8 }, valueHead: true });
  const lm = new LmPolicy(model, model.tokenizer!);
  // Counts of the update's two ways to score the candidates: each prompt once for all of its
  // candidates (`scoreCandidateTokens`), or a row per candidate (`scoreTokens`, which the rest
  // of the iteration calls too).
  const calls = { shared: 0, rows: 0 };
  // The same policy with its scoring counted, and without the prompt-shared scoring.
  const policy: TokenPolicy = Object.create(lm);
  Object.defineProperty(policy, 'scoreTokens', {
    value: (batch: Parameters<TokenPolicy['scoreTokens']>[0]) => {
      calls.rows++;
      return lm.scoreTokens(batch);
    },
  });
  Object.defineProperty(policy, 'scoreCandidateTokens', {
    value: shared
      ? (p: readonly Int32Array[], c: readonly (readonly Int32Array[])[]) => {
          calls.shared++;
          return lm.scoreCandidateTokens(p, c);
        }
      : undefined,
  });
  const env = makeVecEnv(() => new DoorEnv(), 2, { seed: 5 });
  const trainer = new PpoTrainer({
    policy,
    env,
    config: { algorithm: 'twosome', numSteps: 4, epochs: 1, numMinibatches: 2, seed: 5, lr: 1e-3 },
  });
  const reports = [];
  for (let i = 0; i < 2; i++) reports.push((await trainer.iterate()).update);
  const weights = model.adapter!.variables().map((v) => Array.from(v.dataSync()));
  trainer.dispose();
  model.dispose();
  await env.close();
  return { reports, weights, calls };
}

describe("TWOSOME's update with each prompt run once for its candidates", () => {
  it('gives the losses and weights of scoring every candidate row in full', async () => {
    const a = await run(true);
    const b = await run(false);
    // 2 iterations × 1 epoch × 2 minibatches: the shared path scores each minibatch's candidates
    // once; without it, each of those calls is a call of the row-per-candidate scoring instead.
    expect(a.calls.shared, 'prompt-shared scoring calls, with it').toBe(4);
    expect(b.calls.shared, 'prompt-shared scoring calls, without it').toBe(0);
    expect(b.calls.rows, 'row-per-candidate scoring calls, without it').toBe(
      a.calls.rows + a.calls.shared,
    );
    a.reports.forEach((r, i) => {
      const s = b.reports[i]!;
      for (const k of ['policyLoss', 'valueLoss', 'entropy', 'approxKl'] as const)
        expect(Math.abs(r[k] - s[k]), `${k}, iteration ${i + 1}`).toBeLessThan(1e-4);
    });
    let worst = 0;
    a.weights.forEach((w, i) => {
      w.forEach((x, k) => {
        worst = Math.max(worst, Math.abs(x - b.weights[i]![k]!));
      });
    });
    expect(worst).toBeLessThan(1e-4);
  });
});
