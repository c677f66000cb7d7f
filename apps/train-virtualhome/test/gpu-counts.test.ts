// The GPU work of the training command, counted on webgpu (programs dispatched, host reads, bytes
// read back): the counts do not depend on the GPU, so a software adapter checks them. A change
// that makes an iteration dispatch more programs or wait on more reads fails here. CI provides a
// software Vulkan (lavapipe), so there these tests must run; elsewhere a machine without one
// skips them.
import { TINY_RUN } from '@poad/dev-kit';
import { initBackend, releaseBackend } from '@poad/tfjs-kernels';
import { afterAll, describe, expect, it } from 'vitest';
import { type GpuProfile, profileGpuWork, profileTable } from '../src/gpu-profile.js';
import { virtualHomeApp } from '../src/spec.js';

const gpu = await initBackend('webgpu', { allowSoftwareAdapter: true }).then(
  () => ({ ok: true as const }),
  (e: Error) => ({ ok: false as const, reason: e.message }),
);

afterAll(async () => {
  await releaseBackend();
});

/**
 * Ceilings: the counts measured on 2026-11-27 for TINY_RUN (2 environments, 4 steps, 1 epoch of
 * 2 minibatches) with the default model and the 'small' preset's other values. Lower them when a
 * change removes programs or reads. Before the optimisers ran as one multi-tensor program the
 * update took 1,611 programs; before checkpoints were read in batches they took 57 reads; before
 * candidate scoring read once per call, acting took 8; before the fused critic's step was decided
 * on the device, the update read twice per minibatch (4 reads, 1,009 programs: the decision costs
 * 2 programs per minibatch and saves a read); before the values and base features of a rollout
 * were read once (values and features one read per step each), values took 10 reads and 553
 * programs, the update 2 reads; before attention ran as one WGSL program forward and four
 * backward, the iteration took 2,861 programs; before the bootstrap values came back with the
 * step values and the base features stayed on the GPU through the update, values took 2 reads
 * and the update 3; before SwiGLU read the fused gate|up output whole and LoRA updates were added
 * in one program, the iteration took 2,577 programs; before candidate scoring attended over the
 * shared prompt cache in one program, acting took 1,152; before prompts and candidates were
 * scored packed in one pass, the rollout's values computed in one batch at its end, padding and
 * feature rows gathered with one index, the token-level policy loss fused and the q|k|v cut,
 * LoRA updates and rotations run as one program, the iteration took 2,105 programs (acting 896,
 * values 368, update 841).
 */
const CEILINGS = {
  // One read per rollout step: all environments' candidate scores at once.
  acting: { programs: 268, reads: 4 },
  // Every step's values and the bootstrap values at once, in one batch at the rollout's end.
  values: { programs: 108, reads: 1 },
  // One read per minibatch (critic and actor together); the features are gathered on the GPU.
  update: { programs: 532, reads: 2 },
  iteration: { programs: 908, reads: 7 },
  checkpoint: { programs: 0, reads: 6 },
} as const;

describe('GPU work of npm run train:virtualhome on webgpu', () => {
  it('is counted where CI provides a software Vulkan (no silent skip)', () => {
    if (!gpu.ok) {
      expect(process.env.CI, `no WebGPU adapter under CI: ${gpu.reason}`).toBeFalsy();
      console.warn(`GPU count tests not run: ${gpu.reason}`);
    }
  });

  it.runIf(gpu.ok)(
    'stays within the measured programs and reads per phase, and metrics.jsonl records each iteration',
    async () => {
      const profile: GpuProfile = await profileGpuWork(virtualHomeApp, [...TINY_RUN]);
      console.log(profileTable(profile));
      expect(profile.backend).toMatch(/^webgpu on /);
      expect(profile.iterations).toHaveLength(2);
      for (const [i, it] of profile.iterations.entries()) {
        for (const [phase, bar] of Object.entries(CEILINGS)) {
          const w = it[phase as keyof typeof CEILINGS];
          expect(w.programs, `iteration ${i + 1}, ${phase}: programs`).toBeLessThanOrEqual(
            bar.programs,
          );
          expect(w.reads, `iteration ${i + 1}, ${phase}: reads`).toBeLessThanOrEqual(bar.reads);
        }
        // Every phase did GPU work and read its results back (the counters see the run).
        for (const phase of ['acting', 'values', 'update'] as const) {
          expect(it[phase].programs, `${phase} programs`).toBeGreaterThan(0);
          expect(it[phase].reads, `${phase} reads`).toBeGreaterThan(0);
        }
        // The checkpoint reads the adapter, the value head and both optimisers' moments.
        expect(it.checkpoint.readBytes).toBeGreaterThan(0);
        // The iteration is its three phases, as its metrics row records it.
        const sum = (k: 'programs' | 'reads' | 'readBytes') =>
          it.acting[k] + it.values[k] + it.update[k];
        expect(it.iteration).toEqual({
          programs: sum('programs'),
          reads: sum('reads'),
          readBytes: sum('readBytes'),
        });
        expect(profile.metrics[i]).toEqual({
          gpuPrograms: it.iteration.programs,
          gpuReads: it.iteration.reads,
          gpuReadBytes: it.iteration.readBytes,
        });
      }
    },
  );

  it.runIf(gpu.ok)(
    'ETPO reads once per minibatch in its update (losses, norms, entropy, KL and Q together)',
    async () => {
      // Measured on 2026-11-27 with TINY_RUN's 2 minibatches: 2 reads and 1,056 programs (1,256
      // before the q|k|v step ran as one program and padding as one gather; before the minibatch
      // read once: 12 reads, six per minibatch, and 1,254 programs).
      const profile = await profileGpuWork(virtualHomeApp, [...TINY_RUN, '--algo', 'etpo']);
      console.log(profileTable(profile));
      for (const [i, it] of profile.iterations.entries()) {
        expect(it.update.reads, `iteration ${i + 1}: update reads`).toBeLessThanOrEqual(2);
        expect(it.update.reads, `iteration ${i + 1}: update reads`).toBeGreaterThan(0);
        expect(it.update.programs, `iteration ${i + 1}: update programs`).toBeLessThanOrEqual(1056);
      }
    },
  );
});
