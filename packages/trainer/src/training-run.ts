import { join } from 'node:path';
import type { VecEnv, VecEnvState } from '@poad/envs-core';
import { assertFiniteCheckpoint } from '@poad/ppo';
import {
  bestCheckpoint,
  cleanCheckpointLeftovers,
  listCheckpoints,
  loadCheckpoint,
  MetricsLog,
  type MetricsRow,
  ProgressBar,
  saveBestCheckpoint,
  saveCheckpointWith,
  trapInterrupts,
  writeJsonAtomicSync,
} from '@poad/run-kit';
import type { Agent } from './agent/agent.js';
import type { AppSpec } from './app.js';
import { CollapseMonitor, collapseRuleOf } from './collapse-monitor.js';
import { writeTokenCredit } from './credit.js';
import { evaluateAll, evaluateTask } from './evaluate.js';
import { type BestSoFar, BestTracker, parseKeepBest } from './keep-best.js';
import { metricsRow } from './metrics-row.js';
import { writeLearningCurve } from './plots.js';
import type { RunConfig } from './run-config.js';
import { type GreedyEval, greedyEvalsUpTo, readJsonFile, recordPerplexity } from './run-dir.js';
import type { RunIterationReport, RunTrainer } from './run-trainer.js';
import { readState, writeState } from './state-file.js';
import type { TrainResult } from './train.js';

/** What a {@link TrainingRun} runs. */
export interface TrainingRunParts {
  readonly spec: AppSpec;
  readonly rc: RunConfig;
  readonly agent: Agent;
  readonly log: (line: string) => void;
  /** The run directory (locked by the caller). */
  readonly runDir: string;
  /** The run's environments; closed by the run. */
  readonly env: VecEnv;
  /** The algorithm's trainer; disposed by the run. */
  readonly trainer: RunTrainer;
  /** Iterations planned (see `plannedIterations`). */
  readonly total: number;
}

type Checkpointed = Parameters<typeof assertFiniteCheckpoint>[0];

/**
 * One training run in its run directory: resume from the newest good checkpoint, iterate (each
 * iteration's metrics row, plots, token credit, checkpoint, progress and the greedy evaluations
 * of `--eval-every`), then the final perplexity and evaluation. Ctrl-C finishes the iteration,
 * saves a checkpoint and stops; during the final evaluation it ends the evaluation set under way.
 */
export class TrainingRun {
  private done = 0;
  private wallBefore = 0;
  private started = Date.now();
  private nonFiniteTotal = 0;
  private evals: GreedyEval[] = [];
  private readonly recent: { ret: number; success?: boolean }[] = [];
  /** Whether iterations play whole episodes, so that the env steps end the run. */
  private readonly bySteps: boolean;
  /** The best checkpoint's judge (`--keep-best`), or null. */
  private readonly best: BestTracker | null;
  /** The collapse monitor. */
  private readonly monitor: CollapseMonitor;
  /** Alarms and rollbacks so far (a resumed run counts those before it). */
  private alarms = 0;
  private rollbacks = 0;
  /** Set when the monitor stops the run (`--on-collapse stop`, or past `--max-rollbacks`). */
  private stoppedByMonitor = false;

  constructor(private readonly p: TrainingRunParts) {
    this.bySteps = p.rc.algorithm.episodicIterations === true;
    const o = p.rc.run;
    this.best = o.keepBest ? new BestTracker(parseKeepBest(o.keepBest)) : null;
    this.monitor = new CollapseMonitor(collapseRuleOf(o));
  }

  private finished(): boolean {
    const { trainer, total, rc } = this.p;
    return this.done >= total || (this.bySteps && trainer.counters.envSteps >= rc.run.envSteps);
  }

  /** Trains to the end (or an interrupt) and evaluates; see {@link TrainingRun}. */
  async train(): Promise<TrainResult> {
    const { rc, agent, runDir, log } = this.p;
    const o = rc.run;
    const resuming = typeof o.resume === 'string';
    if (resuming) await this.resume();
    else log(`run directory: ${runDir}`);
    this.evals = greedyEvalsUpTo(runDir, this.done);
    if (!resuming || this.done === 0)
      await recordPerplexity(runDir, agent, 'before', o.model, o.perplexityLines);
    // Trapped from here until the final evaluation is done: a signal during it ends the
    // evaluation set that is running and stops the run (its last checkpoint is the final
    // iteration's).
    let evaluating = false;
    const interrupts = trapInterrupts((signal) =>
      log(
        evaluating
          ? `\n${signal}: stopping after this evaluation; the training is done and its checkpoint saved (press again to quit now)`
          : `\n${signal}: finishing this iteration, saving a checkpoint, then exiting (press again to quit now)`,
      ),
    );
    try {
      await this.iterations(() => interrupts.requested);
      await this.p.env.close();
      if (interrupts.requested && !this.finished()) return this.stopped('');
      evaluating = true;
      return await this.finish(() => interrupts.requested);
    } catch (err) {
      await this.p.env.close().catch(() => {});
      throw err;
    } finally {
      interrupts.dispose();
    }
  }

  /** Restores the newest checkpoint whose files all read back and are finite (older ones if not). */
  private async resume(): Promise<void> {
    const { runDir, agent, trainer, env, log } = this.p;
    cleanCheckpointLeftovers(runDir);
    const ck = await loadCheckpoint(
      runDir,
      async (cp) => {
        const state = readState<Checkpointed>(cp.dir, 'trainer');
        assertFiniteCheckpoint(state);
        const envState = readJsonFile<VecEnvState>(join(cp.dir, 'env.json'));
        await agent.checkTrainable(join(cp.dir, 'model'));
        trainer.setState(state);
        trainer.steps = await env.restore(envState);
      },
      { warn: log },
    );
    if (ck) {
      this.done = ck.meta.iteration;
      this.wallBefore = Number(ck.meta.wallSeconds ?? 0);
      log(`resuming ${runDir} after iteration ${this.done}`);
    } else {
      log(`resuming ${runDir}: no checkpoint yet, starting from iteration 0`);
    }
  }

  /** Iterates until the run is done or `stop()`; disposes the trainer's optimisers at the end. */
  private async iterations(stop: () => boolean): Promise<void> {
    const { rc, trainer, spec, agent, runDir } = this.p;
    const o = rc.run;
    const metrics = MetricsLog.open(runDir, { upToIteration: this.done });
    this.replay(metrics.rows);
    const bar = o.quiet
      ? null
      : new ProgressBar({
          total: this.bySteps ? o.envSteps : this.p.total,
          unit: this.bySteps ? 'steps' : 'it',
          label: `${o.algo} ${o.task}`,
        });
    const progress = () =>
      this.bySteps ? Math.min(trainer.counters.envSteps, o.envSteps) : this.done;
    bar?.resumeFrom(progress());
    this.started = Date.now();
    try {
      while (!this.finished() && !stop() && !this.stoppedByMonitor) {
        await spec.beforeIteration?.({ task: o.task, agent, sampler: rc.config });
        agent.beginIteration();
        const report = await trainer.iterate();
        this.done = report.iteration;
        this.warnNonFinite(report, bar !== null);
        const extra = await spec.onIteration?.(report, runDir, agent, {
          envSteps: trainer.counters.envSteps,
        });
        const row: MetricsRow = {
          ...metricsRow(report, trainer.counters.envSteps, this.wall()),
          ...extra,
        };
        if (o.evalEvery > 0 && o.evalEpisodes > 0 && this.done % o.evalEvery === 0)
          if (!this.finished()) Object.assign(row, await this.greedyEvaluation());
        const best = this.watch(row, bar !== null);
        metrics.append(row);
        this.remember(report);
        await writeLearningCurve(
          runDir,
          metrics.rows,
          `${spec.envId(o.task)} — ${o.algo}, seed ${rc.config.seed}`,
        );
        await writeTokenCredit(runDir, report, agent, 6);
        if (
          this.done % o.checkpointEvery === 0 ||
          this.finished() ||
          stop() ||
          this.stoppedByMonitor ||
          row.rollbacks !== undefined
        )
          await this.save(this.done);
        if (best) await this.saveBest(this.done, best);
        bar?.update(progress(), {
          ...progressFields(this.recent),
          ...(this.nonFiniteTotal > 0 ? { 'non-finite skips': this.nonFiniteTotal } : {}),
          ...(this.alarms > 0 ? { collapses: this.alarms } : {}),
        });
      }
    } catch (err) {
      if (err instanceof Error && /^NonFinite/.test(err.name)) noteLastGood(err, runDir);
      throw err;
    } finally {
      bar?.finish();
      // The optimisers' moments; the counters read afterwards are plain numbers.
      trainer.dispose();
    }
  }

  /**
   * Takes a resumed run's rows as the live loop took them, so that the best checkpoint's judge and
   * the monitor are where they were (a row with more rollbacks than the one before is where one
   * happened).
   */
  private replay(rows: readonly MetricsRow[]): void {
    for (const row of rows) {
      this.best?.observe(Number(row.iteration), row);
      if (this.monitor.observe(row)) this.alarms++;
      if (typeof row.rollbacks === 'number' && row.rollbacks > this.rollbacks) {
        this.rollbacks = row.rollbacks;
        this.monitor.afterRollback();
      }
    }
  }

  /**
   * Judges an iteration's row: whether it is the new best (returned, to be saved after the
   * iteration's checkpoint), and whether the collapse monitor fires; then says so in the log and
   * the row (`collapse`), and rolls back or stops as `--on-collapse` says.
   */
  private watch(row: MetricsRow, bar: boolean): BestSoFar | null {
    const best = this.best?.observe(this.done, row) ? this.best.current : null;
    const alarm = this.monitor.observe(row);
    if (!alarm) return best;
    const o = this.p.rc.run;
    this.alarms++;
    row.collapse = alarm.reason;
    let action = 'warn';
    if (o.onCollapse === 'stop') action = 'stop';
    else if (o.onCollapse === 'rollback') action = this.rollback(row);
    if (action === 'stop') this.stoppedByMonitor = true;
    this.p.log(
      `${bar ? '\n' : ''}collapse: iteration ${this.done}: ${alarm.reason}${
        action === 'stop'
          ? `; stopping here (--on-collapse ${o.onCollapse}${o.onCollapse === 'rollback' ? `, ${this.rollbacks} rollbacks made` : ''})`
          : action === 'warn'
            ? ' (--on-collapse warn: training goes on)'
            : `; ${action}`
      }`,
    );
    return best;
  }

  /**
   * Restores the best checkpoint's trainer state with the learning rates cut, counting the
   * rollback in the row; 'stop' when no rollback is left or there is no best checkpoint yet.
   */
  private rollback(row: MetricsRow): string {
    const o = this.p.rc.run;
    const best = bestCheckpoint(this.p.runDir);
    if (this.rollbacks >= o.maxRollbacks || !best) return 'stop';
    const scale = this.p.trainer.rollBack(
      readState<Checkpointed>(best.dir, 'trainer'),
      o.rollbackLrFactor,
    );
    this.rollbacks++;
    this.monitor.afterRollback();
    row.rollbacks = this.rollbacks;
    row.lrScale = scale;
    return `rolled back to the best checkpoint (iteration ${best.meta.iteration}), learning rates × ${scale} (rollback ${this.rollbacks} of ${o.maxRollbacks})`;
  }

  /** Writes the best checkpoint: the trainer as at `iteration`, with what made it best. */
  private async saveBest(iteration: number, best: BestSoFar): Promise<void> {
    const { runDir, trainer, env, agent, rc } = this.p;
    await saveBestCheckpoint(
      runDir,
      {
        iteration,
        envSteps: trainer.counters.envSteps,
        wallSeconds: this.wall(),
        best: { rule: rc.run.keepBest, value: best.value },
      },
      (dir) => this.writeCheckpointFiles(dir, trainer, env, agent),
    );
  }

  /** Wall time of the run so far, across resumes. */
  private wall(): number {
    return this.wallBefore + (Date.now() - this.started) / 1000;
  }

  /** Says when an iteration skipped minibatches with a non-finite loss or gradient norm. */
  private warnNonFinite(report: RunIterationReport, bar: boolean): void {
    if (report.nonFiniteSkips === 0) return;
    this.nonFiniteTotal += report.nonFiniteSkips;
    this.p.log(
      `${bar ? '\n' : ''}warning: iteration ${this.done} skipped ${report.nonFiniteSkips} of ${report.minibatches} minibatch steps with a non-finite loss or gradient norm (${this.nonFiniteTotal} in this run; the run stops after ${this.p.trainer.maxNonFiniteSkips} in a row)`,
    );
  }

  /** Keeps the last 50 episodes' returns and successes for the progress line. */
  private remember(report: RunIterationReport): void {
    for (const e of report.rollout.episodes)
      this.recent.push({
        ret: e.discountedReturn,
        ...(e.success === undefined ? {} : { success: e.success }),
      });
    this.recent.splice(0, Math.max(0, this.recent.length - 50));
  }

  /** Writes the checkpoint of `iteration` (atomically; never non-finite weights). */
  private async save(iteration: number): Promise<void> {
    const { runDir, trainer, env, agent } = this.p;
    await saveCheckpointWith(
      runDir,
      { iteration, envSteps: trainer.counters.envSteps, wallSeconds: this.wall() },
      (dir) => this.writeCheckpointFiles(dir, trainer, env, agent),
      { keep: 2 },
    );
  }

  /** The files of a checkpoint: the trainer's state, the environments' and the agent's model. */
  private async writeCheckpointFiles(
    dir: string,
    trainer: RunTrainer,
    env: VecEnv,
    agent: Agent,
  ): Promise<void> {
    const state = (await trainer.getState()) as Checkpointed;
    // Never write non-finite weights: the previous checkpoint stays the latest.
    assertFiniteCheckpoint(state);
    writeState(dir, 'trainer', state);
    writeJsonAtomicSync(join(dir, 'env.json'), env.getState());
    await agent.saveTrainable(join(dir, 'model'));
  }

  /**
   * A greedy evaluation during training (`--eval-every`), kept in greedy-evals.json; its success
   * rate and return as metrics columns (`greedySuccess`, `greedyReturn`).
   */
  private async greedyEvaluation(): Promise<MetricsRow> {
    const { spec, agent, rc, trainer, runDir, log } = this.p;
    const o = rc.run;
    const t0 = Date.now();
    const r = await evaluateTask(spec, agent, o.task, {
      episodes: o.evalEpisodes,
      greedy: true,
      seed: rc.config.seed + 1_000_003,
      envs: o.envs,
      config: rc.config,
      options: rc.envOptions,
    });
    const evalSeconds = (this.evals.at(-1)?.evalSeconds ?? 0) + (Date.now() - t0) / 1000;
    this.evals.push({
      iteration: this.done,
      envSteps: trainer.counters.envSteps,
      wallSeconds: this.wall(),
      evalSeconds,
      episodes: o.evalEpisodes,
      successRate: r.successRate,
      meanReturn: r.meanReturn,
    });
    writeJsonAtomicSync(join(runDir, 'greedy-evals.json'), this.evals);
    log(
      `\niteration ${this.done}: greedy success ${(r.successRate * 100).toFixed(0)}%, return ${r.meanReturn.toFixed(3)}`,
    );
    return { greedySuccess: r.successRate, greedyReturn: r.meanReturn };
  }

  /** Says where the stopped run continues from. */
  private stopped(during: string): TrainResult {
    const { rc, trainer, runDir, log, total } = this.p;
    log(
      this.bySteps
        ? `stopped after iteration ${this.done} (${trainer.counters.envSteps}/${rc.run.envSteps} env steps)${during}; continue with --resume ${runDir}`
        : `stopped after iteration ${this.done}/${total}${during}; continue with --resume ${runDir}`,
    );
    return { runDir, iterations: this.done, interrupted: true };
  }

  /** The final perplexity and evaluation (eval.json), unless `stop()` interrupts it. */
  private async finish(stop: () => boolean): Promise<TrainResult> {
    const { spec, agent, rc, trainer, runDir, log } = this.p;
    const o = rc.run;
    await recordPerplexity(runDir, agent, 'after', o.model, o.perplexityLines);
    const results = await evaluateAll(spec, agent, rc, log, stop);
    // No eval.json when interrupted: resuming the run evaluates again from the final checkpoint.
    if (stop()) return this.stopped(', during the final evaluation (resuming evaluates again)');
    const best = await this.evaluateBest(stop);
    if (stop()) return this.stopped(', during the final evaluation (resuming evaluates again)');
    if (o.evalEpisodes > 0)
      writeJsonAtomicSync(join(runDir, 'eval.json'), {
        iteration: this.done,
        envSteps: trainer.counters.envSteps,
        results,
        ...(best ? { best } : {}),
      });
    return { runDir, iterations: this.done, interrupted: false };
  }

  /**
   * The final evaluation of the best checkpoint (`--keep-best`) when it is not the latest: its
   * iteration, what made it best and its results, for eval.json's `best` (the top level is the
   * latest checkpoint's). Loads the best checkpoint's model into the agent.
   */
  private async evaluateBest(stop: () => boolean): Promise<Record<string, unknown> | null> {
    const { spec, agent, rc, runDir, log } = this.p;
    const best = rc.run.keepBest && rc.run.evalEpisodes > 0 ? bestCheckpoint(runDir) : null;
    if (!best || best.meta.iteration === this.done) return null;
    log(`evaluating the best checkpoint (iteration ${best.meta.iteration}, ${rc.run.keepBest})`);
    await agent.loadTrainable(join(best.dir, 'model'));
    const results = await evaluateAll(spec, agent, rc, log, stop);
    return {
      iteration: best.meta.iteration,
      envSteps: best.meta.envSteps,
      ...(best.meta.best as Record<string, unknown>),
      results,
    };
  }
}

/** Said after a non-finite error (see runCli): where the run can continue from. */
function noteLastGood(err: Error, runDir: string): void {
  const last = listCheckpoints(runDir)[0];
  (err as Error & { note?: string }).note = last
    ? `the latest checkpoint, iteration ${last.meta.iteration} (${last.dir}), is the last good one; --resume ${runDir} continues from it${err.name === 'NonFiniteUpdateError' ? ' (--max-non-finite-skips may be raised then)' : ''}`
    : 'no checkpoint was written before this happened';
}

/** The progress line's mean return and success rate over the recent episodes. */
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
