import { hostname } from 'node:os';
import { join } from 'node:path';
import { OptionError } from '@poad/config';
import { type EnvPresets, envSpec, makeEnv, type TextEnv } from '@poad/envs-core';
import {
  checkpointsFor,
  loadCheckpoint,
  parseCheckpointChoice,
  RunLockedError,
  runDirLockHolder,
} from '@poad/run-kit';
import type { Agent } from './agent/agent.js';
import { createRunAgent } from './agent/run-agent.js';
import type { AlgorithmConfigs, AlgorithmName } from './algorithms/registry.js';
import type { AppSpec } from './app.js';
import { type EvalResult, evaluateTask } from './evaluate.js';
import { type PlayedEpisode, playEpisode } from './play.js';
import { defaultPresets } from './presets.js';
import { loadRunConfig, type RunConfig, readRunConfigFile, resolveRun } from './run-config.js';
import type { RunOptions } from './run-options.js';
import type { RunIterationReport } from './run-trainer.js';
import { runTraining, type TrainResult } from './train.js';

/** Builds environment number `index` (0, 1, …) of the parallel environments of a run. */
export type EnvFactory = (index: number) => TextEnv;

/** Where the environments of a run come from. */
export interface EnvChoice {
  /**
   * A factory of fresh environments, or the id of an environment registered in the
   * `@poad/envs-core` registry (e.g. `'virtualhome/food-preparation'` after
   * `registerVirtualHomeEnvs()` of `@poad/envs-virtualhome`).
   */
  env: string | EnvFactory;
  /** Options passed to a registered environment's factory (registered ids only). */
  envOptions?: Record<string, unknown>;
  /**
   * Name of a factory-made environment in the run directory's name, plots and evaluation
   * (default `'custom'`); a registered id names itself.
   */
  envName?: string;
}

/** A run's own options as `train()` takes them (the environment is `env`, not `task`). */
type RunFields = Partial<Omit<RunOptions, 'task' | 'algo'>>;

/** `algo` and that algorithm's config fields, typed per algorithm (`algo` unset: POAD). */
type AlgorithmFields =
  | {
      [A in AlgorithmName]: { algo: A } & Partial<Omit<AlgorithmConfigs[A], 'algorithm'>>;
    }[AlgorithmName]
  | ({ algo?: undefined } & Partial<Omit<AlgorithmConfigs['poad'], 'algorithm'>>);

/**
 * The training options of `train()`: the run's own options and the chosen algorithm's config
 * fields, by the names the command lines use in kebab-case (`numMinibatches` is
 * `--num-minibatches`), each optional. An algorithm registered from outside this package takes
 * its own fields (cast the object).
 */
export type TrainingOptionValues = RunFields & AlgorithmFields;

/** What `train()` takes besides the training options. */
export interface TrainExtras {
  /**
   * The presets whose values fill the options left unset (default: those the registered
   * environment brings, e.g. `VIRTUALHOME_PRESETS`; for one without, {@link defaultPresets}).
   */
  presets?: EnvPresets;
  /** Best achievable discounted return, for "steps to 90% of the optimum" in comparisons. */
  optimalReturn?: number;
  /** Receives every progress and status line (default: standard error). */
  log?: (line: string) => void;
  /**
   * Called after every iteration, after its metrics row is written: the rollout, its buffer, the
   * update's metrics and the per-token credit (PPO's advantages, ETPO's soft TD errors).
   */
  onIteration?(report: RunIterationReport, runDir: string): void | Promise<void>;
}

/** Options of {@link train}. */
export type TrainOptions = EnvChoice & TrainingOptionValues & TrainExtras;

export type { TrainResult };

/** What `train()`'s options hold besides training options. */
const NOT_OPTIONS = new Set([
  'env',
  'envOptions',
  'envName',
  'presets',
  'optimalReturn',
  'log',
  'onIteration',
]);

const stderrLine = (line: string) => {
  process.stderr.write(`${line}\n`);
};

/** The app description the shared training loop runs, for an environment given in code. */
function specOf(
  choice: EnvChoice,
  extra: Pick<TrainExtras, 'presets' | 'optimalReturn' | 'onIteration'> = {},
): AppSpec {
  const { env } = choice;
  if (typeof env !== 'string' && typeof env !== 'function') {
    throw new OptionError(
      'env: expected a registered environment id (string) or a factory (index) => TextEnv',
    );
  }
  const registered = typeof env === 'string' ? envSpec(env) : undefined;
  if (typeof env === 'string' && !registered) {
    // Same message as makeEnv's, before any model is loaded.
    makeEnv(env);
  }
  const name = typeof env === 'string' ? env : (choice.envName ?? 'custom');
  if (!/^[A-Za-z0-9][\w.-]*(\/[A-Za-z0-9][\w.-]*)*$/.test(name)) {
    throw new OptionError(
      `envName: ${JSON.stringify(name)} is used in file names; use letters, digits, '.', '-', '_' and '/', each part starting with a letter or digit`,
    );
  }
  const optimum = extra.optimalReturn ?? registered?.meta.optimalReturn;
  return {
    command: 'train()',
    summary: name,
    tasks: [name],
    defaultTask: name,
    envId: () => name,
    makeEnv: (_task, _options, index = 0) =>
      typeof env === 'string' ? makeEnv(env, choice.envOptions) : env(index),
    presets: extra.presets ?? registered?.meta.presets ?? defaultPresets(),
    optimalReturn: () => optimum,
    evalTasks: () => [name],
    ...(extra.onIteration
      ? {
          onIteration: async (report, runDir) => {
            await extra.onIteration!(report, runDir);
            return undefined;
          },
        }
      : {}),
    examples: [],
  };
}

/** The training options among `train()`'s (or `evaluate()`'s) options, unset ones left out. */
function optionsOf(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  if ('task' in values) throw new OptionError('train() options.task: pass the environment as env');
  return Object.fromEntries(
    Object.entries(values).filter(([k, v]) => !NOT_OPTIONS.has(k) && v !== undefined),
  );
}

/**
 * Trains a language-model agent on an environment with POAD (or any registered algorithm:
 * NTPO, TWOSOME, ARCHER, ETPO, …) and writes the same run directory the `train:*` commands write:
 * config.json, environment.json, metrics.jsonl/csv, learning-curve.svg/png, token-credit.svg,
 * checkpoints/ (PEFT LoRA adapters, the value head, optimiser, RNG and environment state),
 * perplexity.json and, at the end, eval.json. Unset options take the environment's preset (its
 * `small` one unless `preset` says otherwise) over the algorithm's defaults, as the command lines
 * do; the values are checked once, typed, without passing through strings. `resume: runDir`
 * continues a run bit for bit. Ctrl-C (SIGINT or SIGTERM) finishes the iteration, saves a
 * checkpoint and returns `{ interrupted: true }`; during the final evaluation it ends the
 * evaluation set under way and returns `{ interrupted: true }` without eval.json (resuming
 * evaluates again).
 *
 * Bad options throw an `OptionError` naming the option before any model is loaded. The TF.js
 * backend stays initialised afterwards; call `releaseBackend()` once at the end of a program that
 * trained on `webgpu` (Dawn keeps the process alive otherwise).
 */
export async function train(options: TrainOptions): Promise<TrainResult> {
  const log = options.log ?? stderrLine;
  const spec = specOf(options, options);
  const rc = resolveRun(spec, {
    values: optionsOf(options as unknown as Record<string, unknown>),
    where: 'train() options',
    naming: 'field',
  });
  if (rc.run.task !== spec.defaultTask) {
    throw new OptionError(
      `resume: ${rc.run.resume} is a run of ${JSON.stringify(rc.run.task)}, not of ${JSON.stringify(spec.defaultTask)}; pass the same env (and envName) it was trained on`,
    );
  }
  if (rc.run.resume) {
    const holder = runDirLockHolder(rc.run.resume);
    if (holder) throw new RunLockedError(rc.run.resume, holder, holder.host === hostname());
  }
  const { agent } = await createRunAgent(rc, log);
  log(`backend: ${agent.backend}; model: ${rc.run.model}`);
  try {
    return await runTraining(spec, rc, agent, log);
  } finally {
    agent.dispose();
  }
}

/** Options of {@link evaluate} and {@link play}. */
export interface CheckpointRunOptions extends EnvChoice {
  /** A run directory written by {@link train} or a `train:*` command. */
  runDir: string;
  /**
   * Which of its checkpoints: `latest` (default; an earlier one when it is damaged), `best` (kept
   * by `keepBest`) or `iter-N`.
   */
  checkpoint?: 'latest' | 'best' | `iter-${number}`;
  /** Arg-max actions (default true) or sampled ones. */
  greedy?: boolean;
  /** Seed of the environments and the sampler (default: the run's seed + 2,000,003). */
  seed?: number;
  /** TF.js backend (default: the run's). */
  backend?: RunOptions['backend'];
  /** Native-kernel threads (default: the run's). */
  threads?: number;
  /** Receives status lines (default: standard error). */
  log?: (line: string) => void;
}

/** Options of {@link evaluate}. */
export interface EvaluateOptions extends CheckpointRunOptions {
  /** Episodes to play (default: the run's evalEpisodes, at least 1). */
  episodes?: number;
}

/** Options of {@link play}. */
export interface PlayOptions extends CheckpointRunOptions {
  /** Stop after this many actions (default 1000). */
  maxSteps?: number;
}

/** Loads the latest checkpoint of a run and calls `use` with the agent, then disposes it. */
async function withCheckpoint<T>(
  o: CheckpointRunOptions,
  use: (spec: AppSpec, rc: RunConfig, agent: Agent) => Promise<T>,
): Promise<T> {
  const log = o.log ?? stderrLine;
  const saved = readRunConfigFile(
    o.runDir,
    `runDir: ${o.runDir} has no config.json; pass a run directory that train() or a train:* command wrote`,
  );
  // A factory-made environment keeps the name it was trained under unless told otherwise.
  const spec = specOf({ ...o, envName: o.envName ?? String(saved.task) });
  const rc = loadRunConfig(
    spec,
    o.runDir,
    { backend: o.backend, threads: o.threads },
    { where: 'evaluate() options', naming: 'field' },
  );
  const { agent } = await createRunAgent(rc, log);
  try {
    const choice = parseCheckpointChoice(o.checkpoint ?? 'latest', 'checkpoint');
    const ck = await loadCheckpoint(o.runDir, (cp) => agent.loadTrainable(join(cp.dir, 'model')), {
      warn: log,
      candidates: checkpointsFor(o.runDir, choice),
    });
    if (!ck) throw new OptionError(`runDir: ${o.runDir} has no checkpoint yet`);
    log(`checkpoint: iteration ${ck.meta.iteration}, ${ck.meta.envSteps} env steps`);
    return await use(spec, rc, agent);
  } finally {
    agent.dispose();
  }
}

/**
 * Success rate and discounted return of a run's latest checkpoint on an environment (the one it
 * was trained on, or an unseen variant), greedy or sampled, with the run's sampler settings.
 */
export function evaluate(o: EvaluateOptions): Promise<EvalResult> {
  return withCheckpoint(o, (spec, rc, agent) => {
    const episodes = o.episodes ?? Math.max(1, rc.run.evalEpisodes);
    if (!Number.isInteger(episodes) || episodes < 1)
      throw new OptionError(`episodes: expected a positive integer, got ${episodes}`);
    return evaluateTask(spec, agent, spec.defaultTask, {
      episodes,
      greedy: o.greedy ?? true,
      seed: o.seed ?? rc.config.seed + 2_000_003,
      envs: rc.run.envs,
      config: rc.config,
    });
  });
}

/**
 * Plays one episode with a run's latest checkpoint and returns every step: the observation, each
 * valid action's probability and the action chosen (also logged, as the `play` mode prints it).
 */
export function play(o: PlayOptions): Promise<PlayedEpisode> {
  return withCheckpoint(o, (spec, rc, agent) =>
    playEpisode(
      spec,
      agent,
      spec.defaultTask,
      {
        greedy: o.greedy ?? true,
        seed: o.seed ?? rc.config.seed,
        config: rc.config,
        ...(o.maxSteps ? { maxSteps: o.maxSteps } : {}),
      },
      o.log ?? stderrLine,
    ),
  );
}
