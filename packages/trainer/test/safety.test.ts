// Training never corrupts itself, end to end on a tiny model: environment outputs checked where
// they enter the rollout, non-finite minibatches skipped (and a stop after K in a row), no
// checkpoint with non-finite weights, the run-directory lock, kill -9 and failing writes inside
// checkpoint writing, and --resume falling back past a corrupted checkpoint.
import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { captureStdout, spawnApp, waitFor } from '@poad/dev-kit';
import type { TextEnv } from '@poad/envs-core';
import { readPeftAdapter } from '@poad/hf-files';
import type { TokenBatch, TokenScores } from '@poad/ppo';
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../src/agent/agent.js';
import type { AppSpec } from '../src/app.js';
import { runCli } from '../src/cli.js';
import { readState } from '../src/state-file.js';
import { cliHarness, TINY_RUN } from './cli-harness.js';
import { metricsRows, tinyVirtualHomeApp } from './tiny-app.js';

const vh = tinyVirtualHomeApp;

const h = cliHarness({ base: TINY_RUN, reference: vh });
const { newRun, output } = h;

const rowsOf = metricsRows;
const checkpoints = (dir: string) => readdirSync(join(dir, 'checkpoints')).sort();
const latest = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'checkpoints', 'latest.json'), 'utf8')).iteration as number;
const file = (dir: string, it: number, name: string) =>
  readFileSync(join(dir, 'checkpoints', `iter-${String(it).padStart(8, '0')}`, name));
/** The resumed run equals the uninterrupted one: metrics, adapter and trainer state. */
const expectSameAsStraight = (dir: string) => {
  const straight = join(h.runs, 'straight');
  expect(rowsOf(dir)).toEqual(rowsOf(straight));
  for (const f of ['model/adapter_model.safetensors', 'trainer.safetensors']) {
    expect(file(dir, 3, f).equals(file(straight, 3, f)), f).toBe(true);
  }
};
/** Every adapter and value-head number of a checkpoint is finite. */
const expectFiniteCheckpoint = async (dir: string, it: number) => {
  const cp = join(dir, 'checkpoints', `iter-${String(it).padStart(8, '0')}`);
  const { tensors } = await readPeftAdapter(join(cp, 'model'));
  for (const [name, t] of tensors)
    expect(t.data.every(Number.isFinite), `adapter tensor ${name} is not finite`).toBe(true);
  const state = readState<{ actorWeights: { data: Float32Array }[] }>(cp, 'trainer');
  for (const w of state.actorWeights)
    expect(w.data.every(Number.isFinite), 'trainer weights are not finite').toBe(true);
};

/**
 * The agent with the backward pass through the actor's log-probs made NaN for the backward
 * passes (one per minibatch here) that `poisoned` picks; the forward pass is unchanged.
 */
function nanGradients(poisoned: (n: number) => boolean) {
  return (agent: Agent): Agent => {
    let n = 0;
    const nanGrad = tf.customGrad((x, _save) => ({
      value: (x as tf.Tensor).clone(),
      gradFunc: (dy: tf.Tensor) => {
        n += 1;
        return poisoned(n) ? tf.mul(dy, Number.NaN) : dy.clone();
      },
    }));
    const policy = agent.policy;
    const wrapped = Object.assign(Object.create(policy) as typeof policy, {
      scoreTokens(batch: TokenBatch): TokenScores {
        const s = policy.scoreTokens(batch);
        return { logProbs: nanGrad(s.logProbs) as typeof s.logProbs, entropies: s.entropies };
      },
    });
    return { ...agent, policy: wrapped };
  };
}

describe('environment outputs are checked where they enter the rollout', () => {
  it('a NaN reward at step 5 stops the run with an error naming the env, its index and the step', async () => {
    // Step 5 of the first episodes falls in iteration 2 (4 steps per iteration).
    const nanAtStep5 = (env: TextEnv): TextEnv => {
      let t = 0;
      return {
        id: env.id,
        reset: (o) => {
          t = 0;
          return env.reset(o);
        },
        step: async (a) => {
          t += 1;
          const s = await env.step(a);
          return t === 5 ? { ...s, reward: Number.NaN } : s;
        },
        close: () => env.close(),
      };
    };
    const spec = { ...vh, makeEnv: (t: string) => nanAtStep5(vh.makeEnv(t)) };
    const handlers = process.listenerCount('SIGINT');
    const code = await runCli(spec, newRun('nan-reward', 3));
    const err = output();
    expect(code, err).toBe(2);
    expect(err).toMatch(
      /error: virtualhome\/food-preparation \(env [01], episode \d+, step 5\): reward is NaN; rewards must be finite numbers\. Fix the environment's step\(\)/,
    );
    const dir = join(h.runs, 'nan-reward');
    // Nothing of the iteration it happened in was learned from or saved; the lock was released.
    const rows = rowsOf(dir);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows.length).toBeLessThan(3);
    expect(latest(dir)).toBe(rows.length);
    expect(existsSync(join(dir, 'run.lock'))).toBe(false);
    // The run's Ctrl-C handler went with it.
    expect(process.listenerCount('SIGINT')).toBe(handlers);
  });
});

describe('non-finite minibatches', () => {
  it('are skipped, counted and shown while the run recovers; the saved adapter is finite', async () => {
    // Minibatch 2 of iteration 1 and both of iteration 2 get NaN gradients; iteration 3 is clean.
    const code = await runCli(
      vh,
      newRun('nan-grads', 3).filter((a) => a !== '--quiet'),
      { wrapAgent: nanGradients((n) => n >= 2 && n <= 4) },
    );
    const err = output();
    expect(code, err).toBe(0);
    const dir = join(h.runs, 'nan-grads');
    await expectFiniteCheckpoint(dir, 3);
    const rows = rowsOf(dir);
    expect(rows.map((r) => r.nonFiniteSkips)).toEqual([1, 2, 0]);
    expect(err).toContain(
      'warning: iteration 1 skipped 1 of 2 minibatch steps with a non-finite loss or gradient norm (1 in this run; the run stops after 8 in a row)',
    );
    expect(err).toContain('warning: iteration 2 skipped 2 of 2');
    // The progress line (a plain line on the first and the last iteration without a terminal).
    expect(err).toMatch(/1\/3 it \|.*\| non-finite skips 1\n/);
    expect(err).toMatch(/3\/3 it \|.*\| non-finite skips 3\n/);
    // Iteration 2's actor never stepped (no gradient norm logged); iteration 3's did.
    const w = (it: number) =>
      readState<{ actorWeights: { data: Float32Array }[] }>(
        join(dir, 'checkpoints', `iter-0000000${it}`),
        'trainer',
      ).actorWeights;
    expect(rows[1]!.actorGradNorm).toBeNull();
    expect(w(3)).not.toEqual(w(2));
  });

  it('stop the run with exit code 3 after --max-non-finite-skips in a row, the last good checkpoint latest', async () => {
    // Every minibatch from iteration 2 on: 2 skips in iteration 2, the third in iteration 3.
    const name = 'nan-stop';
    const code = await runCli(vh, newRun(name, 4, ['--max-non-finite-skips', '3']), {
      wrapAgent: nanGradients((n) => n >= 3),
    });
    const err = output();
    expect(code, err).toBe(3);
    expect(err).toMatch(
      /error: iteration 3: 3 consecutive minibatches had a non-finite loss or gradient norm \(last: epoch 1, minibatch 1: actor gradient norm NaN\)/,
    );
    const dir = join(h.runs, name);
    // After the error: where the run can continue from.
    expect(err).toContain(
      `maxNonFiniteSkips.\nthe latest checkpoint, iteration 2 (${join(dir, 'checkpoints', 'iter-00000002')}), is the last good one; --resume ${dir} continues from it`,
    );
    expect(latest(dir)).toBe(2);
    expect(rowsOf(dir).map((r) => r.nonFiniteSkips)).toEqual([0, 2]);
    expect(existsSync(join(dir, 'run.lock'))).toBe(false);
    await expectFiniteCheckpoint(dir, 2);
    // The run continues from there once the gradients are finite again.
    expect(await runCli(vh, ['--resume', dir, '--max-iterations', '3', '--quiet']), output()).toBe(
      0,
    );
    expect(rowsOf(dir).map((r) => r.iteration)).toEqual([1, 2, 3]);
  });

  it('a checkpoint is never written with non-finite weights', async () => {
    // A value-head weight turns NaN after iteration 2's update (before its checkpoint is saved).
    const spec: AppSpec = {
      ...vh,
      async onIteration(report, _dir, agent) {
        if (report.iteration !== 2) return;
        const v = agent.policy.criticVariables[0]!;
        v.assign(tf.fill(v.shape, Number.NaN));
      },
    };
    const code = await runCli(spec, newRun('nan-weights', 3));
    const err = output();
    expect(code, err).toBe(3);
    expect(err).toMatch(
      /error: checkpoint: criticWeights\[0\] holds \d+ non-finite values .*refusing to save non-finite weights/,
    );
    const dir = join(h.runs, 'nan-weights');
    expect(checkpoints(dir)).toEqual(['iter-00000001', 'latest.json']);
    expect(err).toContain('the latest checkpoint, iteration 1');
  });
});

describe('--help', () => {
  it('lists --max-non-finite-skips and the exit codes', async () => {
    const { result, text: help } = await captureStdout(() => runCli(vh, ['--help']));
    expect(result).toBe(0);
    expect(help).toMatch(/--max-non-finite-skips <int>\s+.*\(default: 8\)/);
    expect(help).toMatch(
      /Exit codes: 0 done; 2 bad input .*; 3 stopped after --max-non-finite-skips/,
    );
  });
});

describe('the run-directory lock', () => {
  it('refuses a second process training the same run directory, naming its pid; a killed holder is taken over', async () => {
    // A real training process, then a --resume of its directory while it runs.
    const dir = join(h.runs, 'busy');
    const first = spawnApp('apps/train-virtualhome/src/main.ts', newRun('busy', 50));
    await waitFor(join(dir, 'checkpoints', 'iter-00000001', 'meta.json'));
    const rows = readFileSync(join(dir, 'metrics.jsonl'), 'utf8');
    expect(await runCli(vh, ['--resume', dir, '--max-iterations', '2', '--quiet'])).toBe(2);
    expect(output()).toMatch(
      new RegExp(`error: run directory ${dir} is in use by process ${first.child.pid} \\(started `),
    );
    // eval reads without taking the lock.
    expect(await runCli(vh, ['eval', '--resume', dir, '--eval-episodes', '1', '--quiet'])).toBe(0);
    output();
    first.child.kill('SIGKILL');
    const r = await first.done;
    expect(r.signal, r.out).toBe('SIGKILL');
    expect(readFileSync(join(dir, 'metrics.jsonl'), 'utf8').startsWith(rows)).toBe(true);
    const done = latest(dir);
    expect(
      await runCli(vh, ['--resume', dir, '--max-iterations', String(done + 1), '--quiet']),
    ).toBe(0);
    expect(output()).toMatch(
      new RegExp(
        `warning: the lock of this run directory was left by process ${first.child.pid} .*which is gone \\(killed or crashed\\); taking it over`,
      ),
    );
    expect(rowsOf(dir).map((x) => x.iteration)).toEqual(
      Array.from({ length: done + 1 }, (_, i) => i + 1),
    );
    expect(existsSync(join(dir, 'run.lock'))).toBe(false);
  });

  it('a lock of another live process leaves the run untouched', async () => {
    const dir = join(h.runs, 'held');
    cpSync(join(h.runs, 'straight'), dir, { recursive: true });
    writeFileSync(
      join(dir, 'run.lock'),
      JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: 'x', argv: [], nonce: 'n' }),
    );
    const before = readFileSync(join(dir, 'metrics.jsonl'));
    expect(await runCli(vh, ['--resume', dir, '--max-iterations', '4', '--quiet'])).toBe(2);
    expect(output()).toContain(`is in use by process ${process.ppid}`);
    expect(readFileSync(join(dir, 'metrics.jsonl')).equals(before)).toBe(true);
    expect(checkpoints(dir)).toEqual(['iter-00000002', 'iter-00000003', 'latest.json']);
  });
});

describe('faults inside checkpoint writing', () => {
  for (const stage of ['files', 'latest'] as const) {
    it(`kill -9 at "${stage}" of checkpoint 2: the previous checkpoint loads and resume equals the uninterrupted run`, async () => {
      const name = `killed-${stage}`;
      const dir = join(h.runs, name);
      // The child inherits the test runner's environment and kills itself at that point.
      process.env.POAD_TEST_CHECKPOINT_FAULT = `${stage}:kill@2`;
      let child: ReturnType<typeof spawnApp>;
      try {
        child = spawnApp('apps/train-virtualhome/src/main.ts', newRun(name, 3));
      } finally {
        delete process.env.POAD_TEST_CHECKPOINT_FAULT;
      }
      const r = await child.done;
      expect(r.signal, r.out).toBe('SIGKILL');
      expect(latest(dir)).toBe(1);
      expect(await runCli(vh, ['--resume', dir, '--max-iterations', '3', '--quiet'])).toBe(0);
      expect(output()).toContain(`resuming ${dir} after iteration 1`);
      expectSameAsStraight(dir);
      expect(checkpoints(dir)).toEqual(['iter-00000002', 'iter-00000003', 'latest.json']);
    });
  }

  it('a write failing with ENOSPC: one clear error, the previous checkpoint intact, no temp files', async () => {
    const name = 'enospc';
    const dir = join(h.runs, name);
    process.env.POAD_TEST_CHECKPOINT_FAULT = 'latest:enospc@2';
    let code: number;
    try {
      code = await runCli(vh, newRun(name, 3));
    } finally {
      delete process.env.POAD_TEST_CHECKPOINT_FAULT;
    }
    const err = output();
    expect(code, err).toBe(2);
    expect(err).toContain(
      `error: cannot write checkpoint ${join(dir, 'checkpoints', 'iter-00000002')}: the disk is full (ENOSPC`,
    );
    expect(err).toContain(
      `The previous checkpoint ${join(dir, 'checkpoints', 'iter-00000001')} is intact`,
    );
    expect(checkpoints(dir)).toEqual(['iter-00000001', 'latest.json']);
    expect(existsSync(join(dir, 'run.lock'))).toBe(false);
    expect(await runCli(vh, ['--resume', dir, '--max-iterations', '3', '--quiet'])).toBe(0);
    output();
    expectSameAsStraight(dir);
  });
});

describe('--resume past a corrupted checkpoint', () => {
  const corrupted = (name: string, damage: (dir: string) => void) => {
    const dir = join(h.runs, name);
    cpSync(join(h.runs, 'straight'), dir, { recursive: true });
    // Pretend the run stopped after iteration 3's checkpoint: drop what came later.
    rmSync(join(dir, 'eval.json'), { force: true });
    damage(join(dir, 'checkpoints'));
    return dir;
  };

  for (const [what, damage] of [
    [
      'a truncated trainer.safetensors',
      (cps: string) => truncateSync(join(cps, 'iter-00000003', 'trainer.safetensors'), 100),
    ],
    [
      'broken JSON in env.json',
      (cps: string) => writeFileSync(join(cps, 'iter-00000003', 'env.json'), '{"seed": 1, "epi'),
    ],
    [
      'a truncated adapter',
      (cps: string) =>
        truncateSync(join(cps, 'iter-00000003', 'model', 'adapter_model.safetensors'), 50),
    ],
  ] as const) {
    it(`falls back to the previous complete checkpoint with a warning (${what})`, async () => {
      const dir = corrupted(`corrupt-${what.split(' ').at(-1)}`, damage);
      expect(await runCli(vh, ['--resume', dir, '--max-iterations', '3', '--quiet'])).toBe(0);
      const err = output();
      expect(err).toMatch(
        /warning: checkpoint iter-00000003 cannot be loaded \(.+\); falling back to iter-00000002/,
      );
      expect(err).toContain(`resuming ${dir} after iteration 2`);
      expectSameAsStraight(dir);
    });
  }

  it('refuses a corrupt greedy-evals.json with an error naming it and the fix; nothing is touched', async () => {
    const dir = corrupted('corrupt-greedy-evals', () => {});
    const evals = join(dir, 'greedy-evals.json');
    writeFileSync(evals, '[{"iteration": 2, "mean');
    const before = readFileSync(join(dir, 'metrics.jsonl'));
    const handlers = process.listenerCount('SIGINT');
    expect(await runCli(vh, ['--resume', dir, '--max-iterations', '4', '--quiet'])).toBe(2);
    expect(output()).toMatch(
      /error: .*greedy-evals\.json: not valid JSON \(.+\)\. It keeps the greedy evaluations of --eval-every: restore it from a backup, or delete it/,
    );
    writeFileSync(evals, '{"iteration": 2}');
    expect(await runCli(vh, ['--resume', dir, '--max-iterations', '4', '--quiet'])).toBe(2);
    expect(output()).toMatch(
      /greedy-evals\.json: not a list of evaluations with an iteration each/,
    );
    // No iteration was trained, the lock and the Ctrl-C handler went with the run.
    expect(readFileSync(join(dir, 'metrics.jsonl')).equals(before)).toBe(true);
    expect(latest(dir)).toBe(3);
    expect(existsSync(join(dir, 'run.lock'))).toBe(false);
    expect(process.listenerCount('SIGINT')).toBe(handlers);
    // Deleting it, as the error says, resumes the run.
    rmSync(evals);
    expect(await runCli(vh, ['--resume', dir, '--max-iterations', '4', '--quiet'])).toBe(0);
    expect(latest(dir)).toBe(4);
  });

  it('refuses with a clear error when no checkpoint is complete; eval falls back too', async () => {
    const dir = corrupted('corrupt-all', (cps) => {
      writeFileSync(join(cps, 'iter-00000003', 'trainer.json'), '{"format":');
      truncateSync(join(cps, 'iter-00000002', 'trainer.safetensors'), 10);
    });
    expect(await runCli(vh, ['eval', '--resume', dir, '--eval-episodes', '1', '--quiet'])).toBe(0);
    expect(output()).toContain('checkpoint: iteration 3');
    writeFileSync(join(dir, 'checkpoints', 'iter-00000003', 'model', 'adapter_config.json'), '{');
    expect(await runCli(vh, ['eval', '--resume', dir, '--eval-episodes', '1', '--quiet'])).toBe(0);
    expect(output()).toMatch(/falling back to iter-00000002[\s\S]*checkpoint: iteration 2/);
    const before = readFileSync(join(dir, 'metrics.jsonl'));
    expect(await runCli(vh, ['--resume', dir, '--max-iterations', '4', '--quiet'])).toBe(2);
    const err = output();
    expect(err).toMatch(
      /error: no complete checkpoint in .*checkpoints: iter-00000003: .*trainer\.json: not valid JSON.*; iter-00000002: .*trainer\.safetensors.*Start a new run/,
    );
    expect(readFileSync(join(dir, 'metrics.jsonl')).equals(before)).toBe(true);
    expect(existsSync(join(dir, 'run.lock'))).toBe(false);
  });
});
