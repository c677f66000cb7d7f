// tokenGae throughput: 4,096 actions × 16 tokens, against the plain nested-loop
// implementation (padded [T][L] arrays, test/reference.ts) measured in the same run.
// Usage: npm run bench -w @poad/bellman [-- --repeats 15]
import { batchTokenGae, poad } from '../src/index.js';
import { paddedTokenGae, toPadded } from '../test/reference.js';

const repeatsArg = process.argv.indexOf('--repeats');
const repeats = repeatsArg > 0 ? Number(process.argv[repeatsArg + 1]) : 15;
const T = 4096;
const L = 16;
const N = T * L;

let seed = 12345;
const rand = () => {
  seed = (seed * 1664525 + 1013904223) >>> 0;
  return seed / 2 ** 32 - 0.5;
};
// Typed arrays, as a rollout buffer stores them.
const seg = {
  rewards: Float64Array.from({ length: T }, rand),
  dones: Uint8Array.from({ length: T }, () => (rand() > 0.45 ? 1 : 0)),
  tokenCounts: new Uint32Array(T).fill(L),
  values: Float64Array.from({ length: N }, rand),
  bootstrapValue: 0.1,
};
const opts = { gamma: 0.95, lambda: 0.95 };
const out = { advantages: new Float64Array(N), returns: new Float64Array(N) };
const padded = toPadded({
  rewards: Array.from(seg.rewards),
  dones: Array.from(seg.dones, Boolean),
  tokenCounts: Array.from(seg.tokenCounts),
  values: Array.from(seg.values),
  bootstrapValue: seg.bootstrapValue,
});

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
function time(fn: () => void, inner: number): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < inner; i++) fn();
  return Number(process.hrtime.bigint() - t0) / 1e9 / inner;
}

const cases: [string, () => void, number][] = [
  [
    'plain nested loops (baseline)',
    () => paddedTokenGae('poad', padded.tok, padded.v, padded.r, padded.mNext, 0.95, 0.95),
    5,
  ],
  ['poad (fresh output arrays)', () => poad(seg, opts), 50],
  ['poad (preallocated `out`)', () => poad(seg, opts, out), 50],
  [
    'batchTokenGae (32 segments × 128 actions)',
    (() => {
      const segs = Array.from({ length: 32 }, (_, i) => ({
        rewards: seg.rewards.slice(i * 128, (i + 1) * 128),
        dones: seg.dones.slice(i * 128, (i + 1) * 128),
        tokenCounts: seg.tokenCounts.slice(i * 128, (i + 1) * 128),
        values: seg.values.subarray(i * 128 * L, (i + 1) * 128 * L),
        bootstrapValue: 0.1,
      }));
      return () => batchTokenGae(segs, opts);
    })(),
    50,
  ],
];

// Allocation check: garbage created by 200 calls writing into `out` (run with --expose-gc).
const gc = (globalThis as { gc?: () => void }).gc;
if (gc) {
  for (let i = 0; i < 50; i++) poad(seg, opts, out);
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 200; i++) poad(seg, opts, out);
  const grown = process.memoryUsage().heapUsed - before;
  console.log(
    `garbage from 200 calls with \`out\`: ${(grown / 200).toFixed(0)} bytes/call = ${(grown / (200 * N)).toFixed(3)} bytes/token (no per-token allocation)`,
  );
}
console.log(
  `tokenGae benchmark: ${T} actions × ${L} tokens = ${N} tokens, median of ${repeats} repeats`,
);
for (const [, fn] of cases) for (let i = 0; i < 20; i++) fn(); // warm-up (JIT)
const results = cases.map(([name, fn, inner]) => {
  const secs = median(Array.from({ length: repeats }, () => time(fn, inner)));
  return { name, tokensPerSec: N / secs };
});
const base = results[0]!.tokensPerSec;
for (const r of results) {
  console.log(
    `${r.name.padEnd(44)} ${(r.tokensPerSec / 1e6).toFixed(1).padStart(8)} M tokens/s   ×${(r.tokensPerSec / base).toFixed(1)} vs baseline`,
  );
}
const target = 50e6;
const best = results[2]!.tokensPerSec;
console.log(
  `target ≥ 50 M tokens/s: ${best >= target ? 'met' : 'NOT met'} (${(best / 1e6).toFixed(1)} M tokens/s)`,
);
