// End-to-end smoke of the training CLI on a tiny model: a real run directory, resume bit for
// bit, evaluation, and bad input rejected before any work.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inCI } from '@poad/dev-kit';
import {
  createOvercookedEnv,
  OVERCOOKED_PRESETS,
  type OvercookedTaskName,
} from '@poad/envs-overcooked';
import {
  createVirtualHomeEnv,
  VIRTUALHOME_PRESETS,
  type VirtualHomeTask,
} from '@poad/envs-virtualhome';
import { SeededRng } from '@poad/ppo';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AppSpec } from '../src/app.js';
import { runCli } from '../src/cli.js';
import { samplerOptions } from '../src/evaluate.js';
import { defaultThreads, loadRunConfig } from '../src/run-config.js';
import { cliHarness, TINY_RUN } from './cli-harness.js';

const vh: AppSpec = {
  command: 'train:virtualhome',
  presets: VIRTUALHOME_PRESETS,
  summary: 'test',
  tasks: ['food-preparation', 'entertainment'],
  defaultTask: 'food-preparation',
  envId: (t) => `virtualhome/${t}`,
  makeEnv: (t) => createVirtualHomeEnv(t as VirtualHomeTask),
  evalTasks: (t) => (t === 'food-preparation' ? [t, 'food-preparation/cheese'] : [t]),
  examples: [],
};
const oc: AppSpec = {
  ...vh,
  command: 'train:overcooked',
  presets: OVERCOOKED_PRESETS,
  tasks: ['tomato-salad'],
  defaultTask: 'tomato-salad',
  envId: (t) => `overcooked/${t}`,
  makeEnv: (t) => createOvercookedEnv(t as OvercookedTaskName),
  evalTasks: (t) => [t],
};

// Two evaluation episodes per task on top of the tiny run.
const h = cliHarness({ base: [...TINY_RUN, '--eval-episodes', '2'], spec: vh });
const run = (spec: AppSpec, argv: string[]) => runCli(spec, argv);

/**
 * Checks a run's backend description against its thread count: with `@poad/tfjs-native`'s
 * kernels (which CI builds, so they must load there) it names the count; without them it is the
 * stock wasm backend, which has no count to name.
 */
function expectBackendThreads(backend: string, threads: number): void {
  if (inCI()) expect(backend, 'the native kernels load under CI').toMatch(/native kernels/);
  if (/native kernels/.test(backend)) {
    expect(backend).toMatch(/^wasm \+ native kernels \(/);
    expect(backend).toContain(`, ${threads} thread${threads === 1 ? '' : 's'})`);
  } else {
    expect(backend).toBe('wasm (@tensorflow/tfjs-backend-wasm)');
  }
}

describe('training apps end to end', () => {
  it('trains, writes a complete run directory, and resumes bit for bit', async () => {
    const first = await h.run(h.newRun('straight', 3));
    expect(first.code, first.out).toBe(0);
    const straight = h.dir('straight');
    for (const f of [
      'config.json',
      'environment.json',
      'metrics.jsonl',
      'metrics.csv',
      'learning-curve.svg',
      'learning-curve.png',
      'token-credit.svg',
      'eval.json',
    ]) {
      expect(readdirSync(straight)).toContain(f);
    }
    expect(h.rows('straight')).toHaveLength(3);
    for (const r of h.rows('straight')) {
      expect(r.labelMass).toBeGreaterThan(0);
      expect(r.labelMass).toBeLessThanOrEqual(1 + 1e-6);
    }
    const evalJson = JSON.parse(readFileSync(join(straight, 'eval.json'), 'utf8'));
    expect(Object.keys(evalJson.results)).toEqual([
      'food-preparation/greedy',
      'food-preparation/sampled',
      'food-preparation/cheese/greedy',
      'food-preparation/cheese/sampled',
    ]);

    // Same run in two pieces: 1 iteration, then --resume to 3 (without the final evaluations,
    // which come after the checkpoints compared here and are checked above).
    expect((await h.run(h.newRun('pieces', 1, ['--eval-episodes', '0']))).code).toBe(0);
    const pieces = h.dir('pieces');
    // The run recorded its thread count; the resume keeps it even where the default differs.
    const threads = JSON.parse(readFileSync(join(pieces, 'config.json'), 'utf8')).threads;
    expect(threads).toBe(defaultThreads());
    const envThreads = process.env.POAD_NATIVE_THREADS;
    process.env.POAD_NATIVE_THREADS = String(threads + 1);
    let resumed: { out: string };
    try {
      expect(defaultThreads()).toBe(threads + 1);
      resumed = await h.run(['--resume', pieces, '--max-iterations', '3', '--quiet']);
    } finally {
      if (envThreads === undefined) delete process.env.POAD_NATIVE_THREADS;
      else process.env.POAD_NATIVE_THREADS = envThreads;
    }
    expectBackendThreads(resumed.out.match(/backend: (.*?); model: /)?.[1] ?? '', threads);
    expect(h.rows('pieces')).toEqual(h.rows('straight'));
    const adapter = (d: string) =>
      readFileSync(join(d, 'checkpoints', 'iter-00000003', 'model', 'adapter_model.safetensors'));
    expect(adapter(pieces).equals(adapter(straight))).toBe(true);
    const trainer = (d: string) =>
      readFileSync(join(d, 'checkpoints', 'iter-00000003', 'trainer.safetensors'));
    expect(trainer(pieces).equals(trainer(straight))).toBe(true);
  });

  it('evaluates the latest checkpoint of a run', async () => {
    const dir = h.dir('straight');
    expect(await run(vh, ['eval', '--resume', dir, '--eval-episodes', '2', '--quiet'])).toBe(0);
    const out = JSON.parse(readFileSync(join(dir, 'eval-iter-3.json'), 'utf8'));
    expect(out.results['food-preparation/greedy'].episodes).toBe(2);
  });

  describe('the Overcooked app', () => {
    // Two runs that both tests read: one epoch of one minibatch each, so that the update sees the
    // parameters that acted; the labels run (the preset's token space) also evaluates.
    const args = (name: string, extra: string[]) =>
      h.newRun(name, 1, ['--num-minibatches', '1', '--target-kl', '0', '--threads', '1', ...extra]);
    const codes: Record<string, number> = {};
    beforeAll(async () => {
      codes.labels = await run(oc, args('oc-labels', ['--token-space', 'labels']));
      codes.vocab = await run(
        oc,
        args('oc-vocab', ['--token-space', 'vocabulary', '--eval-episodes', '0']),
      );
    });

    it('runs the Overcooked app', () => {
      expect(codes.labels).toBe(0);
      expect(h.rows('oc-labels')).toHaveLength(1);
      expect(h.json('oc-labels', 'config.json').threads).toBe(1);
      expectBackendThreads(
        (h.json('oc-labels', 'environment.json') as { backend: string }).backend,
        1,
      );
    });

    it('--token-space labels: the sampler and the update score the same restricted policy', () => {
      expect(codes.labels).toBe(0);
      expect(codes.vocab).toBe(0);
      const labels = h.rows('oc-labels')[0]!;
      const vocab = h.rows('oc-vocab')[0]!;
      expect(h.json('oc-labels', 'config.json').tokenSpace).toBe('labels');
      expect(Math.abs(labels.approxKl!)).toBeLessThan(1e-5);
      expect(labels.clipFraction).toBe(0);
      // Evaluation and play act with the run's own token space (read back from config.json).
      const saved = loadRunConfig(oc, h.dir('oc-labels'));
      const sampler = samplerOptions(saved.config, true, new SeededRng(1));
      expect(sampler.tokenSpace).toBe('labels');
      expect(sampler.greedy).toBe(true);
      // The restricted entropy is at most log(labels sharing a prefix); the vocabulary one is not.
      expect(labels.entropy).not.toBe(vocab.entropy);
      expect(labels.entropy).toBeLessThan(vocab.entropy!);
    });
  });

  it('rejects bad input before any work, naming the valid choices or the missing file', async () => {
    const refused = async (argv: string[], message: RegExp) => {
      const r = await h.run(argv);
      expect(r.code).toBe(2);
      expect(r.out).toMatch(message);
    };
    await refused(
      ['--task', 'cooking'],
      /"cooking" is not one of: food-preparation, entertainment/,
    );
    await refused(['--algo', 'dqn'], /poad, ntpo, twosome, archer/);
    await refused(['--lr', '-1'], /command line --lr: -1 is below the minimum 0/);
    await refused(['--threads', '0'], /--threads: 0 is below the minimum 1/);
    await refused(['--lern-rate', '1'], /unknown option --lern-rate/);
    await refused(['--model', join(h.model, 'nope'), '--quiet'], /config\.json/);
    await refused(['--resume', h.dir('straight'), '--seed', '5'], /remove --seed/);
    // An environment of open-text actions offers no ARCHER, and says why.
    const text = {
      ...oc,
      presets: { ...oc.presets, traits: { actions: 'text' as const, seededResets: true } },
    };
    const oc2 = await runCli(text, ['--algo', 'archer', '--model', h.model]);
    expect(oc2).toBe(2);
    expect(h.output()).toMatch(
      /"archer" is not offered for .*: archer needs the valid action labels/,
    );
  });
});
