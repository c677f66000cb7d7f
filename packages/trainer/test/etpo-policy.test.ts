// The ETPO language-model agent on a tiny model: soft values, vocabulary scores, and two
// EtpoTrainer iterations on an environment written against TextEnv.
import { makeVecEnv } from '@poad/envs-core';
import { EtpoTrainer } from '@poad/etpo';
import { loadCausalLM } from '@poad/lora-model';
import { initBackend } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { EtpoLmPolicy } from '../src/policy/etpo-lm-policy.js';
import { DoorEnv } from './door-env.js';
import { tinyModelDir } from './tiny-model.js';

let dir = '';
beforeAll(async () => {
  dir = await tinyModelDir();
  // The backend the training runs use: the stock cpu one takes about ten times as long here.
  await initBackend('wasm');
});

async function policyOf(reference: 'base' | 'uniform', beta = 0.2, criticScale?: number) {
  const model = await loadCausalLM(dir, { seed: 7, lora: { r: 4, alpha: 8 } });
  return new EtpoLmPolicy(model, model.tokenizer!, {
    beta,
    reference,
    seed: 7,
    ...(criticScale === undefined ? {} : { criticScale }),
  });
}

describe('EtpoLmPolicy', () => {
  it('records soft values E_π[Q̄] − β·KL(π ‖ π̄) under the target critic', async () => {
    const p = await policyOf('uniform', 0.3);
    const prompt = await p.encodePrompt('You stand in a hall with a red door and a blue door. You');
    const [action] = await p.encodeContinuations(
      'You stand in a hall with a red door and a blue door. You',
      ['open the red door'],
    );
    const batch = { prompts: [prompt], actions: [action!], width: action!.length };
    const values = Array.from(tf.tidy(() => p.tokenValues(batch)).dataSync());
    expect(values).toHaveLength(action!.length);
    // By hand from the full logits: the actor and both critics start as the base model (B = 0).
    const ids = [...prompt, ...action!];
    const logits = await p.model.logits([ids]);
    const v = p.model.config.vocabSize;
    action!.forEach((_, k) => {
      const row = Array.from(logits.subarray((prompt.length - 1 + k) * v, (prompt.length + k) * v));
      const m = Math.max(...row);
      const z = row.reduce((a, x) => a + Math.exp(x - m), 0);
      const pi = row.map((x) => Math.exp(x - m) / z);
      const eq = pi.reduce((a, q, i) => a + q * row[i]!, 0);
      const kl = pi.reduce((a, q) => a + (q > 0 ? q * Math.log(q * v) : 0), 0);
      expect(values[k]).toBeCloseTo(eq - 0.3 * kl, 3);
    });
    // promptValues is the first column.
    const first = tf.tidy(() => p.promptValues([prompt]).dataSync()[0]!);
    expect(first).toBeCloseTo(values[0]!, 5);
    const sc = p.vocabularyScores(batch);
    const s = [
      sc.policyLogits.shape,
      sc.q.shape,
      sc.reference === 'uniform' ? null : sc.reference.shape,
    ];
    tf.dispose([sc.policyLogits, sc.q]);
    expect(s).toEqual([[action!.length, v], [action!.length, v], null]);
    p.dispose();
    p.model.dispose();
  });

  it('trains with EtpoTrainer: finite losses, the critic and its target move, no tensor growth', async () => {
    const p = await policyOf('base');
    const env = makeVecEnv(() => new DoorEnv(), 4, { seed: 1 });
    const trainer = new EtpoTrainer({
      policy: p,
      env,
      config: {
        numSteps: 2,
        epochs: 1,
        numMinibatches: 2,
        lr: 1e-3,
        criticLr: 1e-3,
        beta: 0.2,
        tau: 0.5,
        seed: 3,
      },
    });
    const target0 = Array.from(p.targetVariables.at(-1)!.dataSync());
    const first = await trainer.iterate();
    const live = tf.memory().numTensors;
    const second = await trainer.iterate();
    expect(tf.memory().numTensors).toBe(live);
    for (const r of [first, second]) {
      expect(r.update.actorSteps).toBe(2);
      expect(Number.isFinite(r.update.valueLoss) && Number.isFinite(r.update.policyLoss)).toBe(
        true,
      );
      expect(r.update.klToReference).toBeGreaterThanOrEqual(0);
    }
    const critic = Array.from(p.criticVariables.at(-1)!.dataSync());
    const target = Array.from(p.targetVariables.at(-1)!.dataSync());
    expect(critic.some((x) => x !== 0)).toBe(true);
    expect(target).not.toEqual(target0);
    expect(target).not.toEqual(critic);
    await env.close();
    p.dispose();
    p.model.dispose();
  });

  it('scales Q by criticScale for the online and the target critic, and the soft values with it', async () => {
    const c = 0.0625;
    const p = await policyOf('uniform', 0.3, c);
    const text = 'You stand in a hall with a red door and a blue door. You';
    const prompt = await p.encodePrompt(text);
    const [action] = await p.encodeContinuations(text, ['open the red door']);
    const batch = { prompts: [prompt], actions: [action!], width: action!.length };
    const [q, scoresQ, values] = tf.tidy(() => [
      Array.from(p.criticQ(batch).dataSync()),
      Array.from(p.vocabularyScores(batch).q.dataSync()),
      Array.from(p.tokenValues(batch).dataSync()),
    ]);
    // Every adapter starts as the base model (B = 0): Q = c × the base logits, E_π[Q̄] − β·KL with it.
    const ids = [...prompt, ...action!];
    const logits = await p.model.logits([ids]);
    const v = p.model.config.vocabSize;
    action!.forEach((_, k) => {
      const row = Array.from(logits.subarray((prompt.length - 1 + k) * v, (prompt.length + k) * v));
      row.forEach((x, w) => {
        expect(q[k * v + w]).toBeCloseTo(c * x, 4);
      });
      const m = Math.max(...row);
      const z = row.reduce((a, x) => a + Math.exp(x - m), 0);
      const pi = row.map((x) => Math.exp(x - m) / z);
      const eq = pi.reduce((a, pw, i) => a + pw * c * row[i]!, 0);
      const kl = pi.reduce((a, pw) => a + (pw > 0 ? pw * Math.log(pw * v) : 0), 0);
      expect(values[k]).toBeCloseTo(eq - 0.3 * kl, 3);
    });
    expect(scoresQ).toEqual(q);
    expect(p.criticScale).toBe(c);
    p.dispose();
    p.model.dispose();
  });
});
