/**
 * Time per sampled token of `sampleToken` (top-k by selection) against sampling from the fully
 * sorted vocabulary (what it did before), on random logits of the embedded models' vocabulary.
 * Both draw the same tokens (tested in sampling.test.ts); rounds alternate so both see the same
 * load, and the medians and their ratio come from the same run.
 *
 *   npm run bench:sampling -w @poad/lora-model -- [--vocab 1024] [--top-k 50] [--rounds 7]
 */
import { loadavg } from 'node:os';
import { SeededRng } from '../src/rng.js';
import { sampleToken } from '../src/sampling.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? Number(args[at + 1]) : fallback;
};
const vocab = option('vocab', 1024);
const topK = option('top-k', 50);
const rounds = option('rounds', 7);
const temperature = 0.5;

/** The sampler as it was: sort every id by logit, keep the first k, draw. */
function fullSortSample(logits: Float32Array, rng: SeededRng): number {
  const idx = Array.from({ length: logits.length }, (_, i) => i);
  idx.sort((a, b) => (logits[b] as number) - (logits[a] as number) || a - b);
  const kept = idx.slice(0, topK);
  const max = (logits[kept[0] as number] as number) / temperature;
  const probs = kept.map((i) => Math.exp((logits[i] as number) / temperature - max));
  let u = rng.next() * probs.reduce((a, b) => a + b, 0);
  for (let j = 0; j < kept.length; j++) {
    u -= probs[j] as number;
    if (u < 0) return kept[j] as number;
  }
  return kept[kept.length - 1] as number;
}

const source = new SeededRng(3);
const rows = Array.from({ length: 200 }, () =>
  Float32Array.from({ length: vocab }, () => source.normal() * 3),
);
const draws = rows.length * 5;
const samples: Record<'sorted' | 'selected', number[]> = { sorted: [], selected: [] };
for (let round = 0; round < rounds; round++) {
  for (const which of ['sorted', 'selected'] as const) {
    const rng = new SeededRng(1);
    const started = performance.now();
    for (let k = 0; k < 5; k++) {
      for (const logits of rows) {
        if (which === 'sorted') fullSortSample(logits, rng);
        else sampleToken(logits, { topK, temperature }, rng);
      }
    }
    samples[which].push(((performance.now() - started) * 1000) / draws);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
const sorted = median(samples.sorted);
const selected = median(samples.selected);
console.log(
  `vocabulary ${vocab}, top-k ${topK}, ${draws} draws x ${rounds} rounds, load average ${loadavg()[0]?.toFixed(1)}`,
);
console.log(`  full sort: ${sorted.toFixed(1)} us/token (median)`);
console.log(`  selection: ${selected.toFixed(1)} us/token (median)`);
console.log(`  speed-up: ${(sorted / selected).toFixed(1)}x`);
