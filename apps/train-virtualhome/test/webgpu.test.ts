// The practitioner's command on the GPU backend: `--backend webgpu` trains the default model for
// real (child process) with the same numbers as wasm, records the adapter in environment.json,
// exits by itself, and fails before any work when no adapter is usable. The other trainers run the
// same command line in this process (`runCli` over the app's spec): one process start, one device
// and one cache of compiled GPU programs for all of them. CI provides a software Vulkan
// (lavapipe), so there these tests must run; elsewhere a machine without one skips them.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import { type CommandResult, TINY_RUN, type TrainingHarness, trainingHarness } from '@poad/dev-kit';
import { releaseBackend } from '@poad/tfjs-kernels';
import { runCli } from '@poad/trainer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { virtualHomeApp } from '../src/spec.js';

const base = ['--model', DEFAULT_MODEL, ...TINY_RUN, '--threads', '1'];
const h = trainingHarness({ app: 'apps/train-virtualhome/src/main.ts', base });
const inProcess = trainingHarness({ inProcess: (argv) => runCli(virtualHomeApp, argv), base });
// Dawn keeps the worker alive while the in-process runs' device is open.
afterAll(async () => {
  await releaseBackend();
});
// The perplexity on 16 held-out lines, not the 200 of a default run: on a software adapter two
// passes over all of them take longer than the training.
const args = (name: string, backend: string) =>
  h.args(name, 2, ['--backend', backend, '--perplexity-lines', '16']);

/** Runs a command line of `harness` with extra environment variables. */
async function run(harness: TrainingHarness, a: string[], env: Record<string, string>) {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await harness.run(a);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('npm run train:virtualhome -- --backend webgpu', () => {
  it('trains like wasm, records the adapter and exits by itself', {
    timeout: 600_000,
  }, async () => {
    const gpu = await run(h, args('gpu', 'webgpu'), { POAD_WEBGPU_ALLOW_SOFTWARE: '1' });
    if (gpu.code === 2 && /WebGPU|backend "webgpu"/.test(gpu.out)) {
      expect(process.env.CI, `no WebGPU adapter under CI: ${gpu.out}`).toBeFalsy();
      console.warn(`webgpu CLI test not run: ${gpu.out.trim().split('\n').pop()}`);
      return;
    }
    expect(gpu.code, gpu.out).toBe(0);
    const env = h.json<{
      backend: string;
      gpu: { vendor: unknown; limits: { maxStorageBufferBindingSize: number } };
    }>('gpu', 'environment.json');
    expect(env.backend).toMatch(/^webgpu on /);
    expect(typeof env.gpu.vendor).toBe('string');
    expect(env.gpu.limits.maxStorageBufferBindingSize).toBeGreaterThan(0);
    const cpu = await run(h, args('wasm', 'wasm'), {});
    expect(cpu.code, cpu.out).toBe(0);
    const [g, w] = [h.rows('gpu'), h.rows('wasm')];
    expect(g).toHaveLength(2);
    expect(w).toHaveLength(2);
    for (let i = 0; i < 2; i++) {
      for (const k of ['policyLoss', 'valueLoss', 'entropy', 'approxKl', 'explainedVariance']) {
        const a = g[i]![k]!;
        const b = w[i]![k]!;
        expect(Number.isFinite(b), `${k} ${i}`).toBe(true);
        expect(Math.abs(a - b), `${k}, iteration ${i + 1}: webgpu ${a}, wasm ${b}`).toBeLessThan(
          1e-4 * Math.max(1, Math.abs(b)),
        );
      }
      expect(g[i]!.envSteps).toBe(w[i]!.envSteps);
    }
    // The held-out perplexity, before and after, as on wasm.
    const [pg, pw] = [
      h.json<Record<string, number>>('gpu', 'perplexity.json'),
      h.json<Record<string, number>>('wasm', 'perplexity.json'),
    ];
    expect(pg.lines).toBe(16);
    for (const k of ['before', 'after'])
      expect(Math.abs(pg[k]! - pw[k]!), `perplexity ${k}`).toBeLessThan(1e-4 * pw[k]!);
    // A checkpoint written on the GPU: PEFT adapter and value head files.
    const ck = join(h.dir('gpu'), 'checkpoints', 'iter-00000002', 'model');
    for (const f of ['adapter_config.json', 'adapter_model.safetensors', 'value_head.safetensors'])
      expect(existsSync(join(ck, f)), f).toBe(true);
  });

  // Every other trainer on the GPU: ETPO with Lion (its fused step and the target's Polyak step),
  // NTPO's and TWOSOME's updates, ARCHER's off-policy critic, and the group updates of GRPO, RLOO
  // and GiGPO (one group of the tiny run's 2 envs). Each runs 2 iterations of 2 minibatches (every
  // optimiser step but the last shows in a later loss). The rollout has 2 steps per environment
  // where that keeps every compared loss at least as far above the 1e-4 tolerance as the tiny
  // run's 4 steps do: ETPO's losses are about -12 and 8 either way, the group methods' policy loss
  // is 0 either way (their entropy is what differs), and TWOSOME's policy loss is below 1e-4 in
  // both iterations with 4 steps and in one with 2. NTPO's and ARCHER's second-iteration policy
  // losses fall below 1e-4 with 2 steps, so they keep 4.
  const group = ['--groups', '1', '--group-size', '2'] as const;
  const trainers = [
    [2, ['etpo', '--optimizer', 'lion']],
    [4, ['ntpo']],
    [2, ['twosome']],
    [4, ['archer']],
    [2, ['grpo', ...group]],
    [2, ['rloo', ...group]],
    [2, ['gigpo', ...group]],
  ] as const;
  // No perplexity passes: the losses are what these runs compare.
  const extra = (steps: number, algo: readonly string[]) => [
    '--algo',
    ...algo,
    '--num-steps',
    String(steps),
    '--perplexity-lines',
    '0',
  ];

  describe('the other trainers, run in this process', () => {
    // The wasm references run first, before this process opens a GPU device; the last test runs
    // wasm again after the GPU runs, which must not record GPU columns either.
    const wasm = new Map<string, CommandResult>();
    beforeAll(async () => {
      for (const [steps, algo] of trainers) {
        const a = inProcess.args(`${algo[0]}-wasm`, 2, [
          ...extra(steps, algo),
          '--backend',
          'wasm',
        ]);
        wasm.set(algo[0], await inProcess.run(a));
      }
    }, 600_000);

    for (const [steps, algo] of trainers) {
      it(`${algo.join(' ')}: the same losses as wasm within 1e-4 over 2 iterations`, {
        timeout: 600_000,
      }, async () => {
        const name = algo[0];
        const gpu = await run(
          inProcess,
          inProcess.args(`${name}-gpu`, 2, [...extra(steps, algo), '--backend', 'webgpu']),
          { POAD_WEBGPU_ALLOW_SOFTWARE: '1' },
        );
        if (gpu.code === 2 && /WebGPU|backend "webgpu"/.test(gpu.out)) {
          expect(process.env.CI, `no WebGPU adapter under CI: ${gpu.out}`).toBeFalsy();
          console.warn(`webgpu CLI test not run: ${gpu.out.trim().split('\n').pop()}`);
          return;
        }
        expect(gpu.code, gpu.out).toBe(0);
        const cpu = wasm.get(name)!;
        expect(cpu.code, cpu.out).toBe(0);
        const [g, w] = [inProcess.rows(`${name}-gpu`), inProcess.rows(`${name}-wasm`)];
        expect(g.length).toBeGreaterThan(0);
        expect(g).toHaveLength(w.length);
        for (let i = 0; i < g.length; i++) {
          for (const k of ['policyLoss', 'valueLoss', 'entropy']) {
            const b = w[i]![k];
            if (b === undefined || b === null) continue;
            const a = g[i]![k]!;
            expect(Number.isFinite(b), `${k} ${i}`).toBe(true);
            expect(
              Math.abs(a - b),
              `${k}, iteration ${i + 1}: webgpu ${a}, wasm ${b}`,
            ).toBeLessThan(1e-4 * Math.max(1, Math.abs(b)));
          }
          // The GPU run counted its work; the wasm run has no GPU columns.
          expect(g[i]!.gpuPrograms).toBeGreaterThan(0);
          expect(w[i]!.gpuPrograms).toBeUndefined();
        }
      });
    }

    it('a wasm run after the GPU runs of this process records no GPU columns', {
      timeout: 600_000,
    }, async () => {
      const [steps, algo] = trainers[trainers.length - 1]!;
      const after = await inProcess.run(
        inProcess.args(`${algo[0]}-wasm-after`, 2, [...extra(steps, algo), '--backend', 'wasm']),
      );
      expect(after.code, after.out).toBe(0);
      const rows = inProcess.rows(`${algo[0]}-wasm-after`);
      expect(rows).toHaveLength(2);
      // Its numbers are the wasm reference's, and it counted no GPU work of its own.
      expect(rows.map((r) => r.entropy)).toEqual(
        inProcess.rows(`${algo[0]}-wasm`).map((r) => r.entropy),
      );
      for (const r of rows) expect(r.gpuPrograms).toBeUndefined();
    });
  });

  it('fails before any work, naming the missing piece, when no adapter is usable', async () => {
    const r = await run(h, args('none', 'webgpu'), { VK_DRIVER_FILES: '/nonexistent/icd.json' });
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/error: backend "webgpu": .*(driver|libvulkan)/);
    expect(readdirSync(h.runs)).not.toContain('none');
  });
});
