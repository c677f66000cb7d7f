import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { keyTokenTask } from './key-token-env.js';
import { keyTokenTrainer } from './trainer-setup.js';

const task = keyTokenTask(3);

async function run(backend: 'cpu' | 'wasm', algorithm: 'poad' | 'twosome') {
  await tf.setBackend(backend);
  await tf.ready();
  const { policy, trainer } = keyTokenTrainer(
    task,
    {
      algorithm,
      numSteps: 2,
      epochs: 1,
      numMinibatches: 2,
      lr: 1e-2,
      criticLr: 1e-2,
      greedy: true,
    },
    5,
  );
  const r = await trainer.iterate();
  const out = { ...r.update, w: policy.actorVariables.flatMap((v) => Array.from(v.dataSync())) };
  trainer.dispose();
  policy.dispose();
  return out;
}

describe('the wasm backend', () => {
  for (const algorithm of ['poad', 'twosome'] as const) {
    it(`${algorithm}: one iteration agrees with the cpu backend`, { timeout: 60_000 }, async () => {
      const cpu = await run('cpu', algorithm);
      const wasm = await run('wasm', algorithm);
      expect(wasm.policyLoss).toBeCloseTo(cpu.policyLoss, 4);
      expect(wasm.valueLoss).toBeCloseTo(cpu.valueLoss, 4);
      expect(wasm.entropy).toBeCloseTo(cpu.entropy, 4);
      for (const [i, x] of cpu.w.entries()) expect(wasm.w[i]).toBeCloseTo(x, 3);
    });
  }
});
