/**
 * The products of a decoder layer and its LM head, timed per shape on the webgpu backend: TF.js's
 * matmul with a float32 weight against the package's tiled product (float32 and packed bf16
 * weights; with and without subgroups) and against unpacking a bf16 weight for TF.js's matmul.
 * The numbers say for which shapes the tiled product wins (docs/gpu.md).
 *
 *   npm run matmul-bench -w @poad/tfjs-kernels -- [--configs base,1b,8b] [--rows 8,2048]
 *       [--reps 10] [--out FILE.json] [--quick]
 *
 * Rows 8 are one decoding step of 8 sequences, 2048 a training minibatch of 4 × 512 tokens.
 * `--quick` (a software adapter, with POAD_WEBGPU_ALLOW_SOFTWARE=1) times small shapes only, to
 * check that everything runs; its figures mean nothing. Each time is the mean over `--reps` runs
 * queued back to back after two warm-up runs, ended by one read of a single value.
 */
import { writeFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs-core';
import {
  initBackend,
  packedMatMul,
  randomPackedNormal,
  releaseBackend,
  setSubgroupUse,
  subgroupSize,
  tiledMatMul,
  timeProduct,
  unpackWeight,
} from '../src/index.js';

/** Widths of the bench configs of `@poad/lora-model` (bench/run.ts). */
const CONFIGS: Record<string, { d: number; kv: number; ffn: number; vocab: number }> = {
  tiny: { d: 64, kv: 64, ffn: 160, vocab: 512 },
  base: { d: 768, kv: 768, ffn: 2048, vocab: 32_000 },
  '1b': { d: 2048, kv: 512, ffn: 8192, vocab: 128_256 },
  '8b': { d: 4096, kv: 1024, ffn: 14_336, vocab: 128_256 },
};

/** A product of the model: x [m, k] · W [k, n] (the head: x · Eᵀ with E [n, k], tied). */
interface Shape {
  label: string;
  k: number;
  n: number;
  transposed: boolean;
}

function shapesOf(name: string): Shape[] {
  const c = CONFIGS[name];
  if (!c)
    throw new RangeError(`--configs: unknown ${name}; known: ${Object.keys(CONFIGS).join(', ')}`);
  return [
    { label: `${name} q|k|v`, k: c.d, n: c.d + 2 * c.kv, transposed: false },
    { label: `${name} o`, k: c.d, n: c.d, transposed: false },
    { label: `${name} gate|up`, k: c.d, n: 2 * c.ffn, transposed: false },
    { label: `${name} down`, k: c.ffn, n: c.d, transposed: false },
    { label: `${name} head (tied)`, k: c.d, n: c.vocab, transposed: true },
  ];
}

/** Largest |a − b| over max(1, |b|), of two products. */
async function relDiff(a: tf.Tensor, b: tf.Tensor): Promise<number> {
  const [x, y] = await Promise.all([a.data(), b.data()]);
  let scale = 1;
  let d = 0;
  for (let i = 0; i < x.length; i++) {
    scale = Math.max(scale, Math.abs(y[i]!));
    d = Math.max(d, Math.abs(x[i]! - y[i]!));
  }
  return d / scale;
}

interface MatMulTiming {
  label: string;
  m: number;
  k: number;
  n: number;
  transposed: boolean;
  /** Milliseconds per product; null where the weight or the product does not fit one storage binding. */
  ms: Record<string, number | null>;
  /** TF.js float32 time over each other variant's: above 1, that variant is faster. */
  speedup: Record<string, number | null>;
  /** Largest relative difference of the tiled float32 product from TF.js's. */
  maxRelDiff: number | null;
}

const VARIANTS = [
  'tfjs f32',
  'tiled f32',
  'tiled f32, no subgroups',
  'tiled bf16',
  'tiled bf16, no subgroups',
  'unpack bf16 + tfjs',
] as const;

async function matmulBench(opts: {
  configs: string[];
  rows: number[];
  reps: number;
}): Promise<MatMulTiming[]> {
  const info = await initBackend('webgpu', {
    allowSoftwareAdapter: process.env.POAD_WEBGPU_ALLOW_SOFTWARE === '1',
  });
  const bindLimit = info.adapter?.limits.maxStorageBufferBindingSize ?? 2 ** 31 - 4;
  const sg = subgroupSize();
  console.log(`${info.description}; subgroups: ${sg === null ? 'none used' : `${sg} lanes`}`);
  const out: MatMulTiming[] = [];
  for (const name of opts.configs) {
    for (const s of shapesOf(name)) {
      const wRows = s.transposed ? s.n : s.k;
      const wCols = s.transposed ? s.k : s.n;
      const f32Fits = wRows * wCols * 4 <= bindLimit;
      // The weight is drawn on the device in bf16 (no host random numbers for billions of values);
      // the float32 weight is its exact unpacking, so every variant multiplies the same values.
      const wp = randomPackedNormal(wRows, wCols, 'bfloat16', { seed: 3, std: 0.02 });
      const wf = f32Fits ? unpackWeight(wp, 'bfloat16') : null;
      for (const m of opts.rows) {
        const x = tf.randomNormal([m, s.k], 0, 1, 'float32', 2) as tf.Tensor2D;
        const outFits = m * s.n * 4 <= bindLimit;
        const ms: Record<string, number | null> = {};
        // The "no subgroups" variants run the same call with subgroups turned off.
        const tiledF32 = wf ? () => tiledMatMul(x, wf, s.transposed) : null;
        const tiledBf16 = () => packedMatMul(x, wp, 'bfloat16', s.transposed);
        const runs: Record<(typeof VARIANTS)[number], (() => tf.Tensor) | null> = {
          'tfjs f32': wf ? () => tf.matMul(x, wf, false, s.transposed) : null,
          'tiled f32': tiledF32,
          'tiled f32, no subgroups': tiledF32,
          'tiled bf16': tiledBf16,
          'tiled bf16, no subgroups': tiledBf16,
          'unpack bf16 + tfjs': f32Fits
            ? () => tf.tidy(() => tf.matMul(x, unpackWeight(wp, 'bfloat16'), false, s.transposed))
            : null,
        };
        for (const v of VARIANTS) {
          const run = runs[v];
          setSubgroupUse(!v.endsWith('no subgroups'));
          ms[v] = run && outFits ? await timeProduct(run, opts.reps) : null;
        }
        setSubgroupUse(true);
        let maxRelDiff: number | null = null;
        if (wf && outFits) {
          const a = tiledMatMul(x, wf, s.transposed);
          const b = tf.matMul(x, wf, false, s.transposed);
          maxRelDiff = await relDiff(a, b);
          tf.dispose([a, b]);
        }
        const base = ms['tfjs f32'];
        const speedup: Record<string, number | null> = {};
        for (const v of VARIANTS.slice(1)) {
          const t = ms[v];
          speedup[v] = base != null && t != null ? base / t : null;
        }
        const row = {
          label: s.label,
          m,
          k: s.k,
          n: s.n,
          transposed: s.transposed,
          ms,
          speedup,
          maxRelDiff,
        };
        out.push(row);
        console.log(formatRow(row));
        x.dispose();
      }
      wp.dispose();
      wf?.dispose();
    }
  }
  return out;
}

function formatRow(r: MatMulTiming): string {
  const f = (v: number | null | undefined) => (v == null ? '—' : v.toFixed(3));
  const g = (v: number | null | undefined) => (v == null ? '—' : `${v.toFixed(2)}×`);
  return `| ${r.label} | ${r.m} × ${r.k} → ${r.n} | ${VARIANTS.map((v) => f(r.ms[v])).join(' | ')} | ${VARIANTS.slice(
    1,
  )
    .map((v) => g(r.speedup[v]))
    .join(' | ')} | ${r.maxRelDiff == null ? '—' : r.maxRelDiff.toExponential(1)} |`;
}

function tableHeader(): string {
  return `| product | rows × k → n | ${VARIANTS.map((v) => `${v} (ms)`).join(' | ')} | ${VARIANTS.slice(
    1,
  )
    .map((v) => `TF.js f32 / ${v}`)
    .join(' | ')} | max rel. diff (tiled f32) |\n|${'---|'.repeat(2 + 2 * VARIANTS.length)}`;
}

function option(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

const argv = process.argv.slice(2);
if (argv.includes('--help')) {
  console.log(
    'matmul-bench [--configs base,1b,8b] [--rows 8,2048] [--reps 10] [--out FILE.json] [--quick]',
  );
  process.exit(0);
}
const quick = argv.includes('--quick');
const configs = (option(argv, 'configs') ?? (quick ? 'tiny' : 'base,1b,8b')).split(',');
const rows = (option(argv, 'rows') ?? (quick ? '8,70' : '8,2048')).split(',').map(Number);
const reps = Number(option(argv, 'reps') ?? (quick ? 2 : 10));
if (rows.some((r) => !Number.isInteger(r) || r < 1) || !Number.isInteger(reps) || reps < 1) {
  console.error('--rows takes positive integers (e.g. 8,2048), --reps a positive integer');
  process.exit(2);
}
console.log(tableHeader());
const results = await matmulBench({ configs, rows, reps });
const file = option(argv, 'out');
if (file)
  writeFileSync(file, `${JSON.stringify({ subgroupSize: subgroupSize(), results }, null, 2)}\n`);
await releaseBackend();
