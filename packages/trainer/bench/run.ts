// Update wall time per iteration of TWOSOME against POAD on the embedded default model and
// VirtualHome food-preparation (the 'small' preset: 8 envs × 16 steps, 2 epochs × 4
// minibatches), and TWOSOME with and without each prompt run once for all its candidates.
// Prints medians over iterations and the ratios, all measured in this run.
//
//   npm run bench -w @poad/trainer [-- --iterations 6 --threads 2]
import { makeVecEnv } from '@poad/envs-core';
import { createVirtualHomeEnv, VIRTUALHOME_PRESETS } from '@poad/envs-virtualhome';
import { type PpoConfig, PpoTrainer, type TokenPolicy } from '@poad/ppo';
import { createLmAgent, presetRun, releaseBackend, resolveModelPath } from '../src/index.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const iterations = arg('iterations', 6);
const threads = arg('threads', 2);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Update seconds of each iteration after the first (warm-up) for one setting. */
async function measure(algo: 'poad' | 'twosome', shared: boolean): Promise<number[]> {
  const agent = await createLmAgent({
    model: resolveModelPath('default'),
    backend: 'wasm',
    threads,
    seed: 1,
    lora: { r: 8, alpha: 16 },
  });
  const inner = agent.policy;
  const policy: TokenPolicy = Object.create(inner);
  if (!shared) Object.defineProperty(policy, 'scoreCandidateTokens', { value: undefined });
  const preset = presetRun(VIRTUALHOME_PRESETS, algo, { seed: 1 });
  const env = makeVecEnv(() => createVirtualHomeEnv('food-preparation'), preset.envs, {
    seed: 1,
  });
  const trainer = new PpoTrainer({ policy, env, config: preset.config as PpoConfig });
  const seconds: number[] = [];
  for (let i = 0; i <= iterations; i++) {
    agent.beginIteration();
    const r = await trainer.iterate();
    if (i > 0) seconds.push(r.update.seconds);
  }
  trainer.dispose();
  await env.close();
  agent.dispose();
  return seconds;
}

const settings = [
  ['poad', 'poad', true],
  ['twosome (prompt shared)', 'twosome', true],
  ['twosome (every candidate row in full)', 'twosome', false],
] as const;
const results: Record<string, number> = {};
for (const [label, algo, shared] of settings) {
  const s = await measure(algo, shared);
  results[label] = median(s);
  console.log(
    `${label}: update ${results[label]!.toFixed(2)} s/iteration (median of ${s.length}: ${s.map((x) => x.toFixed(2)).join(', ')})`,
  );
}
const poad = results.poad!;
console.log(
  `ratio twosome (prompt shared) / poad: ${(results['twosome (prompt shared)']! / poad).toFixed(2)}`,
);
console.log(
  `ratio twosome (every row) / poad: ${(results['twosome (every candidate row in full)']! / poad).toFixed(2)}`,
);
console.log(
  `speed-up of prompt sharing: ${(results['twosome (every candidate row in full)']! / results['twosome (prompt shared)']!).toFixed(2)}×`,
);
await releaseBackend();
