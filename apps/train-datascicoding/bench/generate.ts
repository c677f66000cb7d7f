/**
 * Generation speed of the code model on DataSciCoding's first prompt: programs one at a time
 * (one decoder pass per token per program) against several at once (`generateBatch`: one pass
 * per token for all of them). Both produce the same programs; rounds alternate so both see the
 * same load, and the medians and their ratio come from the same run.
 *
 *   npm run bench:generate -w @poad/train-datascicoding -- [--dataset breast_cancer]
 *     [--batch 4] [--rounds 5] [--threads 1]
 */
import {
  DATASCICODING_PRESETS,
  infillPrompt,
  initialPrompt,
  loadDataset,
} from '@poad/envs-datascicoding';
import { createLmAgent, releaseBackend, resolveModelPath } from '@poad/trainer';
import { datasetOf } from '../src/spec.js';

const args = process.argv.slice(2);
const option = (name: string, def: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? (args[i + 1] as string) : def;
};
const dataset = option('dataset', 'breast_cancer');
const batch = Number(option('batch', '4'));
const rounds = Number(option('rounds', '5'));
const threads = Number(option('threads', '1'));
// The sampling settings of the environment's 'small' preset, as a POAD run takes them.
const small = DATASCICODING_PRESETS.presets.small!.values as {
  temperature: number;
  topK: number;
  maxNewTokens: number;
};

const agent = await createLmAgent({
  model: resolveModelPath('default-code'),
  backend: 'auto',
  threads,
  seed: 1,
  lora: { r: 8, alpha: 16 },
  stopTokenIds: [2],
});
const policy = agent.policy;
if (!policy.generate || !policy.generateBatch) throw new Error('the policy cannot generate');
const data = await loadDataset(datasetOf(dataset));
const ids = await policy.encodePrompt(
  infillPrompt(initialPrompt({ title: data.title, n: data.n, d: data.d })),
);
const prompts = Array.from({ length: batch }, () => ids);
let state = 1;
const options = () => ({
  maxTokens: small.maxNewTokens ?? 192,
  temperature: small.temperature ?? 0.5,
  topK: small.topK ?? 50,
  greedy: false,
  // The same seeds for both ways in a round: the same programs, the same token counts.
  random: () => {
    state = (state * 16807) % 2147483647;
    return state / 2147483647;
  },
});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const one: number[] = [];
const all: number[] = [];
let tokens = 0;
process.stderr.write(`backend: ${agent.backend}\n`);
for (let r = 0; r <= rounds; r++) {
  const seed = state;
  let t = performance.now();
  const a = [];
  for (const p of prompts) a.push(await policy.generate(p, options()));
  const sequential = (performance.now() - t) / 1000;
  state = seed;
  t = performance.now();
  const b = await policy.generateBatch(prompts, options());
  const batched = (performance.now() - t) / 1000;
  const same = a.every((g, i) => g.text === b[i]!.text);
  const n = a.reduce((s, g) => s + g.tokenIds.length, 0);
  // Round 0 warms up (wasm heap, kernel caches) and is not counted.
  if (r > 0) {
    one.push(sequential / n);
    all.push(batched / n);
    tokens += n;
  }
  process.stderr.write(
    `round ${r}${r === 0 ? ' (warm-up)' : ''}: ${n} tokens; one at a time ${sequential.toFixed(2)} s, ${batch} at once ${batched.toFixed(2)} s; same programs: ${same}\n`,
  );
  if (!same) throw new Error('batched generation gave other programs than one at a time');
}
const ms = (x: number) => (1000 * x).toFixed(2);
process.stdout.write(
  `${dataset}, ${batch} programs per round, ${rounds} rounds, ${tokens} tokens:\n` +
    `  one at a time: ${ms(median(one))} ms/token (median)\n` +
    `  ${batch} at once:    ${ms(median(all))} ms/token (median)\n` +
    `  speed-up: ${(median(one) / median(all)).toFixed(2)}×\n`,
);
agent.dispose();
await releaseBackend();
