import { initBackend } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkSettings, ENVIRONMENTS, Session, type SessionSettings } from '../src/session.js';
import { crc32, readZip, writeZip } from '../src/zip.js';
import { defaultModelFromFiles } from './node-session.js';

const load = defaultModelFromFiles;
// 2 envs × 2 steps: a batch of 4 samples, one per minibatch of the preset's 4 (its smallest).
const SMALL: SessionSettings = {
  env: 'virtualhome',
  task: 'food-preparation',
  algo: 'poad',
  seed: 3,
  envs: 2,
  numSteps: 2,
};
const numbers = (r: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(r).filter(([k]) => !/Seconds$|PerSec$/.test(k)));

beforeAll(async () => {
  process.env.POAD_NATIVE_KERNELS = '0';
  await initBackend('wasm', { threads: 1 });
});

describe('zip', () => {
  it('round-trips files and checks their CRC', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    const zip = writeZip([
      { name: 'a.txt', data: 'hello' },
      { name: 'dir/b.bin', data: new Uint8Array([0, 1, 2, 255]) },
    ]);
    const files = readZip(zip);
    expect(new TextDecoder().decode(files.get('a.txt'))).toBe('hello');
    expect([...files.get('dir/b.bin')!]).toEqual([0, 1, 2, 255]);
    const damaged = zip.slice();
    damaged[36] = damaged[36]! ^ 1; // a byte of a.txt's contents (after 30 + 5 header bytes)
    expect(() => readZip(damaged)).toThrow(/a\.txt is damaged/);
    expect(() => readZip(new Uint8Array(10))).toThrow(/not a zip file/);
  });
});

describe('Session', () => {
  it('refuses settings the playground does not offer, naming the field', () => {
    expect(() => checkSettings({ ...SMALL, task: 'cooking' })).toThrow(
      /unknown VirtualHome task "cooking"/,
    );
    expect(() =>
      checkSettings({ ...SMALL, env: 'overcooked', task: 'tomato-salad', algo: 'dqn' }),
    ).toThrow(/dqn is not offered for Overcooked/);
    expect(() => checkSettings({ ...SMALL, envs: 0 })).toThrow(/envs must be a positive integer/);
  });

  it('every environment and algorithm the page offers trains an iteration with finite losses', async () => {
    for (const [env, family] of Object.entries(ENVIRONMENTS)) {
      for (const algo of family.algorithms) {
        const s = await Session.create(
          {
            env: env as SessionSettings['env'],
            task: family.tasks[0],
            algo,
            seed: 1,
            envs: 2,
            numSteps: 2,
          },
          load,
        );
        try {
          const { row, credit } = await s.iterate();
          expect(Number.isFinite(row.policyLoss as number), `${env} ${algo}`).toBe(true);
          // The group-relative algorithms have no critic, hence no value loss.
          if (['grpo', 'rloo', 'gigpo'].includes(algo)) expect(row.valueLoss).toBeNaN();
          else expect(Number.isFinite(row.valueLoss as number), `${env} ${algo}`).toBe(true);
          expect(credit.rows.length, `${env} ${algo}`).toBeGreaterThan(0);
          expect(credit.title).toMatch(algo === 'etpo' ? /soft TD errors/ : /advantages/);
        } finally {
          s.dispose();
        }
      }
    }
  }, 600_000);

  it('a saved and reloaded run continues exactly as the uninterrupted one, without leaking tensors', async () => {
    const whole = await Session.create(SMALL, load);
    for (let i = 0; i < 3; i++) await whole.iterate();
    const expected = whole.metrics.map(numbers);
    whole.dispose();

    const before = tf.memory().numTensors;
    const first = await Session.create(SMALL, load);
    await first.iterate();
    await first.iterate();
    const zip = await first.checkpoint();
    first.dispose();
    expect(Session.settingsOf(zip)).toEqual(SMALL);
    const second = await Session.create(Session.settingsOf(zip), load);
    await second.restore(zip);
    expect(second.iteration).toBe(2);
    await second.iterate();
    expect(second.metrics.map(numbers)).toEqual(expected);
    const csv = second.metricsCsv().trim().split('\n');
    expect(csv).toHaveLength(4);
    const played = await second.play(true, 7);
    expect(played.steps.length).toBeGreaterThan(0);
    expect(played.steps[0]!.actions.reduce((a, x) => a + x.prob, 0)).toBeCloseTo(1, 5);
    const adapter = readZip(await second.adapterZip());
    expect([...adapter.keys()].sort()).toEqual([
      'adapter_config.json',
      'adapter_model.safetensors',
    ]);
    second.dispose();
    expect(tf.memory().numTensors).toBe(before);
  }, 600_000);
});
