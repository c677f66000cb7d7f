// The phases a trainer announces to its policy (`enterPhase`): every policy call of an iteration
// falls in the phase it belongs to, so that device work can be attributed to acting, values and
// update; announcing them changes nothing that is computed.
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type IterationPhase, PpoTrainer, type TokenBatch } from '../src/index.js';
import { useCpu } from './backend.js';
import { KeyTokenVecEnv, keyTokenTask } from './key-token-env.js';
import { TinyPolicy } from './tiny-policy.js';

beforeAll(useCpu);

const task = keyTokenTask(3);

/** A TinyPolicy that records each phase it is told and the phase of every call it serves. */
class PhasePolicy extends TinyPolicy {
  phase: IterationPhase | null = null;
  readonly phases: IterationPhase[] = [];
  readonly calls: [IterationPhase | null, string][] = [];

  enterPhase(phase: IterationPhase): void {
    this.phase = phase;
    if (this.phases.at(-1) !== phase) this.phases.push(phase);
  }

  override scoreTokens(batch: TokenBatch) {
    this.calls.push([this.phase, 'scoreTokens']);
    return super.scoreTokens(batch);
  }

  override tokenValues(batch: TokenBatch) {
    this.calls.push([this.phase, 'tokenValues']);
    return super.tokenValues(batch);
  }

  override promptValues(prompts: readonly Int32Array[]) {
    this.calls.push([this.phase, 'promptValues']);
    return super.promptValues(prompts);
  }
}

const config = {
  algorithm: 'poad' as const,
  numSteps: 3,
  epochs: 2,
  numMinibatches: 2,
  lr: 3e-2,
  seed: 4,
};

describe('iteration phases', () => {
  it('acting and values alternate per rollout step, then the update; every call falls in its phase', async () => {
    const policy = new PhasePolicy({ words: task.words, seed: 5 });
    const trainer = new PpoTrainer({ policy, env: new KeyTokenVecEnv(task, 4), config });
    try {
      await trainer.iterate();
      expect(policy.phases).toEqual([
        'acting',
        'values',
        'acting',
        'values',
        'acting',
        'values',
        'update',
      ]);
      const rollout = policy.calls.filter(([p]) => p !== 'update');
      const update = policy.calls.filter(([p]) => p === 'update');
      // The TWOSOME sampler scores the labels with scoreTokens while acting; values come after.
      for (const [phase, method] of rollout)
        expect([phase, method]).toEqual([method === 'scoreTokens' ? 'acting' : 'values', method]);
      expect(rollout.some(([, m]) => m === 'scoreTokens')).toBe(true);
      expect(rollout.some(([, m]) => m === 'tokenValues')).toBe(true);
      expect(rollout.some(([, m]) => m === 'promptValues')).toBe(true);
      // 2 epochs × 2 minibatches, each with an actor and a critic pass.
      expect(update.filter(([, m]) => m === 'scoreTokens')).toHaveLength(4);
      expect(update.filter(([, m]) => m === 'tokenValues')).toHaveLength(4);
      // Nothing was called before the first phase was announced.
      expect(policy.calls.every(([p]) => p !== null)).toBe(true);
    } finally {
      trainer.dispose();
      policy.dispose();
    }
  });

  it('announcing phases changes nothing: same losses and weights as a policy without the hook', async () => {
    const run = async (withPhases: boolean) => {
      const policy = withPhases
        ? new PhasePolicy({ words: task.words, seed: 5 })
        : new TinyPolicy({ words: task.words, seed: 5 });
      const live = tf.memory().numTensors;
      const trainer = new PpoTrainer({ policy, env: new KeyTokenVecEnv(task, 4), config });
      const report = await trainer.iterate();
      const weights = await Promise.all(policy.actorVariables.map((v) => v.data()));
      trainer.dispose();
      expect(tf.memory().numTensors).toBe(live);
      policy.dispose();
      return { loss: report.update.policyLoss, value: report.update.valueLoss, weights };
    };
    const a = await run(true);
    const b = await run(false);
    expect(Number.isFinite(a.loss)).toBe(true);
    expect(a).toEqual(b);
  });
});
