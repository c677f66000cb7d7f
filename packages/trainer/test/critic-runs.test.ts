// Training runs with the critic's options, end to end on the tiny model through the command line:
// a run stopped after iteration 2 and resumed equals the uninterrupted one (metrics, the actor's
// and the critic's adapters, the value head, the trainer state), the critic's adapter is saved as
// a PEFT adapter in the checkpoint's model/critic/ and loads back into a new agent, and a run with
// the defaults writes what it wrote before these options existed (no critic folder, no target).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readPeftAdapter } from '@poad/hf-files';
import type { TensorData } from '@poad/ppo';
import { describe, expect, it, vi } from 'vitest';
import { PPO_CHECKPOINT_FIELDS } from '../../ppo/test/checkpoint-fields.js';
import { createRunAgent } from '../src/agent/run-agent.js';
import { runCli } from '../src/cli.js';
import { loadRunConfig } from '../src/run-config.js';
import { readState } from '../src/state-file.js';
import { cliHarness, TINY_RUN } from './cli-harness.js';
import { metricsRows, tinyVirtualHomeApp } from './tiny-app.js';

vi.setConfig({ testTimeout: 300_000 });

const vh = tinyVirtualHomeApp;
const h = cliHarness({ base: TINY_RUN, spec: vh });

const iter = (dir: string, it: number) =>
  join(dir, 'checkpoints', `iter-${String(it).padStart(8, '0')}`);
const bytes = (dir: string, it: number, file: string) => readFileSync(join(iter(dir, it), file));

/** The files of a checkpoint whose bytes a resumed run must reproduce. */
function stateFiles(lora: boolean): string[] {
  return [
    'model/adapter_model.safetensors',
    'model/value_head.safetensors',
    'trainer.safetensors',
    'trainer.json',
    ...(lora ? ['model/critic/adapter_model.safetensors', 'model/critic/adapter_config.json'] : []),
  ];
}

type TrainerState = {
  criticWeights: TensorData[];
  targetWeights?: TensorData[];
  counters: { iterations: number; envSteps: number; actorUpdates: number };
};

const cases: [string, string[], { lora: boolean; target: boolean }][] = [
  [
    'critic-lora',
    [
      '--critic-adapter',
      'lora',
      '--critic-lora-rank',
      '4',
      '--critic-lora-targets',
      'q_proj,v_proj,o_proj',
      '--critic-lr',
      '1e-3',
    ],
    { lora: true, target: false },
  ],
  [
    'layers-target-warmup',
    [
      '--critic-features',
      'layers',
      '--target-critic-every',
      '2',
      '--target-critic-tau',
      '0.5',
      '--critic-warmup',
      '2',
      '--critic-epochs',
      '2',
    ],
    { lora: false, target: true },
  ],
  [
    'actor-features',
    ['--critic-features', 'actor', '--critic-grad-to-actor', '--no-value-clip'],
    { lora: false, target: false },
  ],
];

describe('runs with the critic options', () => {
  for (const [name, flags, has] of cases) {
    it(`${name}: stopped after iteration 2 and resumed, it equals the uninterrupted run`, async () => {
      const straight = h.dir(`${name}-straight`);
      const resumed = h.dir(`${name}-resumed`);
      let r = await h.run(h.args(`${name}-straight`, 3, flags));
      expect(r.code, r.out).toBe(0);
      r = await h.run(h.args(`${name}-resumed`, 2, flags));
      expect(r.code, r.out).toBe(0);
      expect(await runCli(vh, ['--resume', resumed, '--max-iterations', '3', '--quiet'])).toBe(0);
      h.output();
      expect(metricsRows(resumed)).toEqual(metricsRows(straight));
      for (const f of stateFiles(has.lora)) {
        expect(bytes(resumed, 3, f).equals(bytes(straight, 3, f)), f).toBe(true);
      }
      const state = readState<TrainerState>(iter(straight, 3), 'trainer');
      expect(state.counters.iterations).toBe(3);
      expect('targetWeights' in state).toBe(has.target);
      if (has.target) expect(state.targetWeights).toHaveLength(state.criticWeights.length);
      expect(existsSync(join(iter(straight, 3), 'model', 'critic'))).toBe(has.lora);
      if (name === 'layers-target-warmup') {
        // Two warmup iterations: the actor's first steps are in iteration 3.
        const rows = metricsRows(straight);
        expect(rows.map((x) => x.skippedMinibatches)).toEqual([0, 0, 0]);
        expect(state.counters.actorUpdates).toBe(2);
        expect(state.counters.envSteps).toBe(24);
      }
    });
  }

  it("the critic's adapter is a PEFT adapter that loads back into a new agent, bit for bit", async () => {
    const dir = h.dir('critic-lora-straight');
    const cp = iter(dir, 3);
    const { config, tensors } = await readPeftAdapter(join(cp, 'model', 'critic'));
    expect(config).toMatchObject({ r: 4, lora_alpha: 16 });
    expect([...(config.target_modules as string[])].sort()).toEqual(['o_proj', 'q_proj', 'v_proj']);
    // 2 layers × 3 modules × (A, B), every number finite, and B has learned.
    expect(tensors.size).toBe(12);
    for (const [k, t] of tensors) expect(t.data.every(Number.isFinite), k).toBe(true);
    expect([...tensors].some(([k, t]) => k.includes('lora_B') && t.data.some((x) => x !== 0))).toBe(
      true,
    );
    // A new agent for the run, its trainable files loaded: its critic (head, then adapter) holds
    // the numbers the trainer checkpoint holds.
    const rc = loadRunConfig(vh, dir);
    const { agent } = await createRunAgent(rc, () => {});
    try {
      await agent.loadTrainable(join(cp, 'model'));
      const state = readState<TrainerState>(cp, 'trainer');
      const critic = agent.policy.criticVariables;
      expect(critic).toHaveLength(state.criticWeights.length);
      expect(critic).toHaveLength(3 + 12);
      critic.forEach((v, i) => {
        expect(
          Buffer.from(v.dataSync().buffer).equals(Buffer.from(state.criticWeights[i]!.data.buffer)),
          `critic ${i}`,
        ).toBe(true);
      });
      await agent.checkTrainable(join(cp, 'model'));
    } finally {
      agent.dispose();
    }
  });

  it('with every option at its default a checkpoint holds what it held before them', async () => {
    const r = await h.run(h.args('defaults', 1));
    expect(r.code, r.out).toBe(0);
    const cp = iter(h.dir('defaults'), 1);
    expect(readdirSync(join(cp, 'model')).sort()).toEqual([
      'adapter_config.json',
      'adapter_model.safetensors',
      'value_head.safetensors',
    ]);
    const state = readState<Record<string, unknown>>(cp, 'trainer');
    expect(Object.keys(state)).toEqual(PPO_CHECKPOINT_FIELDS);
  });
});
