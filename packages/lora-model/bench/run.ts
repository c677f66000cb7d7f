/**
 * Throughput benchmark of @poad/lora-model next to PyTorch on the same configs and device.
 *
 *   npm run bench -w @poad/lora-model                  # quick: wasm + cpu, a few minutes at most
 *   npm run bench -w @poad/lora-model -- --full        # compute.md batch sizes (slow)
 *   npm run bench -w @poad/lora-model -- --backends webgpu --configs tiny,small,base
 *   npm run bench -w @poad/lora-model -- --backends webgpu --configs 1b,8b --torch-precision bf16
 *   options: --backends wasm-stock,wasm,cpu,webgpu  --configs tiny,small,base,1b,8b
 *            --modes fwd,lora,score,prefix  --reps 9  --warmup 3  --no-torch
 *            --batch N --seq N --weight-dtype float32|bfloat16 (override the configs')
 *            --matmul auto|tfjs|tiled (webgpu, float32 weights: auto times TF.js's matmul against
 *            the tiled program per shape before the steps, as a training run does; default auto)
 *   (wasm-stock: stock wasm kernels; wasm: with @poad/tfjs-native when its addon is built;
 *   list wasm-stock before wasm, since native kernels stay registered once loaded; webgpu: Dawn,
 *   a hardware adapter unless POAD_WEBGPU_ALLOW_SOFTWARE=1)
 *
 * PyTorch runs on CUDA when it sees a GPU (float32 with TF32 off: the same arithmetic as ours;
 * `--torch-precision tf32` or `bf16` shows what a PyTorch user would pick instead), else on the CPU
 * with one thread and the system BLAS. `POAD_PYTHON` names the interpreter (default
 * /usr/bin/python3, else python3). TF.js and PyTorch steps alternate (one each, `reps` times,
 * after a warm-up) so both see the same load on a shared machine; medians and ratios come from
 * the same run.
 *
 * `1b` and `8b` have the shapes of Llama-3.2-1B and Llama-3.1-8B (grouped-query heads, vocabulary
 * 128,256, llama3 rope scaling; 1b's head tied to the embedding) with random weights stored in
 * bfloat16 (drawn and packed on the GPU); they run on webgpu only. Each line reports the peak GPU
 * memory of both sides: ours the bytes TF.js's WebGPU buffer pool holds, PyTorch's
 * `torch.cuda.max_memory_allocated`.
 */
import {
  type BackendChoice,
  describeProductPlan,
  initBackend,
  releaseBackend,
} from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { type CausalLM, createCausalLM } from '../src/index.js';
import { SeededRng } from '../src/rng.js';
import { TorchBaseline } from './torch-client.js';

interface BenchConfig {
  name: string;
  d: number;
  layers: number;
  heads: number;
  ffn: number;
  vocab: number;
  batch: number;
  seq: number;
  /** Key/value heads (grouped-query attention); default `heads`. */
  kvHeads?: number;
  /** LM head tied to the embedding. */
  tied?: boolean;
  /** Llama 3 rope scaling factor (rope_theta 500,000). */
  llama3Factor?: number;
  /** Storage of the frozen weights (webgpu); default float32. */
  weightDtype?: 'float32' | 'bfloat16';
  /** Too large for the CPU backends. */
  gpuOnly?: boolean;
}

const args = process.argv.slice(2);
const flag = (name: string): boolean => args.includes(`--${name}`);
const option = (name: string, def: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? (args[i + 1] as string) : def;
};
const full = flag('full');
const backends = option('backends', 'wasm-stock,wasm,cpu').split(',');
const configNames = option('configs', 'tiny,small').split(',');
const torchPrecision = option('torch-precision', 'fp32');
const modes = option('modes', 'fwd,lora,score,prefix').split(',');
const matmul = option('matmul', 'auto');
if (!['auto', 'tfjs', 'tiled'].includes(matmul)) {
  console.error(`--matmul ${matmul}: use auto, tfjs or tiled`);
  process.exit(2);
}
const reps = Number(option('reps', full ? '9' : '3'));
// Untimed steps first: the wasm heap and BLAS buffers grow during the first few steps.
const warmup = Number(option('warmup', full ? '3' : '1'));
const SCORE = { prompt: 100, cands: 10, len: 8 };

const CONFIGS: Record<string, BenchConfig> = {
  tiny: {
    name: 'tiny',
    d: 256,
    layers: 4,
    heads: 4,
    ffn: 688,
    vocab: 4096,
    batch: full ? 8 : 4,
    seq: full ? 128 : 64,
  },
  small: {
    name: 'small',
    d: 512,
    layers: 8,
    heads: 8,
    ffn: 1376,
    vocab: 8192,
    batch: full ? 4 : 2,
    seq: full ? 256 : 64,
  },
  // About 125 M parameters (GPT-2 small's width and depth, LLaMA layout): the GPU reference size.
  base: {
    name: 'base',
    d: 768,
    layers: 12,
    heads: 12,
    ffn: 2048,
    vocab: 32000,
    batch: 8,
    seq: 512,
  },
  // Llama-3.2-1B's shapes, random bf16 weights.
  '1b': {
    name: '1b',
    d: 2048,
    layers: 16,
    heads: 32,
    kvHeads: 8,
    ffn: 8192,
    vocab: 128_256,
    tied: true,
    llama3Factor: 32,
    weightDtype: 'bfloat16',
    gpuOnly: true,
    batch: 4,
    seq: 512,
  },
  // Llama-3.1-8B's shapes, random bf16 weights.
  '8b': {
    name: '8b',
    d: 4096,
    layers: 32,
    heads: 32,
    kvHeads: 8,
    ffn: 14_336,
    vocab: 128_256,
    llama3Factor: 8,
    weightDtype: 'bfloat16',
    gpuOnly: true,
    batch: 2,
    seq: 512,
  },
};
for (const c of Object.values(CONFIGS)) {
  c.batch = Number(option('batch', String(c.batch)));
  c.seq = Number(option('seq', String(c.seq)));
  const dtype = option('weight-dtype', '');
  if (dtype === 'float32' || dtype === 'bfloat16') c.weightDtype = dtype;
  else if (dtype) throw new Error(`--weight-dtype ${dtype}: use float32 or bfloat16`);
}

/**
 * The pure-JS cpu backend is ~20× slower than wasm: fewer tokens, no baseline, no naive scoring.
 * On wasm, `base` at batch 8 × 512 outgrows the 4 GB wasm heap (attention probabilities and
 * logits kept for the backward pass): it runs at batch 1 × 512 there (tokens/s stay comparable).
 */
function forBackend(c: BenchConfig, backend: string): BenchConfig {
  if (backend === 'cpu') return { ...c, batch: 1, seq: 32 };
  if (backend !== 'webgpu' && c.name === 'base') return { ...c, batch: 1 };
  return c;
}

const mid = (x: number[]): number =>
  [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)] as number;

/** Alternate `a` and `b` `n` times after `warmup` untimed steps each; median seconds of both. */
async function alternate(
  a: () => Promise<number>,
  b: (() => Promise<number>) | null,
  n: number,
): Promise<[number, number | null]> {
  for (let i = 0; i < warmup; i++) {
    await a();
    if (b) await b();
  }
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < n; i++) {
    ta.push(await a());
    if (b) tb.push(await b());
  }
  return [mid(ta), b ? mid(tb) : null];
}

const timed = (fn: () => Promise<void>) => async (): Promise<number> => {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
};

function build(c: BenchConfig): CausalLM {
  return createCausalLM(
    {
      vocab_size: c.vocab,
      hidden_size: c.d,
      intermediate_size: c.ffn,
      num_hidden_layers: c.layers,
      num_attention_heads: c.heads,
      num_key_value_heads: c.kvHeads ?? c.heads,
      tie_word_embeddings: c.tied === true,
      max_position_embeddings: 131_072,
      ...(c.llama3Factor
        ? {
            rope_theta: 500_000,
            rope_scaling: {
              rope_type: 'llama3',
              factor: c.llama3Factor,
              low_freq_factor: 1,
              high_freq_factor: 4,
              original_max_position_embeddings: 8192,
            },
          }
        : {}),
    },
    { seed: 1, lora: true, weightDtype: c.weightDtype ?? 'float32' },
  );
}

/** Bytes the active backend holds on the GPU (TF.js's WebGPU buffer pool), or 0 elsewhere. */
function gpuBytesHeld(): number {
  const m = tf.memory() as tf.MemoryInfo & { numBytesAllocatedInGPU?: number };
  return m.numBytesAllocatedInGPU ?? 0;
}

const gib = (bytes: number): string => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

const fmt = (x: number): string => x.toFixed(0).padStart(8);
function line(
  backend: string,
  c: BenchConfig,
  mode: string,
  tokens: number,
  s: number,
  torch: number | null,
  torchTokens: number,
  peaks: { ours: number; torch: number } = { ours: 0, torch: 0 },
): void {
  const ours = tokens / s;
  let out = `${backend.padEnd(6)} ${c.name.padEnd(6)} ${mode.padEnd(12)} ${fmt(ours)} tok/s (median ${s.toFixed(3)} s)`;
  if (torch !== null) {
    const theirs = torchTokens / torch;
    out += `   torch ${fmt(theirs)} tok/s   ratio ${(ours / theirs).toFixed(3)}x`;
  }
  if (peaks.ours > 0) out += `   peak GPU memory ${gib(peaks.ours)}`;
  if (peaks.torch > 0) out += ` (torch ${gib(peaks.torch)})`;
  console.log(out);
}

/** The PyTorch process's name of a config at its batch and length. */
const torchKey = (c: BenchConfig): string => `${c.name}@${c.batch}x${c.seq}`;

async function benchModel(
  backend: string,
  base: BenchConfig,
  torch: TorchBaseline | null,
): Promise<void> {
  const c = forBackend(base, backend);
  const useTorch = backend !== 'cpu' ? torch : null;
  const model = build(c);
  if (backend === 'webgpu' && model.frozenProducts().length > 0) {
    if (matmul === 'auto') {
      const t0 = performance.now();
      // The row counts of the steps below: a token-stats pass and a scoring pass.
      const plan = await model.tuneProducts({ rows: [SCORE.cands * SCORE.len, c.batch * c.seq] });
      console.log(
        `# frozen float32 products: ${describeProductPlan(plan)} (timed in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
      );
    } else {
      model.useProducts(matmul as 'tfjs' | 'tiled');
      console.log(`# frozen float32 products: ${describeProductPlan(model.products)}`);
    }
  }
  const rng = new SeededRng(2);
  const prompts: number[][] = [];
  const actions: number[][] = [];
  for (let b = 0; b < c.batch; b++) {
    const seq = Array.from({ length: c.seq }, () => Math.floor(rng.next() * c.vocab));
    prompts.push(seq.slice(0, 1));
    actions.push(seq.slice(1));
  }
  const tokens = c.batch * (c.seq - 1);
  let torchTokens = 0;
  const peaks = { ours: gpuBytesHeld(), torch: 0 };
  const torchStep = (mode: string) =>
    useTorch
      ? async (): Promise<number> => {
          const r = await useTorch.step(torchKey(c), mode);
          torchTokens = r.tokens;
          peaks.torch = Math.max(peaks.torch, r.peak ?? 0);
          return r.seconds;
        }
      : null;
  /** `fn` timed, with the GPU memory it leaves held noted. */
  const timedPeak = (fn: () => Promise<void>) => {
    const t = timed(fn);
    return async (): Promise<number> => {
      const s = await t();
      peaks.ours = Math.max(peaks.ours, gpuBytesHeld());
      return s;
    };
  };
  console.log(`# ${backend} ${c.name}: batch ${c.batch} x seq ${c.seq}`);
  if (modes.includes('fwd')) {
    const ours = timedPeak(async () => {
      const l = tf.tidy(() => tf.neg(tf.mean(model.tokenStats(prompts, actions).logProbs)));
      await l.data();
      l.dispose();
    });
    const [s, t] = await alternate(ours, torchStep('fwd'), reps);
    line(backend, c, 'fwd', tokens, s, t, torchTokens, peaks);
  }
  if (modes.includes('lora')) {
    const opt = tf.train.adam(1e-4);
    const ours = timedPeak(async () => {
      const l = opt.minimize(
        () => tf.neg(tf.mean(model.tokenStats(prompts, actions).logProbs)) as tf.Scalar,
        true,
        model.policyVariables(),
      );
      await l?.data();
      l?.dispose();
    });
    const [s, t] = await alternate(ours, torchStep('lora'), reps);
    opt.dispose();
    line(backend, c, 'lora', tokens, s, t, torchTokens, peaks);
  }
  if (modes.includes('score') || modes.includes('prefix')) {
    const rand = (n: number): number[] =>
      Array.from({ length: n }, () => Math.floor(rng.next() * c.vocab));
    const prompt = rand(SCORE.prompt);
    const cands = Array.from({ length: SCORE.cands }, () => rand(SCORE.len));
    const scored = SCORE.cands * SCORE.len;
    const shared = timed(async () => {
      await model.scoreContinuations([prompt], [cands]);
    });
    console.log(
      `#   scoring ${SCORE.cands} candidates x ${SCORE.len} tokens after a ${SCORE.prompt}-token prompt`,
    );
    const [s, t] = await alternate(shared, torchStep('score'), reps);
    line(backend, c, 'score', scored, s, t, torchTokens);
    if (modes.includes('prefix') && backend !== 'cpu') {
      const naive = timed(async () => {
        await model.scoreContinuations([prompt], [cands], { prefixSharing: false });
      });
      // The ratio of two short timings is noisy on a shared machine: take more pairs.
      const [a, b] = await alternate(shared, naive, Math.max(reps, 7));
      line(backend, c, 'score-naive', scored, b as number, null, 0);
      console.log(
        `    prefix-shared speedup over naive scoring: ${((b as number) / a).toFixed(2)}x (target >= 5x)`,
      );
    }
  }
  model.dispose();
}

async function main(): Promise<void> {
  console.log(
    `# @poad/lora-model bench (${full ? 'full' : 'quick'}), node ${process.version}, reps ${reps}, warm-up ${warmup}`,
  );
  const torch = flag('no-torch')
    ? null
    : await TorchBaseline.start({
        // Every size a backend runs (forBackend), so PyTorch always runs the same batch as TF.js.
        configs: [
          ...new Map(
            configNames
              .flatMap((n) => (CONFIGS[n] ? backends.map((b) => forBackend(CONFIGS[n]!, b)) : []))
              .map((c) => [torchKey(c), { ...c, name: torchKey(c) }]),
          ).values(),
        ],
        score: SCORE,
        precision: torchPrecision,
      });
  if (torch) console.log(`# PyTorch baseline: ${torch.device}; same configs, steps alternated`);
  try {
    for (const backend of backends) {
      if (backend === 'wasm-stock') process.env.POAD_NATIVE_KERNELS = '0';
      else delete process.env.POAD_NATIVE_KERNELS;
      const info = await initBackend(
        (backend === 'wasm-stock' ? 'wasm' : backend) as BackendChoice,
      );
      console.log(`# backend: ${info.description}`);
      const label =
        info.backend === 'wasm' && info.description !== 'wasm' ? 'native' : info.backend;
      if (backend === 'wasm' && label !== 'native') {
        console.log(
          '# wasm + native kernels: not available (build @poad/tfjs-native with libopenblas-dev installed)',
        );
        continue;
      }
      for (const n of configNames) {
        const c = CONFIGS[n];
        if (!c) throw new Error(`unknown config ${n}; use ${Object.keys(CONFIGS).join(', ')}`);
        if (info.backend === 'cpu' && c.name !== 'tiny') continue; // minutes per step in pure JS
        if (c.gpuOnly && info.backend !== 'webgpu') {
          console.log(`# ${c.name}: webgpu only (its bf16 weights are kept packed there)`);
          continue;
        }
        await benchModel(label, c, torch);
      }
    }
  } finally {
    torch?.close();
    await releaseBackend();
  }
}

await main();
