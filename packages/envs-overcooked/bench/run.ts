/**
 * Macro-steps per second of the Overcooked environments under a uniform-random policy over
 * the valid labels, on one core. Each figure is the median of several timed runs; the baseline
 * is the same environment with the navigation cache switched off (the A* search runs on every
 * primitive step, as in the original), measured in the same process.
 *
 * Run: npm run bench (in packages/envs-overcooked)
 */
import { createRng } from '@poad/envs-core';
import { createOvercookedEnv, type OvercookedEnvOptions } from '../src/index.js';

const RUNS = 7;
const MACROS_PER_RUN = 40_000;
const TARGET = 20_000;

type Task = 'tomato-salad' | 'tomato-lettuce-salad';

function timeSync(task: Task, options: OvercookedEnvOptions, seed: number): number {
  const env = createOvercookedEnv(task, options);
  const rng = createRng(seed);
  let step = env.resetSync({ seed });
  const start = performance.now();
  for (let i = 0; i < MACROS_PER_RUN; i++) {
    step = env.stepSync(rng.choice(step.actions as readonly string[]));
    if (step.terminated || step.truncated) step = env.resetSync({ seed });
  }
  return MACROS_PER_RUN / ((performance.now() - start) / 1000);
}

async function timeAsync(task: Task, options: OvercookedEnvOptions, seed: number): Promise<number> {
  const env = createOvercookedEnv(task, options);
  const rng = createRng(seed);
  let step = await env.reset({ seed });
  const start = performance.now();
  for (let i = 0; i < MACROS_PER_RUN; i++) {
    step = await env.step(rng.choice(step.actions as readonly string[]));
    if (step.terminated || step.truncated) step = await env.reset({ seed });
  }
  return MACROS_PER_RUN / ((performance.now() - start) / 1000);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function main(): Promise<void> {
  console.log(
    `Overcooked macro-steps/s, uniform-random valid labels, median of ${RUNS} runs x ${MACROS_PER_RUN} macros (Node ${process.version})`,
  );
  let ok = true;
  for (const task of ['tomato-salad', 'tomato-lettuce-salad'] as const) {
    // Warm up the JIT and the navigation cache.
    timeSync(task, {}, 1);
    timeSync(task, { navigationCache: false }, 1);
    const base: number[] = [];
    const sync: number[] = [];
    const viaPromise: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      base.push(timeSync(task, { navigationCache: false }, 100 + r));
      sync.push(timeSync(task, {}, 100 + r));
      viaPromise.push(await timeAsync(task, {}, 100 + r));
    }
    const b = median(base);
    const s = median(sync);
    const p = median(viaPromise);
    ok &&= p >= TARGET;
    const fmt = (v: number): string => v.toFixed(0).padStart(8);
    console.log(`overcooked/${task}`);
    console.log(`  baseline (search every step, stepSync) ${fmt(b)} macro-steps/s`);
    console.log(
      `  stepSync                               ${fmt(s)} macro-steps/s  x${(s / b).toFixed(2)}`,
    );
    console.log(
      `  await step()                           ${fmt(p)} macro-steps/s  x${(p / b).toFixed(2)}`,
    );
  }
  console.log(`target >= ${TARGET} macro-steps/s through await step(): ${ok ? 'met' : 'NOT met'}`);
}

await main();
