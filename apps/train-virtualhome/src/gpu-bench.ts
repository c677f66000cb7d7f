#!/usr/bin/env node
/**
 * The GPU figures of the training loop's speed (docs/gpu.md), in one program for a GPU host, in
 * under 8 minutes:
 *
 *   npm run gpu:bench -- --out DIR [--budget SECONDS] [--quick]      (from the repository root)
 *
 * On a host without Node or network (as for docs/gpu.md's measurements), bundle this file with
 * esbuild, Node and Dawn into a folder B; @tensorflow/tfjs-backend-webgpu, an optional package
 * imported by name when WebGPU starts, goes to B/node_modules/@tensorflow/tfjs-backend-webgpu
 * (bundled on its own: an `index.mjs` and a package.json naming it), and the default model beside
 * B as `model/` and `heldout.txt` (packages/default-model's; the bundle looks at B/../model).
 *
 * `--quick` checks that every step runs, in a few minutes on a software adapter (with
 * POAD_WEBGPU_ALLOW_SOFTWARE=1): 3 short iterations (2 environments, 2 steps), a `tiny` random
 * model, the tiny bench only. Its figures mean nothing.
 *
 * Each step runs in a child process of its own (a fresh backend), within what is left of the
 * budget (default 450 s), its console output kept in DIR/<step>.txt:
 *
 * 1. `info`: the adapter WebGPU runs on;
 * 2. `default`: the default command (`npm run train:virtualhome`, the default model, 'small'
 *    preset) on `--backend webgpu` for 12 iterations: seconds per iteration (median of iterations
 *    2–12, from metrics.csv's wallSeconds), against the two-core CPU's 2.58 s;
 * 3. `base`: a random 125 M-parameter model (`base`, the default tokenizer) on the same command
 *    for 2 iterations: the update's tokens/s inside the loop;
 * 4. `bench`: the LoRA-step bench (`npm run bench -w @poad/lora-model -- --backends webgpu
 *    --configs tiny,small,base --modes fwd,lora --reps 5 --warmup 2 --no-torch`), whose base
 *    LoRA step the `base` run is compared with;
 * 5. `counts`: GPU programs and reads per phase of 2 iterations of the default command (the same
 *    on any GPU; a check that the bundle runs what the repository runs);
 * 6. `models` (real-size models): the bench against PyTorch on the same GPU, `base` in float32
 *    against PyTorch fp32 (frozen products chosen per shape as measured, then all on TF.js's
 *    matmul for comparison), `base` with bf16 weights against PyTorch bf16, `1b` (Llama-3.2-1B's
 *    shapes, bf16) LoRA step at 4 × 512 against PyTorch bf16, and `8b` (Llama-3.1-8B's shapes,
 *    bf16) forward and LoRA step at 2 × 512 alone, with peak GPU memory;
 * 7. `random1b`: a random `1b` model written in bf16 on the GPU, then 3 iterations of the default
 *    command on it (`--backend webgpu`, weights kept in bf16): seconds per iteration;
 * 8. `matmul`: the products of the `base`, `1b` and `8b` layers and heads at 8 and 2,048 rows,
 *    TF.js's float32 matmul against the tiled product (float32 and bf16 weights, with and
 *    without subgroups): which shapes the tiled product wins (`npm run matmul-bench -w
 *    @poad/tfjs-kernels`), in matmul.json.
 *
 * `--steps a,b` runs only those steps (default: the first five; `models`, `random1b` and
 * `matmul` take about 8 minutes more: `--steps models,random1b,matmul --budget 560`).
 *
 * DIR/summary.md then holds the figures and the ratios the targets are about.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { initBackend, releaseBackend } from '@poad/tfjs-kernels';
import { resolveModelPath, runCli } from '@poad/trainer';
import { profileGpuWork, profileTable } from './gpu-profile.js';
import { virtualHomeApp } from './spec.js';

const STEPS = [
  'info',
  'default',
  'base',
  'bench',
  'counts',
  'models',
  'random1b',
  'matmul',
] as const;
type Step = (typeof STEPS)[number];
const DEFAULT_STEPS: readonly Step[] = ['info', 'default', 'base', 'bench', 'counts'];

/** Seconds each step may take at most (the budget left may cut it shorter). */
const LIMITS: Record<Step, number> = {
  info: 60,
  default: 180,
  base: 150,
  bench: 150,
  counts: 90,
  models: 300,
  random1b: 240,
  matmul: 120,
};

/** The bench runs of the `models` step (`--quick`: the tiny config in float32 and bf16). */
function modelBenches(quick: boolean): string[][] {
  const common = [
    '--backends',
    'webgpu',
    '--reps',
    quick ? '1' : '3',
    '--warmup',
    quick ? '0' : '1',
  ];
  if (quick) {
    return [
      [...common, '--configs', 'tiny', '--modes', 'fwd,lora', '--no-torch'],
      [
        ...common,
        '--configs',
        'tiny',
        '--modes',
        'lora',
        '--weight-dtype',
        'bfloat16',
        '--no-torch',
      ],
    ];
  }
  return [
    [...common, '--configs', 'base', '--modes', 'fwd,lora'],
    // The same float32 LoRA step with every frozen product on TF.js's matmul (the line above
    // chooses per shape, as a training run does).
    [...common, '--configs', 'base', '--modes', 'lora', '--matmul', 'tfjs', '--no-torch'],
    [
      ...common,
      '--configs',
      'base',
      '--modes',
      'fwd,lora',
      '--weight-dtype',
      'bfloat16',
      '--torch-precision',
      'bf16',
    ],
    [...common, '--configs', '1b', '--modes', 'fwd,lora', '--torch-precision', 'bf16'],
    [...common, '--configs', '8b', '--modes', 'fwd,lora', '--no-torch'],
  ];
}

/** The two-core CPU's seconds per iteration of the default command (docs/results.md). */
const CPU_SECONDS_PER_ITERATION = 2.58;

function option(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** The metrics rows of the only run directory under `runs`. */
function metricsOf(runs: string): Record<string, number>[] {
  const [dir] = readdirSync(runs);
  if (!dir) throw new Error(`no run directory in ${runs}`);
  return readFileSync(join(runs, dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** `--quick`'s short iterations. */
const QUICK_RUN = ['--envs', '2', '--num-steps', '2', '--epochs', '1', '--num-minibatches', '1'];

/** Runs one step in this process (the child). */
async function runStep(step: Step, out: string, quick: boolean): Promise<void> {
  const train = async (name: string, args: string[]) => {
    const runs = join(out, `runs-${name}`);
    const code = await runCli(virtualHomeApp, [
      '--backend',
      'webgpu',
      '--eval-episodes',
      '0',
      '--quiet',
      '--runs',
      runs,
      ...(quick ? QUICK_RUN : []),
      ...args,
    ]);
    if (code !== 0) throw new Error(`the training command exited with code ${code}`);
    return metricsOf(runs);
  };
  if (step === 'info') {
    const info = await initBackend('webgpu');
    console.log(JSON.stringify({ description: info.description, adapter: info.adapter }, null, 2));
  } else if (step === 'default') {
    const iterations = quick ? '3' : '12';
    const rows = await train('default', [
      '--max-iterations',
      iterations,
      '--checkpoint-every',
      '100',
    ]);
    const wall = rows.map((r) => r.wallSeconds!);
    const per = wall.slice(1).map((w, i) => w - wall[i]!);
    const result = {
      iterations: rows.length,
      secondsPerIteration: median(per),
      perIteration: per,
      rolloutActSeconds: median(rows.slice(1).map((r) => r.rolloutActSeconds!)),
      rolloutValueSeconds: median(rows.slice(1).map((r) => r.rolloutValueSeconds!)),
      updateTokensPerSec: median(rows.slice(1).map((r) => r.updateTokensPerSec!)),
      gpuPrograms: rows.at(-1)!.gpuPrograms,
      gpuReads: rows.at(-1)!.gpuReads,
    };
    console.log(JSON.stringify(result));
    writeFileSync(join(out, 'default.json'), JSON.stringify(result, null, 2));
  } else if (step === 'base') {
    const model = join(out, 'base-model');
    if (!existsSync(join(model, 'model.safetensors'))) {
      process.argv = [
        process.argv[0]!,
        'random-model',
        '--size',
        quick ? 'tiny' : 'base',
        '--tokenizer',
        resolveModelPath('default'),
        '--out',
        model,
        '--backend',
        'cpu',
      ];
      await import('../../../packages/lora-model/scripts/random-model.js');
      await releaseBackend();
    }
    const rows = await train('base', ['--model', model, '--max-iterations', '2']);
    const result = {
      updateTokensPerSec: rows.at(-1)!.updateTokensPerSec,
      secondsSecondIteration: rows.at(-1)!.wallSeconds! - rows[0]!.wallSeconds!,
    };
    console.log(JSON.stringify(result));
    writeFileSync(join(out, 'base.json'), JSON.stringify(result, null, 2));
  } else if (step === 'bench') {
    process.argv = [
      process.argv[0]!,
      'bench',
      '--backends',
      'webgpu',
      '--configs',
      quick ? 'tiny' : 'tiny,small,base',
      '--modes',
      quick ? 'lora' : 'fwd,lora',
      '--reps',
      quick ? '1' : '5',
      '--warmup',
      quick ? '0' : '2',
      '--no-torch',
    ];
    await import('../../../packages/lora-model/bench/run.js');
  } else if (step === 'models') {
    // Each bench run in a process of its own: one model's GPU memory at a time.
    for (const [i, args] of modelBenches(quick).entries()) {
      const code = await new Promise<number | null>((done) => {
        const p = spawn(
          process.execPath,
          [
            ...process.execArgv,
            process.argv[1]!,
            '--step',
            'bench-args',
            '--out',
            out,
            '--',
            ...args,
          ],
          { stdio: 'inherit' },
        );
        p.on('close', done);
      });
      console.log(`# models run ${i + 1}: exit ${code}`);
    }
  } else if (step === 'matmul') {
    process.argv = [
      process.argv[0]!,
      'matmul-bench',
      '--out',
      join(out, 'matmul.json'),
      ...(quick ? ['--quick'] : []),
    ];
    await import('../../../packages/tfjs-kernels/scripts/matmul-bench.js');
  } else if (step === 'random1b') {
    const model = join(out, 'random-1b');
    if (!existsSync(join(model, 'config.json'))) {
      process.argv = [
        process.argv[0]!,
        'random-model',
        '--size',
        quick ? 'tiny' : '1b',
        '--dtype',
        'bf16',
        '--tokenizer',
        resolveModelPath('default'),
        '--out',
        model,
        '--backend',
        'webgpu',
      ];
      const t0 = Date.now();
      await import('../../../packages/lora-model/scripts/random-model.js');
      await releaseBackend();
      console.log(`# wrote the random model in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    const rows = await train('random1b', ['--model', model, '--max-iterations', '3']);
    const wall = rows.map((r) => r.wallSeconds!);
    const result = {
      iterations: rows.length,
      perIteration: wall.map((w, i) => (i === 0 ? w : w - wall[i - 1]!)),
      updateTokensPerSec: rows.at(-1)!.updateTokensPerSec,
    };
    console.log(JSON.stringify(result));
    writeFileSync(join(out, 'random1b.json'), JSON.stringify(result, null, 2));
  } else {
    const profile = await profileGpuWork(virtualHomeApp, quick ? QUICK_RUN : []);
    console.log(profileTable(profile));
    writeFileSync(join(out, 'counts.json'), JSON.stringify(profile, null, 2));
  }
}

/** Runs `step` in a child process within `seconds`; its output goes to OUT/<step>.txt. */
function child(step: Step, out: string, seconds: number, quick: boolean): Promise<string> {
  return new Promise((done) => {
    const log: string[] = [];
    const p = spawn(
      process.execPath,
      [
        ...process.execArgv,
        process.argv[1]!,
        '--step',
        step,
        '--out',
        out,
        ...(quick ? ['--quick'] : []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (d: Buffer) => {
      log.push(d.toString());
      process.stdout.write(d);
    };
    p.stdout.on('data', keep);
    p.stderr.on('data', keep);
    const timer = setTimeout(() => {
      log.push(`\n${step}: stopped after ${seconds} s\n`);
      p.kill('SIGKILL');
    }, seconds * 1000);
    p.on('close', (code) => {
      clearTimeout(timer);
      writeFileSync(join(out, `${step}.txt`), log.join(''));
      done(code === 0 ? 'done' : `failed (exit ${code ?? 'killed'})`);
    });
  });
}

const readJson = (file: string): Record<string, number> | null =>
  existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>) : null;

/** The base LoRA step's tokens/s in the bench's output, or null. */
function benchBaseLora(out: string): number | null {
  const file = join(out, 'bench.txt');
  if (!existsSync(file)) return null;
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => /\bbase\b/.test(l) && /\blora\b/.test(l));
  const m = line?.match(/([\d,]+(?:\.\d+)?)\s*tok(?:ens)?\/s/);
  return m ? Number(m[1]!.replace(/,/g, '')) : null;
}

function summary(out: string, outcomes: Record<string, string>): string {
  const d = readJson(join(out, 'default.json'));
  const b = readJson(join(out, 'base.json'));
  const bench = benchBaseLora(out);
  const lines = [
    '# GPU figures',
    '',
    ...Object.entries(outcomes).map(([k, v]) => `- ${k}: ${v}`),
    '',
  ];
  if (d) {
    lines.push(
      `Default command: ${d.secondsPerIteration!.toFixed(3)} s per iteration (median of ${d.iterations! - 1}), ${(CPU_SECONDS_PER_ITERATION / d.secondsPerIteration!).toFixed(2)}× the two-core CPU's ${CPU_SECONDS_PER_ITERATION} s (target ≥ 4×); acting ${d.rolloutActSeconds!.toFixed(3)} s, values ${d.rolloutValueSeconds!.toFixed(3)} s, update ${Math.round(d.updateTokensPerSec!)} tokens/s; ${d.gpuPrograms} GPU programs and ${d.gpuReads} reads in the last iteration.`,
    );
  }
  if (b) {
    lines.push(
      `Random base model: update ${Math.round(b.updateTokensPerSec!)} tokens/s inside the loop${bench ? `, ${((100 * b.updateTokensPerSec!) / bench).toFixed(1)}% of the bench's base LoRA step (${bench} tokens/s; target ≥ 40%)` : ''}.`,
    );
  }
  const r1b = readJson(join(out, 'random1b.json')) as { perIteration?: number[] } | null;
  if (r1b?.perIteration) {
    lines.push(
      `Random 1b model (bf16 weights) on the default command: ${r1b.perIteration.map((x) => x.toFixed(1)).join(', ')} s for iterations 1–${r1b.perIteration.length}.`,
    );
  }
  const mm = existsSync(join(out, 'matmul.json'))
    ? (JSON.parse(readFileSync(join(out, 'matmul.json'), 'utf8')) as {
        subgroupSize: number | null;
        results: { label: string; m: number; speedup: Record<string, number | null> }[];
      })
    : null;
  if (mm) {
    const wins = (v: string) =>
      mm.results.filter((r) => (r.speedup[v] ?? 0) > 1).map((r) => `${r.label} at ${r.m} rows`);
    const f32 = wins('tiled f32');
    const bf = wins('tiled bf16');
    lines.push(
      `Products (matmul.json; subgroups ${mm.subgroupSize === null ? 'not used' : `of ${mm.subgroupSize} lanes`}): the tiled float32 product beats TF.js's in ${f32.length} of ${mm.results.length} shapes${f32.length ? ` (${f32.join(', ')})` : ''}; the tiled bf16 product in ${bf.length}.`,
    );
  }
  lines.push(
    '',
    "The bench's figures are in bench.txt (and models.txt: base fp32 and bf16, 1b and 8b against PyTorch with peak GPU memory): compare its WebGPU tokens/s with docs/gpu.md's tables for the same GPU (target: no slower).",
  );
  return `${lines.join('\n')}\n`;
}

const argv = process.argv.slice(2);
const step = option(argv, 'step') as Step | undefined;
const out = resolve(option(argv, 'out') ?? 'gpu-bench');
const quick = argv.includes('--quick');
mkdirSync(out, { recursive: true });
if ((step as string) === 'bench-args') {
  // One bench run of the `models` step, with the arguments after `--`.
  process.argv = [process.argv[0]!, 'bench', ...argv.slice(argv.indexOf('--') + 1)];
  await import('../../../packages/lora-model/bench/run.js');
  process.exit(0);
} else if (step) {
  try {
    await runStep(step, out, quick);
  } finally {
    await releaseBackend();
  }
  process.exit(0);
} else {
  const budget = Number(option(argv, 'budget') ?? 450);
  const chosen = (option(argv, 'steps')?.split(',') ?? DEFAULT_STEPS) as Step[];
  const unknown = chosen.filter((s) => !STEPS.includes(s));
  if (unknown.length > 0) {
    console.error(`--steps: unknown ${unknown.join(', ')}; the steps are ${STEPS.join(', ')}`);
    process.exit(2);
  }
  const start = Date.now();
  const outcomes: Record<string, string> = {};
  for (const s of chosen) {
    const left = budget - (Date.now() - start) / 1000;
    if (left < 20) {
      outcomes[s] = 'not run (budget spent)';
      continue;
    }
    const limit = quick ? 600 : LIMITS[s];
    outcomes[s] = await child(s, out, Math.min(limit, Math.floor(left)), quick);
  }
  const text = summary(out, outcomes);
  writeFileSync(join(out, 'summary.md'), text);
  console.log(`\n${text}`);
}
