import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { heldOutLines, heldOutSamples } from '@poad/default-model';
import { makeVecEnv, type VecEnvState } from '@poad/envs-core';
import { assertFiniteCheckpoint } from '@poad/ppo';
import {
  cleanCheckpointLeftovers,
  createRunDir,
  type LockHolder,
  listCheckpoints,
  loadCheckpoint,
  lockRunDir,
  MetricsLog,
  ProgressBar,
  runName,
  saveCheckpointWith,
  trapInterrupts,
  writeJsonAtomicSync,
} from '@poad/run-kit';
import type { Agent } from './agent.js';
import type { AppSpec } from './app.js';
import { writeTokenCredit } from './credit.js';
import { evaluateAll, evaluateTask } from './evaluate.js';
import { metricsRow } from './metrics-row.js';
import { resolveModelPath } from './model-path.js';
import { writeLearningCurve } from './plots.js';
import { flatRunConfig, type RunConfig } from './run-config.js';
import { readState, writeState } from './state-file.js';

export interface TrainResult {
  runDir: string;
  iterations: number;
  interrupted: boolean;
}

/**
 * Number of iterations a run makes: ⌊env-steps / (N·T)⌋, at most `maxIterations`; for an
 * algorithm whose iterations play whole episodes (`episodicIterations`), `maxIterations` or
 * unbounded (its env steps end it).
 */
export function plannedIterations(rc: Pick<RunConfig, 'run' | 'config' | 'algorithm'>): number {
  const { envSteps, envs, maxIterations } = rc.run;
  // Iterations of whole episodes take a varying number of steps: the env steps decide the end.
  if (rc.algorithm.episodicIterations) return maxIterations ?? Number.POSITIVE_INFINITY;
  const fromSteps = Math.max(1, Math.floor(envSteps / (envs * rc.config.numSteps)));
  return maxIterations ? Math.min(maxIterations, fromSteps) : fromSteps;
}

/**
 * Runs (or resumes) training with the run's algorithm (its registry entry's trainer) and writes
 * everything into a run directory:
 * config.json, environment.json, metrics.jsonl/csv, learning-curve.svg/png, token-credit.svg,
 * checkpoints/ (PEFT adapter, value head, trainer and environment state) and, at the end,
 * eval.json and perplexity.json. The run directory is locked (`run.lock`) while it runs: another
 * process training or resuming it is refused with a `RunLockedError`.
 */
export async function runTraining(
  spec: AppSpec,
  rc: RunConfig,
  agent: Agent,
  log: (line: string) => void,
): Promise<TrainResult> {
  const o = rc.run;
  const resuming = typeof o.resume === 'string';
  const onStale = (h: LockHolder | null) =>
    log(
      `warning: the lock of this run directory was left by ${h ? `process ${h.pid} (started ${h.startedAt})` : 'a process'}, which is gone (killed or crashed); taking it over`,
    );
  // A resumed run is locked before anything in it is read or cleaned; a new one right away.
  const runDir = resuming
    ? (o.resume as string)
    : createRunDir(
        o.runs,
        o.runName ??
          runName([spec.envId(o.task).replaceAll('/', '-'), o.algo, `s${rc.config.seed}`]),
        flatRunConfig(rc),
        {
          backend: agent.backend,
          ...(agent.gpu ? { gpu: agent.gpu } : {}),
          model: agent.info,
          packages: packageVersions(),
        },
        { unique: o.runName === undefined },
      );
  const lock = lockRunDir(runDir, { onStale });
  try {
    return await trainLocked(spec, rc, agent, log, runDir);
  } finally {
    lock.release();
  }
}

async function trainLocked(
  spec: AppSpec,
  rc: RunConfig,
  agent: Agent,
  log: (line: string) => void,
  runDir: string,
): Promise<TrainResult> {
  const { run: o, config } = rc;
  const resuming = typeof o.resume === 'string';
  let index = 0;
  const env = makeVecEnv(() => spec.makeEnv(o.task, rc.envOptions, index++), o.envs, {
    seed: config.seed,
  });
  const trainer = rc.algorithm.createTrainer({ policy: agent.policy, env, config });
  const total = plannedIterations(rc);
  // Iterations of whole episodes end the run on env steps; the others after `total` iterations.
  const bySteps = rc.algorithm.episodicIterations === true;
  const finished = () => done >= total || (bySteps && trainer.counters.envSteps >= rc.run.envSteps);
  let done = 0;
  let wallBefore = 0;

  if (resuming) {
    cleanCheckpointLeftovers(runDir);
    // The newest checkpoint whose files all read back and are finite; older ones if not.
    const ck = await loadCheckpoint(
      runDir,
      async (cp) => {
        const state = readState<Parameters<typeof assertFiniteCheckpoint>[0]>(cp.dir, 'trainer');
        assertFiniteCheckpoint(state);
        const envState = readJsonFile<VecEnvState>(join(cp.dir, 'env.json'));
        await agent.checkTrainable(join(cp.dir, 'model'));
        trainer.setState(state);
        trainer.steps = await env.restore(envState);
      },
      { warn: log },
    );
    if (ck) {
      done = ck.meta.iteration;
      wallBefore = Number(ck.meta.wallSeconds ?? 0);
      log(`resuming ${runDir} after iteration ${done}`);
    } else {
      log(`resuming ${runDir}: no checkpoint yet, starting from iteration 0`);
    }
  } else {
    log(`run directory: ${runDir}`);
  }
  const metrics = MetricsLog.open(runDir, { upToIteration: done });
  if (!resuming || done === 0)
    await recordPerplexity(runDir, agent, 'before', o.model, o.perplexityLines);

  const bar = o.quiet
    ? null
    : new ProgressBar({
        total: bySteps ? o.envSteps : total,
        unit: bySteps ? 'steps' : 'it',
        label: `${o.algo} ${o.task}`,
      });
  const progress = () => (bySteps ? Math.min(trainer.counters.envSteps, o.envSteps) : done);
  bar?.resumeFrom(progress());
  const started = Date.now();
  // Greedy evaluations during training (--eval-every), kept up to the resumed iteration.
  const evalsFile = join(runDir, 'greedy-evals.json');
  const evals = existsSync(evalsFile)
    ? readGreedyEvals(evalsFile).filter((e) => e.iteration <= done)
    : [];
  let evalSeconds = evals.at(-1)?.evalSeconds ?? 0;
  const recent: { ret: number; success?: boolean }[] = [];
  const save = async (iteration: number) => {
    const wallSeconds = wallBefore + (Date.now() - started) / 1000;
    await saveCheckpointWith(
      runDir,
      { iteration, envSteps: trainer.counters.envSteps, wallSeconds },
      async (dir) => {
        const state = (await trainer.getState()) as Parameters<typeof assertFiniteCheckpoint>[0];
        // Never write non-finite weights: the previous checkpoint stays the latest.
        assertFiniteCheckpoint(state);
        writeState(dir, 'trainer', state);
        writeJsonAtomicSync(join(dir, 'env.json'), env.getState());
        await agent.saveTrainable(join(dir, 'model'));
      },
      { keep: 2 },
    );
  };
  let nonFiniteTotal = 0;

  // Trapped from here (nothing can throw between this and the training loop's try, so every way
  // out disposes it) until the final evaluation is done: a signal during it ends the evaluation
  // set that is running and stops the run (its last checkpoint is the final iteration's).
  let evaluating = false;
  const interrupts = trapInterrupts((signal) =>
    log(
      evaluating
        ? `\n${signal}: stopping after this evaluation; the training is done and its checkpoint saved (press again to quit now)`
        : `\n${signal}: finishing this iteration, saving a checkpoint, then exiting (press again to quit now)`,
    ),
  );
  try {
    while (!finished() && !interrupts.requested) {
      await spec.beforeIteration?.({ task: o.task, agent, sampler: config });
      agent.beginIteration();
      const report = await trainer.iterate();
      done = report.iteration;
      if (report.nonFiniteSkips > 0) {
        nonFiniteTotal += report.nonFiniteSkips;
        log(
          `${bar ? '\n' : ''}warning: iteration ${done} skipped ${report.nonFiniteSkips} of ${report.minibatches} minibatch steps with a non-finite loss or gradient norm (${nonFiniteTotal} in this run; the run stops after ${trainer.maxNonFiniteSkips} in a row)`,
        );
      }
      const wall = wallBefore + (Date.now() - started) / 1000;
      const extra = await spec.onIteration?.(report, runDir, agent, {
        envSteps: trainer.counters.envSteps,
      });
      metrics.append({ ...metricsRow(report, trainer.counters.envSteps, wall), ...extra });
      for (const e of report.rollout.episodes)
        recent.push({
          ret: e.discountedReturn,
          ...(e.success === undefined ? {} : { success: e.success }),
        });
      recent.splice(0, Math.max(0, recent.length - 50));
      await writeLearningCurve(
        runDir,
        metrics.rows,
        `${spec.envId(o.task)} — ${o.algo}, seed ${config.seed}`,
      );
      await writeTokenCredit(runDir, report, agent, 6);
      if (done % o.checkpointEvery === 0 || finished() || interrupts.requested) await save(done);
      bar?.update(progress(), {
        ...progressFields(recent),
        ...(nonFiniteTotal > 0 ? { 'non-finite skips': nonFiniteTotal } : {}),
      });
      if (o.evalEvery > 0 && o.evalEpisodes > 0 && done % o.evalEvery === 0 && !finished()) {
        const t0 = Date.now();
        const r = await evaluateTask(spec, agent, o.task, {
          episodes: o.evalEpisodes,
          greedy: true,
          seed: config.seed + 1_000_003,
          envs: o.envs,
          config,
          options: rc.envOptions,
        });
        evalSeconds += (Date.now() - t0) / 1000;
        evals.push({
          iteration: done,
          envSteps: trainer.counters.envSteps,
          wallSeconds: wallBefore + (Date.now() - started) / 1000,
          evalSeconds,
          episodes: o.evalEpisodes,
          successRate: r.successRate,
          meanReturn: r.meanReturn,
        });
        writeJsonAtomicSync(evalsFile, evals);
        log(
          `\niteration ${done}: greedy success ${(r.successRate * 100).toFixed(0)}%, return ${r.meanReturn.toFixed(3)}`,
        );
      }
    }
  } catch (err) {
    if (err instanceof Error && /^NonFinite/.test(err.name)) {
      // Said after the error (see runCli): where the run can continue from.
      const last = listCheckpoints(runDir)[0];
      (err as Error & { note?: string }).note = last
        ? `the latest checkpoint, iteration ${last.meta.iteration} (${last.dir}), is the last good one; --resume ${runDir} continues from it${err.name === 'NonFiniteUpdateError' ? ' (--max-non-finite-skips may be raised then)' : ''}`
        : 'no checkpoint was written before this happened';
    }
    await env.close().catch(() => {});
    interrupts.dispose();
    throw err;
  } finally {
    bar?.finish();
    // The optimisers' moments; the counters read below are plain numbers.
    trainer.dispose();
  }
  const stopped = (during: string) =>
    log(
      bySteps
        ? `stopped after iteration ${done} (${trainer.counters.envSteps}/${o.envSteps} env steps)${during}; continue with --resume ${runDir}`
        : `stopped after iteration ${done}/${total}${during}; continue with --resume ${runDir}`,
    );
  try {
    await env.close();
    if (interrupts.requested && !finished()) {
      stopped('');
      return { runDir, iterations: done, interrupted: true };
    }
    evaluating = true;
    await recordPerplexity(runDir, agent, 'after', o.model, o.perplexityLines);
    const results = await evaluateAll(
      spec,
      agent,
      {
        task: o.task,
        evalEpisodes: o.evalEpisodes,
        seed: config.seed,
        envs: o.envs,
        config,
        options: rc.envOptions,
      },
      log,
      () => interrupts.requested,
    );
    if (interrupts.requested) {
      // No eval.json: resuming the run evaluates again from the final checkpoint.
      stopped(', during the final evaluation (resuming evaluates again)');
      return { runDir, iterations: done, interrupted: true };
    }
    if (o.evalEpisodes > 0)
      writeJsonAtomicSync(join(runDir, 'eval.json'), {
        iteration: done,
        envSteps: trainer.counters.envSteps,
        results,
      });
    return { runDir, iterations: done, interrupted: false };
  } finally {
    interrupts.dispose();
  }
}

function progressFields(
  recent: { ret: number; success?: boolean }[],
): Record<string, string | number> {
  if (recent.length === 0) return { return: '–' };
  const ret = recent.reduce((a, e) => a + e.ret, 0) / recent.length;
  const s = recent.filter((e) => e.success !== undefined);
  return {
    return: ret,
    ...(s.length
      ? { success: `${((100 * s.filter((e) => e.success).length) / s.length).toFixed(0)}%` }
      : {}),
  };
}

/**
 * The text perplexity is measured on: a model folder's own held-out samples (`heldout.jsonl`,
 * prompt and completion as one text, as the code model ships them), else the held-out lines of
 * the embedded default model.
 */
export function heldOutTextsOf(model: string): string[] {
  const samples = heldOutSamples(resolveModelPath(model));
  return samples.length > 0 ? samples.map((s) => s.prompt + s.completion) : heldOutLines();
}

/** perplexity.json's `before` or `after`, on the first `limit` held-out texts (default all). */
async function recordPerplexity(
  runDir: string,
  agent: Agent,
  when: 'before' | 'after',
  model: string,
  limit: number | undefined,
): Promise<void> {
  const file = join(runDir, 'perplexity.json');
  const heldOut = heldOutTextsOf(model).slice(0, limit);
  if (heldOut.length === 0) return;
  const prev = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)
    : {};
  writeJsonAtomicSync(file, {
    ...prev,
    [when]: await agent.perplexity(heldOut),
    lines: heldOut.length,
  });
}

/**
 * A JSON file's content; a missing or broken file throws a {@link RunFileError} naming it, which
 * says it is not valid JSON and gives `fix` when there is one.
 */
function readJsonFile<T>(file: string, fix?: string): T {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (err) {
    const why = (err as Error).message;
    throw new RunFileError(file, fix === undefined ? why : `not valid JSON (${why}). ${fix}`);
  }
}

/** A file of the run directory that the run cannot go on from; it names the file and the fix. */
export class RunFileError extends Error {
  override readonly name = 'RunFileError';
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
  }
}

/** `greedy-evals.json` of a resumed run: a list of {@link GreedyEval}s, else a {@link RunFileError}. */
function readGreedyEvals(file: string): GreedyEval[] {
  const fix =
    'It keeps the greedy evaluations of --eval-every: restore it from a backup, or delete it to resume without the evaluations made so far.';
  const parsed = readJsonFile<unknown>(file, fix);
  if (!Array.isArray(parsed) || !parsed.every((e) => Number.isInteger(e?.iteration)))
    throw new RunFileError(file, `not a list of evaluations with an iteration each. ${fix}`);
  return parsed as GreedyEval[];
}

/** Versions of the POAD-TS packages this run uses, for environment.json. */
function packageVersions(): Record<string, string> {
  const require = createRequire(import.meta.url);
  const out: Record<string, string> = {};
  for (const name of ['trainer', 'bellman', 'ppo', 'lora-model', 'envs-core', 'run-kit']) {
    try {
      const file = require.resolve(`@poad/${name}/package.json`);
      out[`@poad/${name}`] = (
        JSON.parse(readFileSync(file, 'utf8')) as { version: string }
      ).version;
    } catch {
      // Not installed (e.g. a bundle that inlined it).
    }
  }
  return out;
}

/** One greedy evaluation during training, as written to `greedy-evals.json`. */
export interface GreedyEval {
  iteration: number;
  envSteps: number;
  /** Wall time of the run so far, evaluations included. */
  wallSeconds: number;
  /** Of that, seconds spent in these evaluations. */
  evalSeconds: number;
  episodes: number;
  successRate: number;
  meanReturn: number;
}
