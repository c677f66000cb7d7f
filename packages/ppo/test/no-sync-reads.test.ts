// A GPU backend in Node (WebGPU through Dawn) cannot serve dataSync / arraySync / bufferSync.
// One training iteration and a checkpoint must therefore never call them: here they throw.
import '@tensorflow/tfjs-backend-cpu';
import '@tensorflow/tfjs-backend-wasm';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import * as tf from '@tensorflow/tfjs-core';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointFromJson, checkpointToJson } from '../src/index.js';
import { keyTokenTask } from './key-token-env.js';
import { keyTokenTrainer } from './trainer-setup.js';

const SYNC_READS = ['dataSync', 'arraySync', 'bufferSync'] as const;
const saved = SYNC_READS.map((name) => [name, tf.Tensor.prototype[name]] as const);

/** Makes every synchronous tensor read throw until `restoreSyncReads`. */
function forbidSyncReads(): void {
  for (const name of SYNC_READS) {
    Object.defineProperty(tf.Tensor.prototype, name, {
      configurable: true,
      writable: true,
      value() {
        throw new Error(`synchronous read ${name}() in the training path`);
      },
    });
  }
}

function restoreSyncReads(): void {
  for (const [name, fn] of saved) {
    Object.defineProperty(tf.Tensor.prototype, name, {
      configurable: true,
      writable: true,
      value: fn,
    });
  }
}

afterEach(restoreSyncReads);

const task = keyTokenTask(3);

describe('no synchronous tensor reads', () => {
  for (const [backend, algorithm] of [
    ['wasm', 'poad'],
    ['wasm', 'twosome'],
    ['cpu', 'ntpo'],
  ] as const) {
    it(`${backend}, ${algorithm}: an iteration and a checkpoint only read asynchronously`, {
      timeout: 60_000,
    }, async () => {
      await tf.setBackend(backend);
      await tf.ready();
      // Clipping active and one KL skip possible: every branch of the update runs.
      const { policy, trainer } = keyTokenTrainer(
        task,
        {
          algorithm,
          numSteps: 2,
          epochs: 2,
          numMinibatches: 2,
          gradAccumulation: 2,
          lr: 3e-2,
          maxGradNorm: 0.1,
          criticMaxGradNorm: 0.1,
          targetKl: 0.05,
        },
        5,
      );
      forbidSyncReads();
      try {
        const report = await trainer.iterate();
        expect(report.update.minibatches).toBe(4);
        expect(Number.isFinite(report.update.policyLoss)).toBe(true);
        expect(report.update.criticGradNorm).toBeGreaterThan(0);
        const state = await trainer.getState();
        expect(state.counters.iterations).toBe(1);
        expect(checkpointFromJson(checkpointToJson(state))).toEqual(state);
      } finally {
        restoreSyncReads();
        trainer.dispose();
        policy.dispose();
      }
    });
  }
});
