// Stock TF.js wasm kernels against @poad/tfjs-native, measured in the same run.
//   npm run bench -w @poad/tfjs-native              quick mode (under a minute)
//   npm run bench -w @poad/tfjs-native -- --full    the small config (d=256, 4 layers), more repeats
//   add --profile to print the kernels that dominate one native training step, and --lora-model
//   to time @poad/lora-model's own model too (when it and @poad/tfjs-kernels are built)
// Runs through vite-node: under plain Node ESM, tfjs-core's gradient registrations cannot load.
// Matmul: GFLOP/s with the result read back each call. Training: tokens/s of a LoRA step
// (forward + backward + Adam on rank-8 adapters) and of a forward pass. Variants are interleaved
// round by round and medians reported, so load from other processes hits all of them alike.
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import '@tensorflow/tfjs-backend-wasm';
import {
  getNativeInfo,
  nativeUnavailableReason,
  registerNativeKernels,
  unregisterNativeKernels,
} from '../src/index.js';
import { benchLoraModel } from './lora-model.js';
import { buildMiniLm, type MiniLmConfig, QUICK, SMALL } from './mini-lm.js';

const full = process.argv.includes('--full');
const profile = process.argv.includes('--profile') || process.argv.includes('--only-profile');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

type Variant = 'stock' | 'native' | 'native+fused';

function withKernels<T>(variant: Variant | boolean, fn: () => T): T {
  const v: Variant = variant === true ? 'native+fused' : variant === false ? 'stock' : variant;
  unregisterNativeKernels();
  if (v !== 'stock') {
    const res = registerNativeKernels('wasm', { fusedOps: v === 'native+fused' });
    if (res.kernels.length === 0) throw new Error(`native kernels unavailable: ${res.reason}`);
  }
  return fn();
}

interface MatCase {
  name: string;
  a: number[];
  b: number[];
  tA: boolean;
  tB: boolean;
  flops: number;
  stockRepeats: number;
}

/** A product case; its flops, 2·batch·m·n·k, follow from the shapes and transposes. */
function matCase(
  name: string,
  a: number[],
  b: number[],
  transposes: '' | 'A' | 'B',
  stockRepeats: number,
): MatCase {
  const tA = transposes === 'A';
  const tB = transposes === 'B';
  const [rowsA, colsA] = a.slice(-2) as [number, number];
  const [rowsB, colsB] = b.slice(-2) as [number, number];
  const batch = a.slice(0, -2).reduce((p, d) => p * d, 1);
  const [m, k] = tA ? [colsA, rowsA] : [rowsA, colsA];
  const n = tB ? rowsB : colsB;
  return { name, a, b, tA, tB, flops: 2 * batch * m * n * k, stockRepeats };
}

const matCases: MatCase[] = [
  matCase('1024x256 . 256x256', [1024, 256], [256, 256], '', 5),
  matCase('same, transposeB', [1024, 256], [256, 256], 'B', 3),
  matCase('same, transposeA (1024x256)T . 1024x256', [1024, 256], [1024, 256], 'A', 3),
  matCase('LM-head dW (1024x256)T . 1024x4096', [1024, 256], [1024, 4096], 'A', 1),
  matCase('QK^T batched 32x128x64', [32, 128, 64], [32, 128, 64], 'B', 3),
  matCase('PV batched 32x128x128 . 32x128x64', [32, 128, 128], [32, 128, 64], '', 3),
];

/**
 * Runs each variant's `fn` once per round, the variants interleaved, and returns the median
 * time per variant. Interleaving spreads load from other processes over all variants alike.
 */
function interleaved<V extends string>(
  variants: readonly V[],
  rounds: number,
  fn: (variant: V) => void,
): Map<V, number> {
  const times = new Map<V, number[]>(variants.map((v) => [v, []]));
  for (const v of variants) withKernels(v as Variant, () => fn(v)); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) {
      withKernels(v as Variant, () => {
        const t0 = performance.now();
        fn(v);
        times.get(v)!.push(performance.now() - t0);
      });
    }
  }
  return new Map(variants.map((v) => [v, median(times.get(v)!)]));
}

function benchMatMul(): void {
  console.log('\nmatMul GFLOP/s (median; output read back each call; variants interleaved)');
  console.log('| shape | stock wasm | native | ratio |');
  console.log('|---|---|---|---|');
  for (const c of matCases) {
    const a = tf.randomUniform(c.a, -1, 1, 'float32', 1);
    const b = tf.randomUniform(c.b, -1, 1, 'float32', 2);
    const t = interleaved(
      ['stock', 'native'] as const,
      full ? c.stockRepeats * 2 : c.stockRepeats,
      () => {
        const y = tf.matMul(a, b, c.tA, c.tB);
        y.dataSync();
        y.dispose();
      },
    );
    const stock = t.get('stock')!;
    const native = t.get('native')!;
    const g = (ms: number) => c.flops / ms / 1e6;
    console.log(
      `| ${c.name} | ${g(stock).toFixed(1)} | ${g(native).toFixed(1)} | ${(stock / native).toFixed(1)}x |`,
    );
    tf.dispose([a, b]);
  }
}

function benchTraining(config: MiniLmConfig, steps: number): void {
  const tokens = config.batch * config.seq;
  const variants: Variant[] = ['stock', 'native', 'native+fused'];
  const models = new Map(variants.map((v) => [v, buildMiniLm(config, 7)]));
  const losses = new Map<Variant, number>();
  const fwd = interleaved(variants, steps, (v) => {
    tf.tidy(() => models.get(v)!.loss().dataSync());
  });
  const lora = interleaved(variants, steps, (v) => {
    losses.set(v, models.get(v)!.step());
  });
  for (const m of models.values()) m.dispose();
  const s = { fwd: fwd.get('stock')!, lora: lora.get('stock')! };
  const tps = (ms: number) => Math.round((tokens / ms) * 1000).toLocaleString('en-US');
  console.log(
    `\nLoRA training step, ${config.name}: tokens/s (median of ${steps}, variants interleaved)`,
  );
  console.log('| kernels | fwd | lora step | fwd vs stock | lora vs stock | last loss |');
  console.log('|---|---|---|---|---|---|');
  for (const v of variants) {
    const f = fwd.get(v)!;
    const l = lora.get(v)!;
    console.log(
      `| ${v} | ${tps(f)} | ${tps(l)} | ${(s.fwd / f).toFixed(2)}x | ${(s.lora / l).toFixed(2)}x | ${losses.get(v)!.toFixed(4)} |`,
    );
  }
}

async function profileStep(config: MiniLmConfig): Promise<void> {
  registerNativeKernels();
  const lm = buildMiniLm(config, 7);
  lm.step();
  const info = await tf.profile(() => {
    lm.step();
  });
  const byKernel = new Map<string, { ms: number; calls: number }>();
  for (const k of info.kernels) {
    const ms = typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0;
    const e = byKernel.get(k.name) ?? { ms: 0, calls: 0 };
    e.ms += ms;
    e.calls += 1;
    byKernel.set(k.name, e);
  }
  const total = [...byKernel.values()].reduce((p, e) => p + e.ms, 0);
  console.log(
    `\nprofile of one native LoRA step, ${config.name}: ${total.toFixed(0)} ms in kernels`,
  );
  for (const [name, e] of [...byKernel.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 15)) {
    console.log(
      `  ${name.padEnd(22)} ${e.ms.toFixed(1).padStart(8)} ms  ${String(e.calls).padStart(5)} calls`,
    );
  }
  lm.dispose();
}

async function main(): Promise<void> {
  await tf.setBackend('wasm');
  await tf.ready();
  const probe = registerNativeKernels();
  if (probe.kernels.length === 0) {
    // An optional package: without the addon there is nothing to compare, which is not a failure.
    console.log(`skipped: ${probe.reason ?? nativeUnavailableReason()}`);
    return;
  }
  const info = getNativeInfo()!;
  console.log(
    `${probe.description}; ${info.blasConfig} (core ${info.blasCore}); elementwise threads ${info.elementwiseThreads}; AVX2 ${info.avx2}`,
  );
  console.log(`mode: ${full ? 'full' : 'quick'}; node ${process.version}; tfjs ${tf.version_core}`);
  // Calibration: a plain 2-D product on the stock kernel tells how loaded the machine is.
  if (!process.argv.includes('--only-profile')) {
    benchMatMul();
    benchTraining(full ? SMALL : QUICK, full ? 5 : 7);
  }
  if (profile) await profileStep(full ? SMALL : QUICK);
  if (process.argv.includes('--lora-model')) await benchLoraModel(full ? 5 : 3);
  unregisterNativeKernels();
}

await main();
