// LoRA step of @poad/lora-model's own model (small config, d=256, 4 layers) with stock kernels,
// with native kernels, and with native kernels plus the batched-matmul route of
// @poad/tfjs-kernels set to `matmul`. Loaded only when asked for (--lora-model) and only if both
// packages are built: they are not dependencies of this package.
import * as tf from '@tensorflow/tfjs-core';
import { registerNativeKernels, unregisterNativeKernels } from '../src/index.js';

interface KernelsApi {
  initBackend(choice: string): Promise<unknown>;
  setBatchMatMulRoute(route: string): void;
}

interface LoraModelApi {
  createCausalLM(
    config: Record<string, number>,
    opts: { seed: number; lora: boolean },
  ): {
    tokenStats(prompts: number[][], actions: number[][]): { logProbs: tf.Tensor };
    policyVariables(): tf.Variable[];
  };
}

const LORA_MODEL = '@poad/lora-model';
const KERNELS = '@poad/tfjs-kernels';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Prints tokens/s of forward and LoRA step for the three variants, interleaved round by round. */
export async function benchLoraModel(rounds: number): Promise<void> {
  let lm: LoraModelApi;
  let kernels: KernelsApi;
  try {
    kernels = (await import(/* @vite-ignore */ KERNELS)) as KernelsApi;
    lm = (await import(/* @vite-ignore */ LORA_MODEL)) as LoraModelApi;
    await kernels.initBackend('wasm');
  } catch (err) {
    console.log(
      `\n@poad/lora-model: skipped (${err instanceof Error ? err.message : String(err)})`,
    );
    return;
  }
  const config = {
    vocab_size: 4096,
    hidden_size: 256,
    intermediate_size: 688,
    num_hidden_layers: 4,
    num_attention_heads: 4,
  };
  const B = 8;
  const T = 128;
  const prompts = Array.from({ length: B }, (_, i) => [i + 1]);
  const actions = Array.from({ length: B }, (_, i) =>
    Array.from({ length: T - 1 }, (_, j) => (i * 31 + j * 7) % 4096),
  );
  const variants = ['stock', 'native', 'native, route matmul'] as const;
  type V = (typeof variants)[number];
  const use = (v: V) => {
    kernels.setBatchMatMulRoute(v === 'native, route matmul' ? 'matmul' : 'auto');
    unregisterNativeKernels();
    if (v !== 'stock') registerNativeKernels('wasm');
  };
  const models = new Map(
    variants.map((v) => [v, lm.createCausalLM(config, { seed: 1, lora: true })]),
  );
  const optimizers = new Map(variants.map((v) => [v, tf.train.adam(1e-4)]));
  const times = new Map(variants.map((v) => [v, { fwd: [] as number[], lora: [] as number[] }]));
  const losses = new Map<V, number>();
  for (let r = 0; r <= rounds; r++) {
    for (const v of variants) {
      use(v);
      const m = models.get(v)!;
      let t0 = performance.now();
      tf.tidy(() => tf.mean(m.tokenStats(prompts, actions).logProbs).dataSync());
      const fwd = performance.now() - t0;
      t0 = performance.now();
      const loss = optimizers
        .get(v)!
        .minimize(
          () => tf.neg(tf.mean(m.tokenStats(prompts, actions).logProbs)) as tf.Scalar,
          true,
          m.policyVariables(),
        )!;
      losses.set(v, loss.dataSync()[0]!);
      loss.dispose();
      const step = performance.now() - t0;
      if (r > 0) {
        times.get(v)!.fwd.push(fwd);
        times.get(v)!.lora.push(step);
      }
    }
  }
  unregisterNativeKernels();
  kernels.setBatchMatMulRoute('auto');
  for (const o of optimizers.values()) o.dispose();
  const tokens = B * T;
  const stock = times.get('stock')!;
  console.log(
    `\n@poad/lora-model LoRA step (d=256, 4 layers, B=${B}, T=${T}): tokens/s, median of ${rounds}`,
  );
  console.log('| variant | fwd | lora step | fwd vs stock | lora vs stock | last loss |');
  console.log('|---|---|---|---|---|---|');
  for (const v of variants) {
    const t = times.get(v)!;
    const f = median(t.fwd);
    const l = median(t.lora);
    console.log(
      `| ${v} | ${Math.round((tokens / f) * 1000).toLocaleString('en-US')} | ${Math.round((tokens / l) * 1000).toLocaleString('en-US')} | ${(median(stock.fwd) / f).toFixed(2)}x | ${(median(stock.lora) / l).toFixed(2)}x | ${losses.get(v)!.toFixed(5)} |`,
    );
  }
}
