// The app's train loop (rollout, PPO update, metrics, plots, token credit, checkpoint) on a tiny
// model with every synchronous tensor read made to throw: a GPU backend in Node (WebGPU through
// Dawn) cannot serve dataSync / arraySync / bufferSync, and it runs exactly this path.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../src/cli.js';
import { TINY_RUN } from './cli-harness.js';
import { tinyVirtualHomeApp } from './tiny-app.js';
import { tinyModelDir } from './tiny-model.js';

const vh = tinyVirtualHomeApp;

const SYNC_READS = ['dataSync', 'arraySync', 'bufferSync'] as const;
const saved = SYNC_READS.map((name) => [name, tf.Tensor.prototype[name]] as const);

function setSyncReads(forbidden: boolean): void {
  for (const [name, fn] of saved) {
    Object.defineProperty(tf.Tensor.prototype, name, {
      configurable: true,
      writable: true,
      value: forbidden
        ? () => {
            throw new Error(`synchronous read ${name}() in the training path`);
          }
        : fn,
    });
  }
}

let model = '';
const stderr: string[] = [];
beforeAll(async () => {
  model = await tinyModelDir();
  vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
    stderr.push(String(s));
    return true;
  });
});
afterAll(() => {
  setSyncReads(false);
  vi.restoreAllMocks();
  rmSync(join(model, '..'), { recursive: true, force: true });
});

describe('the train loop without synchronous tensor reads', () => {
  it('trains one iteration and writes its checkpoint', { timeout: 120_000 }, async () => {
    const runs = join(model, '..', 'runs');
    setSyncReads(true);
    let code: number;
    try {
      code = await runCli(vh, [
        '--model',
        model,
        '--runs',
        runs,
        '--run-name',
        'async',
        '--max-iterations',
        '1',
        '--quiet',
        ...TINY_RUN,
      ]);
    } finally {
      setSyncReads(false);
    }
    expect(code, stderr.join('')).toBe(0);
    const ck = join(runs, 'async', 'checkpoints', 'iter-00000001');
    for (const f of ['trainer.json', 'trainer.safetensors', 'env.json', 'model']) {
      expect(existsSync(join(ck, f)), f).toBe(true);
    }
    const rows = readFileSync(join(runs, 'async', 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(rows).toHaveLength(1);
    expect(Number.isFinite(JSON.parse(rows[0]!).policyLoss)).toBe(true);
  });
});
