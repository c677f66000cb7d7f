// End-to-end smoke of the training CLI on a tiny model: a real run directory, resume bit for
// bit, evaluation, and bad input rejected before any work.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createOvercookedEnv, type OvercookedTaskName } from '@poad/envs-overcooked';
import { createVirtualHomeEnv, type VirtualHomeTask } from '@poad/envs-virtualhome';
import { SeededRng } from '@poad/ppo';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AppSpec } from '../src/app.js';
import { runCli } from '../src/cli.js';
import { samplerOptions } from '../src/evaluate.js';
import { defaultThreads, ppoConfigOf, presetDefaults } from '../src/resolve.js';
import { metricsRows } from './tiny-app.js';
import { tinyModelDir } from './tiny-model.js';

const vh: AppSpec = {
  command: 'train:virtualhome',
  family: 'virtualhome',
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
  family: 'overcooked',
  tasks: ['tomato-salad'],
  defaultTask: 'tomato-salad',
  envId: (t) => `overcooked/${t}`,
  makeEnv: (t) => createOvercookedEnv(t as OvercookedTaskName),
  evalTasks: (t) => [t],
};

let model = '';
let runs = '';
const small = [
  '--envs',
  '2',
  '--num-steps',
  '4',
  '--epochs',
  '1',
  '--minibatches',
  '2',
  '--eval-episodes',
  '2',
  '--quiet',
  '--backend',
  'wasm',
];
const stderr: string[] = [];

beforeAll(async () => {
  model = await tinyModelDir();
  runs = join(model, '..', 'runs');
  vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
    stderr.push(String(s));
    return true;
  });
});
afterAll(() => {
  vi.restoreAllMocks();
  rmSync(join(model, '..'), { recursive: true, force: true });
});

const rowsOf = metricsRows;

describe('training apps end to end', () => {
  it('trains, writes a complete run directory, and resumes bit for bit', async () => {
    stderr.length = 0;
    const code = await runCli(vh, [
      '--model',
      model,
      '--runs',
      runs,
      '--run-name',
      'straight',
      '--max-iterations',
      '3',
      ...small,
    ]);
    expect(code, stderr.join('')).toBe(0);
    const straight = join(runs, 'straight');
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
    expect(rowsOf(straight)).toHaveLength(3);
    for (const r of rowsOf(straight)) {
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

    // Same run in two pieces: 1 iteration, then --resume to 3.
    expect(
      await runCli(vh, [
        '--model',
        model,
        '--runs',
        runs,
        '--run-name',
        'pieces',
        '--max-iterations',
        '1',
        ...small,
      ]),
    ).toBe(0);
    const pieces = join(runs, 'pieces');
    // The run recorded its thread count; the resume keeps it even where the default differs.
    const threads = JSON.parse(readFileSync(join(pieces, 'config.json'), 'utf8')).threads;
    expect(threads).toBe(defaultThreads());
    const envThreads = process.env.POAD_NATIVE_THREADS;
    process.env.POAD_NATIVE_THREADS = String(threads + 1);
    stderr.length = 0;
    try {
      expect(defaultThreads()).toBe(threads + 1);
      expect(await runCli(vh, ['--resume', pieces, '--max-iterations', '3', '--quiet'])).toBe(0);
    } finally {
      if (envThreads === undefined) delete process.env.POAD_NATIVE_THREADS;
      else process.env.POAD_NATIVE_THREADS = envThreads;
    }
    const backendLine = stderr.join('').match(/backend: (.*);/)?.[1] ?? '';
    if (backendLine.includes('native kernels'))
      expect(backendLine).toContain(`, ${threads} thread${threads === 1 ? '' : 's'})`);
    expect(rowsOf(pieces)).toEqual(rowsOf(straight));
    const adapter = (d: string) =>
      readFileSync(join(d, 'checkpoints', 'iter-00000003', 'model', 'adapter_model.safetensors'));
    expect(adapter(pieces).equals(adapter(straight))).toBe(true);
    const trainer = (d: string) =>
      readFileSync(join(d, 'checkpoints', 'iter-00000003', 'trainer.safetensors'));
    expect(trainer(pieces).equals(trainer(straight))).toBe(true);
  });

  it('evaluates the latest checkpoint of a run', async () => {
    const dir = join(runs, 'straight');
    expect(await runCli(vh, ['eval', '--resume', dir, '--eval-episodes', '2', '--quiet'])).toBe(0);
    const out = JSON.parse(readFileSync(join(dir, 'eval-iter-3.json'), 'utf8'));
    expect(out.results['food-preparation/greedy'].episodes).toBe(2);
  });

  it('runs the Overcooked app', async () => {
    expect(
      await runCli(oc, [
        '--model',
        model,
        '--runs',
        runs,
        '--run-name',
        'oc',
        '--max-iterations',
        '1',
        '--threads',
        '1',
        ...small,
      ]),
    ).toBe(0);
    expect(rowsOf(join(runs, 'oc'))).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(runs, 'oc', 'config.json'), 'utf8')).threads).toBe(1);
    const env = JSON.parse(readFileSync(join(runs, 'oc', 'environment.json'), 'utf8'));
    if (env.backend.includes('native kernels')) expect(env.backend).toContain(', 1 thread)');
  });

  it('--token-space labels: the sampler and the update score the same restricted policy', async () => {
    const args = (name: string, extra: string[]) => [
      '--model',
      model,
      '--runs',
      runs,
      '--run-name',
      name,
      '--max-iterations',
      '1',
      ...small,
      // One epoch of one minibatch: the update sees the parameters that acted.
      '--minibatches',
      '1',
      '--target-kl',
      '0',
      ...extra,
    ];
    expect(await runCli(oc, args('oc-labels', ['--token-space', 'labels']))).toBe(0);
    expect(await runCli(oc, args('oc-vocab', ['--token-space', 'vocabulary']))).toBe(0);
    const [labels] = rowsOf(join(runs, 'oc-labels'));
    const [vocab] = rowsOf(join(runs, 'oc-vocab'));
    expect(
      JSON.parse(readFileSync(join(runs, 'oc-labels', 'config.json'), 'utf8')).tokenSpace,
    ).toBe('labels');
    expect(Math.abs(labels.approxKl)).toBeLessThan(1e-5);
    expect(labels.clipFraction).toBe(0);
    // Evaluation and play act with the run's own token space (read back from config.json).
    const saved = JSON.parse(readFileSync(join(runs, 'oc-labels', 'config.json'), 'utf8'));
    const sampler = samplerOptions(ppoConfigOf(oc, saved), true, new SeededRng(1));
    expect(sampler.tokenSpace).toBe('labels');
    expect(sampler.greedy).toBe(true);
    // The restricted entropy is at most log(labels sharing a prefix); the vocabulary one is not.
    expect(labels.entropy).not.toBe(vocab.entropy);
    expect(labels.entropy).toBeLessThan(vocab.entropy);
  });

  it("Overcooked's preset restricts the token space for token-level algorithms only", () => {
    expect(presetDefaults(oc, {}).tokenSpace).toBe('labels');
    expect(presetDefaults(oc, { algo: 'ntpo' }).tokenSpace).toBe('labels');
    expect(presetDefaults(oc, { algo: 'twosome' }).tokenSpace).toBe('vocabulary');
    expect(presetDefaults(oc, { preset: 'paper' }).tokenSpace).toBe('vocabulary');
    expect(presetDefaults(vh, {}).tokenSpace).toBe('vocabulary');
    // A run recorded before the option existed resumes with the vocabulary.
    const { tokenSpace: _, ...old } = JSON.parse(
      readFileSync(join(runs, 'oc-labels', 'config.json'), 'utf8'),
    );
    expect(ppoConfigOf(oc, old).tokenSpace).toBe('vocabulary');
  });

  it('rejects bad input before any work, naming the valid choices or the missing file', async () => {
    stderr.length = 0;
    expect(await runCli(vh, ['--task', 'cooking'])).toBe(2);
    expect(stderr.join('')).toMatch(/"cooking" is not one of: food-preparation, entertainment/);
    expect(await runCli(vh, ['--algo', 'dqn'])).toBe(2);
    expect(stderr.join('')).toMatch(/poad, ntpo, twosome, archer/);
    expect(await runCli(vh, ['--lr', '-1'])).toBe(2);
    expect(await runCli(vh, ['--threads', '0'])).toBe(2);
    expect(await runCli(vh, ['--lern-rate', '1'])).toBe(2);
    expect(stderr.join('')).toMatch(/unknown option --lern-rate/);
    expect(await runCli(oc, ['--algo', 'archer', '--model', model])).toBe(2);
    expect(stderr.join('')).toMatch(/archer/);
    stderr.length = 0;
    expect(await runCli(vh, ['--model', join(model, 'nope'), '--quiet'])).toBe(2);
    expect(stderr.join('')).toMatch(/config\.json/);
    expect(await runCli(vh, ['--resume', join(runs, 'straight'), '--seed', '5'])).toBe(2);
    expect(stderr.join('')).toMatch(/remove --seed/);
  });
});
