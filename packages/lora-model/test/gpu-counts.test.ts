/**
 * The GPU work of the tiny-config LoRA step (forward, backward, the global gradient norm and a
 * clipped AdamW step over the LoRA matrices with `Adam` of @poad/ppo, as the trainers take it;
 * batch 2 × 32), counted on webgpu at the device (`gpuCounters` of @poad/tfjs-kernels): the
 * counts do not depend on the GPU, so a software adapter checks them, and a change that adds
 * programs or reads to the step fails here. Under CI (which installs lavapipe) an adapter must be
 * found; elsewhere a machine without one skips the counts.
 */

import { webGpuTestFile } from '@poad/dev-kit';
import { Adam } from '@poad/ppo';
import {
  gpuCounters,
  gpuCountersSince,
  initBackend,
  releaseBackend,
  setGpuPhase,
} from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { loraStep } from '../bench/lora-step.js';
import { createCausalLM } from '../src/index.js';

const gpu = await webGpuTestFile('GPU count tests', { initBackend, releaseBackend });

/**
 * Ceilings, the counts measured on 2026-11-27: lower them when a change removes work. The
 * optimiser took 224 programs before it ran as one multi-tensor program (3 more for the norm);
 * the gradients took 208 before the q|k|v cut, the LoRA updates of q and v and the rotations ran
 * as one program forward (`splitQkv`) and three backward.
 */
const CEILINGS = { gradients: 178, optimiser: 4, reads: 1 };

describe('GPU work of a tiny-config LoRA step', () => {
  it.runIf(gpu.ok)('dispatches no more programs and reads no more than measured', async () => {
    const model = createCausalLM(
      {
        vocab_size: 4096,
        hidden_size: 256,
        intermediate_size: 688,
        num_hidden_layers: 4,
        num_attention_heads: 4,
      },
      { seed: 1, lora: true },
    );
    const V = 4096;
    const prompts = [[1], [2]];
    const actions = [0, 1].map((i) => Array.from({ length: 31 }, (_, j) => (i * 31 + j * 7) % V));
    const vars = model.policyVariables();
    const opt = new Adam(vars, { lr: 1e-4 });
    expect(opt.fused).toBe(true);
    const step = async () => {
      const before = gpuCounters()!;
      const loss = await loraStep(model, opt, prompts, actions);
      setGpuPhase('other');
      return { loss, work: gpuCountersSince(before, gpuCounters()!) };
    };
    const live = tf.memory().numTensors;
    const first = await step();
    // The second step: Adam's moments exist, as in every step of a run.
    const second = await step();
    // Nothing left behind: the fused optimiser made its two flat moments at construction.
    expect(tf.memory().numTensors).toBe(live);
    // The step moved the LoRA weights: the loss changed.
    expect(second.loss).not.toBe(first.loss);
    expect(Number.isFinite(first.loss) && Number.isFinite(second.loss)).toBe(true);
    const w = second.work;
    expect(w.phases.gradients?.programs).toBeGreaterThan(0);
    expect(w.phases.gradients!.programs).toBeLessThanOrEqual(CEILINGS.gradients);
    expect(w.phases.optimiser?.programs).toBeGreaterThan(0);
    expect(w.phases.optimiser!.programs).toBeLessThanOrEqual(CEILINGS.optimiser);
    // One read: the loss, 4 bytes.
    expect(w.reads).toBeLessThanOrEqual(CEILINGS.reads);
    expect(w.phases.read).toEqual({ programs: 0, reads: 1, readBytes: 4 });
    model.dispose();
    opt.dispose();
  });
});
