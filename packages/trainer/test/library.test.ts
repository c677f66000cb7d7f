// train(), evaluate() and play() from code, on an environment defined in this test.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerEnv, unregisterEnv } from '@poad/envs-core';
import { readPeftAdapter } from '@poad/hf-files';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate, play, train } from '../src/index.js';
import { DOOR_LABELS, DoorEnv } from './door-env.js';
import { metricsRows } from './tiny-app.js';
import { tinyModelDir } from './tiny-model.js';

let model = '';
const runs = mkdtempSync(join(tmpdir(), 'poad-trainer-library-'));
const quietLog: string[] = [];
const base = () => ({
  model,
  envs: 2,
  numSteps: 4,
  numMinibatches: 2,
  evalEpisodes: 2,
  // The perplexity passes on 4 held-out texts, not all 200, whose passes cost as much as these
  // tiny runs (the perplexity test sets its own counts).
  perplexityLines: 4,
  threads: 1,
  quiet: true,
  runs,
  log: (line: string) => quietLog.push(line),
});

beforeAll(async () => {
  model = await tinyModelDir();
});
afterAll(() => rmSync(runs, { recursive: true, force: true }));

describe('train()', () => {
  it('trains a factory-made environment and writes a complete run directory, then resumes', async () => {
    const indices: number[] = [];
    const env = (i: number) => {
      indices.push(i);
      return new DoorEnv(i);
    };
    const r = await train({ ...base(), env, envName: 'doors', maxIterations: 2, seed: 4 });
    expect(r).toMatchObject({ iterations: 2, interrupted: false });
    expect(r.runDir.startsWith(join(runs, 'doors-poad-s4-'))).toBe(true);
    // Two training envs (0, 1), then two evaluation envs of each of greedy and sampled.
    expect(indices).toEqual([0, 1, 0, 1, 0, 1]);
    const rows = metricsRows(r.runDir);
    expect(rows.map((row) => row.iteration)).toEqual([1, 2]);
    expect(rows.every((row) => row.episodes === 8 && typeof row.policyLoss === 'number')).toBe(
      true,
    );
    const config = JSON.parse(readFileSync(join(r.runDir, 'config.json'), 'utf8'));
    expect(config).toMatchObject({
      task: 'doors',
      lr: 5e-4,
      envs: 2,
      numMinibatches: 2,
      weightDtype: 'auto',
    });
    // The run's config.json names the config fields as the schemas do; presets come from train().
    expect('family' in config || 'minibatches' in config).toBe(false);
    const checkpoints = readdirSync(join(r.runDir, 'checkpoints'))
      .filter((d) => d.startsWith('iter-'))
      .sort();
    const adapter = await readPeftAdapter(
      join(r.runDir, 'checkpoints', checkpoints.at(-1)!, 'model'),
    );
    expect(adapter.config.r).toBe(8);
    expect(adapter.tensors.size).toBeGreaterThan(0);
    const evals = JSON.parse(readFileSync(join(r.runDir, 'eval.json'), 'utf8'));
    expect(Object.keys(evals.results)).toEqual(['doors/greedy', 'doors/sampled']);
    for (const f of ['metrics.csv', 'learning-curve.svg', 'perplexity.json', 'environment.json'])
      expect(existsSync(join(r.runDir, f))).toBe(true);

    // Resuming continues the same run directory from its checkpoint.
    const more = await train({
      env,
      envName: 'doors',
      resume: r.runDir,
      maxIterations: 3,
      quiet: true,
      log: () => {},
    });
    expect(more).toMatchObject({ runDir: r.runDir, iterations: 3, interrupted: false });
    expect(metricsRows(r.runDir).slice(0, 2)).toEqual(rows);
    expect(metricsRows(r.runDir).map((row) => row.iteration)).toEqual([1, 2, 3]);

    // The checkpoint's policy, on the environment or with play's trace.
    const ev = await evaluate({ runDir: r.runDir, env, episodes: 3, greedy: false, log: () => {} });
    expect(ev).toMatchObject({ task: 'doors', greedy: false, episodes: 3, meanLength: 1 });
    // Each episode is one door: success and return are both 1 for the red door, 0 for the blue.
    expect([0, 1, 2, 3].map((wins) => wins / 3)).toContain(ev.successRate);
    expect(ev.meanReturn).toBeCloseTo(ev.successRate, 12);
    expect(ev.stdReturn).toBeCloseTo(Math.sqrt(ev.successRate * (1 - ev.successRate)), 12);
    const lines: string[] = [];
    const played = await play({ runDir: r.runDir, env, log: (l) => lines.push(l) });
    expect(played.steps).toHaveLength(1);
    expect(played.steps[0]!.actions.map((a) => a.label)).toEqual([...DOOR_LABELS]);
    const total = played.steps[0]!.actions.reduce((a, x) => a + x.prob, 0);
    expect(total).toBeCloseTo(1, 5);
    expect(played.episode?.length).toBe(1);
    expect(lines.some((l) => l.includes('<- chosen'))).toBe(true);
  });

  it('measures the perplexity on the first perplexityLines held-out texts, and not at all at 0', async () => {
    const env = (i: number) => new DoorEnv(i);
    const run = (perplexityLines: number, runName: string) =>
      train({
        ...base(),
        env,
        envName: 'doors',
        maxIterations: 1,
        evalEpisodes: 0,
        perplexityLines,
        runName,
      });
    const five = await run(5, 'perplexity-5');
    const p = JSON.parse(readFileSync(join(five.runDir, 'perplexity.json'), 'utf8'));
    expect(p.lines).toBe(5);
    expect(p.before).toBeGreaterThan(1);
    expect(p.after).toBeGreaterThan(1);
    expect(JSON.parse(readFileSync(join(five.runDir, 'config.json'), 'utf8')).perplexityLines).toBe(
      5,
    );
    const none = await run(0, 'perplexity-0');
    expect(none.iterations).toBe(1);
    expect(existsSync(join(none.runDir, 'perplexity.json'))).toBe(false);
    expect(existsSync(join(none.runDir, 'metrics.csv'))).toBe(true);
  });

  it('passes weightDtype to the model: 16-bit storage off webgpu is refused, naming the fix', async () => {
    await expect(
      train({
        ...base(),
        env: (i: number) => new DoorEnv(i),
        envName: 'doors',
        backend: 'wasm',
        maxIterations: 1,
        weightDtype: 'bfloat16',
      }),
    ).rejects.toThrow(/weightDtype.*webgpu backend only \(active: wasm\); use "auto" or "float32"/);
  });

  it('trains a registered environment by its id', async () => {
    registerEnv('test/doors', () => new DoorEnv(), { actionSpace: 'discrete' });
    try {
      // A finished train() leaves no tensor behind (model, adapter, value head, optimisers).
      const first = await train({
        ...base(),
        env: 'test/doors',
        maxIterations: 1,
        evalEpisodes: 0,
      });
      const live = tf.memory().numTensors;
      const r = await train({ ...base(), env: 'test/doors', maxIterations: 1, evalEpisodes: 0 });
      expect(tf.memory().numTensors).toBe(live);
      expect(r.iterations).toBe(1);
      expect(r.runDir.startsWith(join(runs, 'test-doors-poad-s1-'))).toBe(true);
      // Two runs started within the same second still get a directory each.
      expect(r.runDir).not.toBe(first.runDir);
      expect(existsSync(join(r.runDir, 'eval.json'))).toBe(false);
    } finally {
      unregisterEnv('test/doors');
    }
  });

  it('rejects bad options by name before loading a model or writing anything', async () => {
    const before = readdirSync(runs).length;
    const env = () => new DoorEnv();
    const bad: [Record<string, unknown>, RegExp][] = [
      [
        { learningRate: 1e-3 },
        /train\(\) options\.learningRate: unknown option for --algo poad\..*Known options: .*\blr\b/,
      ],
      [{ minibatches: 2 }, /options\.minibatches: unknown option.*Did you mean numMinibatches\?/],
      [{ lr: 'fast' }, /train\(\) options\.lr: expected a number/],
      [{ lr: 2 }, /train\(\) options\.lr: 2 is above the maximum 1/],
      [{ algo: 'dqn' }, /options\.algo: "dqn" is not offered.*poad/],
      [{ beta: 0.1 }, /options\.beta: not an option of --algo poad; it is one of etpo's/],
      [{ task: 'entertainment' }, /pass the environment as env/],
      [{ envName: '../escape' }, /envName/],
      [{ family: 'chess' }, /options\.family: unknown option/],
    ];
    for (const [extra, message] of bad) {
      await expect(train({ ...base(), env, ...extra } as never)).rejects.toThrow(message);
    }
    await expect(train({ ...base(), env: 'no/such-env' })).rejects.toMatchObject({
      name: 'UnknownEnvError',
    });
    await expect(train({ ...base(), env: 42 } as never)).rejects.toThrow(/env: expected/);
    await expect(evaluate({ runDir: join(runs, 'missing'), env })).rejects.toThrow(
      /no config\.json/,
    );
    expect(readdirSync(runs).length).toBe(before);
  });
});
