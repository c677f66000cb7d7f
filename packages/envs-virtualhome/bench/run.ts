/**
 * Steps per second of the VirtualHome environments on one core, against a trivial env
 * measured in the same run. Usage: `npm run bench` (in this package).
 *
 * Each measurement plays a uniform random policy over the valid labels (seeded), resetting at
 * episode end, for STEPS steps; we report the median of RUNS measurements after a warm-up.
 */
import { createRng, type TextEnv, type TextStep } from '@poad/envs-core';
import { createVirtualHomeEnv, type VirtualHomeTask } from '../src/index.js';

const STEPS = 200_000;
const RUNS = 7;

/** The cheapest possible TextEnv: fixed text and labels, 50-step episodes, no dynamics. */
class TrivialEnv implements TextEnv {
  readonly id = 'bench/trivial';
  private t = 0;
  private readonly labels = ['walk to the kitchen', 'walk to the bedroom', 'walk to the bathroom'];
  async reset(): Promise<TextStep> {
    this.t = 0;
    return this.view(false);
  }
  async step(action: string): Promise<TextStep> {
    if (!this.labels.includes(action)) throw new Error(`bad action ${action}`);
    this.t += 1;
    return this.view(this.t >= 50);
  }
  async close(): Promise<void> {}
  private view(done: boolean): TextStep {
    return {
      observation: 'A fixed observation, your next step is to',
      actions: this.labels,
      reward: 0,
      terminated: false,
      truncated: done,
      info: {},
    };
  }
}

async function stepsPerSecond(env: TextEnv): Promise<number> {
  const rng = createRng(1);
  let s = await env.reset({ seed: 0 });
  const start = performance.now();
  for (let i = 0; i < STEPS; i++) {
    s = await env.step(rng.choice(s.actions as readonly string[]));
    if (s.terminated || s.truncated) s = await env.reset({ seed: 0 });
  }
  return STEPS / ((performance.now() - start) / 1000);
}

function syncStepsPerSecond(task: VirtualHomeTask): number {
  const env = createVirtualHomeEnv(task);
  const rng = createRng(1);
  let s = env.resetSync();
  const start = performance.now();
  for (let i = 0; i < STEPS; i++) {
    s = env.stepSync(rng.choice(s.actions as readonly string[]));
    if (s.terminated || s.truncated) s = env.resetSync();
  }
  return STEPS / ((performance.now() - start) / 1000);
}

async function median(measure: () => number | Promise<number>): Promise<number> {
  await measure(); // warm-up
  const xs: number[] = [];
  for (let r = 0; r < RUNS; r++) xs.push(await measure());
  xs.sort((a, b) => a - b);
  return xs[Math.floor(RUNS / 2)] as number;
}

const fmt = (x: number): string => Math.round(x).toLocaleString('en-US').padStart(11);

const baseline = await median(() => stepsPerSecond(new TrivialEnv()));
console.log(
  `steps/s, median of ${RUNS} runs of ${STEPS.toLocaleString('en-US')} random-policy steps (Node ${process.version})`,
);
console.log(`${'trivial env (baseline), step()'.padEnd(44)}${fmt(baseline)}`);
for (const task of ['food-preparation', 'entertainment'] as const) {
  const asyncRate = await median(() => stepsPerSecond(createVirtualHomeEnv(task)));
  const syncRate = await median(() => syncStepsPerSecond(task));
  const ratio = (asyncRate / baseline).toFixed(2);
  console.log(`${`virtualhome/${task}, step()`.padEnd(44)}${fmt(asyncRate)}  (${ratio}x baseline)`);
  console.log(`${`virtualhome/${task}, stepSync()`.padEnd(44)}${fmt(syncRate)}`);
  if (asyncRate < 100_000) console.log('  below the 100,000 steps/s target');
}
