// A DataSciCoding run killed and resumed equals the uninterrupted run: its metrics (timings
// aside), programs.jsonl and final checkpoint. The resumed run replays its episodes in progress
// and samples iteration 2 again, scoring those programs again; with seeded-v1 scoring a program
// that draws unseeded randomness (kiln_batches, seed 5: a forest without random_state in
// iteration 2) gets the same reward, where the old OS-seeded rule gave it another.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { metricsRows, trainingHarness } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';

const h = trainingHarness({ app: 'apps/train-datascicoding/src/main.ts' });
const RUN = [
  '--dataset',
  'kiln_batches',
  '--seed',
  '5',
  '--envs',
  '2',
  '--num-steps',
  '2',
  '--num-minibatches',
  '2',
  '--eval-episodes',
  '0',
  '--threads',
  '1',
  // No perplexity passes: nothing here reads perplexity.json, and two passes over the code
  // model's held-out programs take longer than the runs' iterations.
  '--perplexity-lines',
  '0',
];
const CHECKPOINT_FILES = ['model/adapter_model.safetensors', 'trainer.safetensors', 'env.json'];
const checkpoint = (run: string, file: string) =>
  readFileSync(join(h.dir(run), 'checkpoints', 'iter-00000002', file));

describe('a killed and resumed DataSciCoding run', () => {
  it('equals the uninterrupted run: metrics, programs and checkpoint', async () => {
    // Both runs at once (the kill comes while checkpoint 2 is written, after iteration 2).
    const straight = h.spawn(h.args('straight', 2, RUN));
    process.env.POAD_TEST_CHECKPOINT_FAULT = 'files:kill@2';
    let killed: ReturnType<typeof h.spawn>;
    try {
      killed = h.spawn(h.args('killed', 2, RUN));
    } finally {
      delete process.env.POAD_TEST_CHECKPOINT_FAULT;
    }
    const [a, b] = await Promise.all([straight.done, killed.done]);
    expect(a.code, a.out).toBe(0);
    expect(b.signal, b.out).toBe('SIGKILL');
    const resumed = await h.run(['--resume', h.dir('killed'), '--quiet']);
    expect(resumed.code, resumed.out).toBe(0);
    expect(resumed.out).toContain('after iteration 1');

    expect(h.json('killed', 'config.json')).toMatchObject({ scoring: 'seeded-v1' });
    expect(metricsRows(h.dir('killed'), { timings: false })).toEqual(
      metricsRows(h.dir('straight'), { timings: false }),
    );
    const programs = (run: string) => readFileSync(join(h.dir(run), 'programs.jsonl'), 'utf8');
    expect(programs('killed').trim().split('\n')).toHaveLength(8);
    expect(programs('killed')).toBe(programs('straight'));
    for (const file of CHECKPOINT_FILES) {
      expect(checkpoint('killed', file).equals(checkpoint('straight', file)), file).toBe(true);
    }
  }, 240_000);
});
