/**
 * The GPU work of the default training command, by phase:
 *
 *   npm run gpu:profile [-- TRAINING FLAGS…] [--json FILE]      (gpu-profile-cli.ts)
 *
 * Runs `npm run train:virtualhome` (the default model, the 'small' preset; any flag of the
 * command may be added, e.g. `--algo etpo`) on `--backend webgpu` for 2 iterations with a
 * checkpoint after each, in a temporary run directory, and prints for every iteration the GPU
 * programs dispatched, the host reads and the bytes read back while acting, computing values,
 * updating and writing the checkpoint (`gpuCounters` of @poad/tfjs-kernels). The counts do not
 * depend on the GPU, so a software adapter (lavapipe) gives the numbers of any GPU: it is
 * allowed here. `--json FILE` also writes them as JSON.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GpuCounters, type GpuWork, gpuCounters, gpuCountersSince } from '@poad/tfjs-kernels';
import { type Agent, type AppSpec, runCli } from '@poad/trainer';

/** The GPU work of each iteration of a run of `spec` with `argv`, by phase. */
export interface GpuProfile {
  /** The adapter, in words. */
  backend: string;
  /** The command line profiled. */
  argv: string[];
  /** Per iteration: its acting, values and update phases, and the checkpoint written after it. */
  iterations: Record<'acting' | 'values' | 'update' | 'checkpoint' | 'iteration', GpuWork>[];
  /** The GPU columns of the run's metrics.jsonl rows (`gpuPrograms`, `gpuReads`, `gpuReadBytes`). */
  metrics: Record<string, unknown>[];
}

const NONE: GpuWork = { programs: 0, reads: 0, readBytes: 0 };

/**
 * Trains `spec` with `argv` (plus `--backend webgpu`, 2 iterations, a checkpoint after each and no
 * evaluation, unless `argv` sets them) in a temporary run directory and returns its GPU work. The
 * held-out perplexity a run records before and after training is not part of an iteration and is
 * skipped (it takes most of a short run's time on a software adapter).
 */
export async function profileGpuWork(spec: AppSpec, argv: readonly string[]): Promise<GpuProfile> {
  process.env.POAD_WEBGPU_ALLOW_SOFTWARE ??= '1';
  const runs = mkdtempSync(join(tmpdir(), 'poad-gpu-profile-'));
  const args = [
    '--backend',
    'webgpu',
    '--max-iterations',
    '2',
    '--checkpoint-every',
    '1',
    '--eval-episodes',
    '0',
    '--quiet',
    ...argv,
    '--runs',
    runs,
  ];
  const snapshots: GpuCounters[] = [];
  let metrics: Record<string, unknown>[] = [];
  const reports: GpuCounters[] = [];
  let backend = '';
  let dir = '';
  const profiled: AppSpec = {
    ...spec,
    async onIteration(report, runDir, agent: Agent, progress) {
      backend = agent.backend;
      dir = runDir;
      if (!report.gpu) throw new Error(`no GPU counts: the run is on ${agent.backend}`);
      reports.push(report.gpu);
      snapshots.push(gpuCounters()!);
      return spec.onIteration?.(report, runDir, agent, progress);
    },
  };
  try {
    const code = await runCli(profiled, args, {
      wrapAgent: (agent) =>
        Object.assign(Object.create(agent) as Agent, { perplexity: async () => Number.NaN }),
    });
    if (code !== 0) throw new Error(`the training command exited with code ${code}`);
    snapshots.push(gpuCounters()!);
    metrics = readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => {
        const row = JSON.parse(line) as Record<string, unknown>;
        return Object.fromEntries(Object.entries(row).filter(([k]) => k.startsWith('gpu')));
      });
  } finally {
    rmSync(runs, { recursive: true, force: true });
  }
  return {
    backend,
    argv: args.slice(0, -2),
    iterations: reports.map((r, i) => ({
      acting: r.phases.acting ?? NONE,
      values: r.phases.values ?? NONE,
      update: r.phases.update ?? NONE,
      // The checkpoint after iteration i is written before the next iteration (or the end).
      checkpoint: gpuCountersSince(snapshots[i]!, snapshots[i + 1]!).phases.checkpoint ?? NONE,
      iteration: { programs: r.programs, reads: r.reads, readBytes: r.readBytes },
    })),
    metrics,
  };
}

/** The profile as a table: one row per phase, programs / reads / bytes per iteration. */
export function profileTable(p: GpuProfile): string {
  const cell = (w: GpuWork) =>
    `${String(w.programs).padStart(9)} ${String(w.reads).padStart(6)} ${String(w.readBytes).padStart(10)}`;
  const head = p.iterations.map((_, i) => `iteration ${i + 1}`.padStart(27)).join('  ');
  const sub = p.iterations
    .map(() => `${'programs'.padStart(9)} ${'reads'.padStart(6)} ${'bytes'.padStart(10)}`)
    .join('  ');
  const phases = ['acting', 'values', 'update', 'iteration', 'checkpoint'] as const;
  const label = { iteration: 'iteration (metrics.jsonl)' } as Record<string, string>;
  return [
    `GPU work of: npm run train:virtualhome -- ${p.argv.join(' ')}`,
    `on ${p.backend}`,
    `${''.padEnd(26)}${head}`,
    `${''.padEnd(26)}${sub}`,
    ...phases.map(
      (ph) => `${(label[ph] ?? ph).padEnd(26)}${p.iterations.map((it) => cell(it[ph])).join('  ')}`,
    ),
  ].join('\n');
}
