import { hostname } from 'node:os';
import { join } from 'node:path';
import { envSpec, makeEnv, type TextEnv } from '@poad/envs-core';
import type { BackendChoice } from '@poad/lora-model';
import type { Algorithm, PresetEnv, TokenSpace } from '@poad/ppo';
import {
  coerceOption,
  loadCheckpoint,
  OptionError,
  RunLockedError,
  runDirLockHolder,
} from '@poad/run-kit';
import type { Agent } from './agent.js';
import type { AppSpec } from './app.js';
import { type EvalResult, evaluateTask } from './evaluate.js';
import { trainingSchema } from './options.js';
import { type PlayedEpisode, playEpisode } from './play.js';
import { ppoConfigOf, readRunConfig, resolveTraining, type TrainingOptions } from './resolve.js';
import { createRunAgent } from './run-agent.js';
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

/** The options whose values are one of a few words, typed as such. */
interface ChoiceOptions {
  algo: Algorithm | 'etpo';
  preset: 'small' | 'paper';
  backend: BackendChoice;
  candidateNormalisation: 'words' | 'tokens' | 'none';
  tokenSpace: TokenSpace;
  reference: 'base' | 'uniform';
  optimizer: 'adamw' | 'lion';
}

/**
 * The training command line's options, camelCase, every one optional (`--help` of a `train:*`
 * command explains each; `task` is replaced by {@link EnvChoice.env}).
 */
export type TrainingOptionValues = Partial<
  Omit<TrainingOptions, 'task' | keyof ChoiceOptions> & ChoiceOptions
>;

/** Options of {@link train}. */
export interface TrainOptions extends EnvChoice, TrainingOptionValues {
  /**
   * Whose 'small'/'paper' preset fills the hyper-parameters left unset: `'virtualhome'` (short
   * label actions, γ 0.95), `'overcooked'` (γ 0.99, label token space) or `'datascicoding'`
   * (generated programs). Default: the registered id's prefix when it is one of these, else
   * `'datascicoding'` for a registered open action space, else `'virtualhome'`.
   */
  family?: PresetEnv;
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

export type { TrainResult };

const FAMILIES: readonly PresetEnv[] = ['virtualhome', 'overcooked', 'datascicoding'];
const NOT_OPTIONS = new Set([
  'env',
  'envOptions',
  'envName',
  'family',
  'optimalReturn',
  'log',
  'onIteration',
]);

const stderrLine = (line: string) => {
  process.stderr.write(`${line}\n`);
};

/** The preset family of an environment choice (see {@link TrainOptions.family}). */
function familyOf(env: string | EnvFactory, family: PresetEnv | undefined): PresetEnv {
  if (family !== undefined) {
    if (!FAMILIES.includes(family))
      throw new OptionError(`family: expected one of ${FAMILIES.join(', ')}, got ${family}`);
    return family;
  }
  if (typeof env !== 'string') return 'virtualhome';
  const prefix = env.split('/')[0] as PresetEnv;
  if (FAMILIES.includes(prefix)) return prefix;
  return envSpec(env)?.meta.actionSpace === 'open' ? 'datascicoding' : 'virtualhome';
}

/** The app description the shared training loop runs, for an environment given in code. */
function specOf(
  choice: EnvChoice,
  family: PresetEnv,
  extra: Pick<TrainOptions, 'optimalReturn' | 'onIteration'> = {},
): AppSpec {
  const { env } = choice;
  if (typeof env !== 'string' && typeof env !== 'function') {
    throw new OptionError(
      'env: expected a registered environment id (string) or a factory (index) => TextEnv',
    );
  }
  if (typeof env === 'string' && !envSpec(env)) {
    // Same message as makeEnv's, before any model is loaded.
    makeEnv(env);
  }
  const name = typeof env === 'string' ? env : (choice.envName ?? 'custom');
  if (!/^[A-Za-z0-9][\w.-]*(\/[A-Za-z0-9][\w.-]*)*$/.test(name)) {
    throw new OptionError(
      `envName: ${JSON.stringify(name)} is used in file names; use letters, digits, '.', '-', '_' and '/', each part starting with a letter or digit`,
    );
  }
  return {
    command: 'train()',
    family,
    defaultModel: family === 'datascicoding' ? 'default-code' : 'default',
    summary: name,
    tasks: [name],
    defaultTask: name,
    envId: () => name,
    makeEnv: (_task, _options, index = 0) =>
      typeof env === 'string' ? makeEnv(env, choice.envOptions) : env(index),
    optimalReturn: () => extra.optimalReturn,
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

/** The training options of an app as `train()` takes them. */
function appSchema(spec: AppSpec) {
  return trainingSchema(
    spec.tasks,
    spec.defaultTask,
    'Task',
    spec.defaultModel,
    spec.defaultEvalEpisodes,
  );
}

/** Checks option values given in code the way the command line checks flags. */
function explicitOptions(
  spec: AppSpec,
  values: Record<string, unknown>,
  where: string,
): Record<string, unknown> {
  const schema = appSchema(spec) as Record<string, Parameters<typeof coerceOption>[1]>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (NOT_OPTIONS.has(key) || value === undefined) continue;
    const optionSpec = key === 'task' ? undefined : schema[key];
    if (!optionSpec) {
      const known = Object.keys(schema).filter((k) => k !== 'task');
      throw new OptionError(
        `${where}: unknown option ${JSON.stringify(key)}${key === 'task' ? ' (pass the environment as env)' : ''}; known options: ${known.join(', ')}`,
      );
    }
    out[key] = coerceOption(key, optionSpec, value, where);
  }
  return out;
}

/**
 * Trains a language-model agent on an environment with POAD (or NTPO, TWOSOME, ARCHER) and
 * writes the same run directory the `train:*` commands write: config.json, environment.json,
 * metrics.jsonl/csv, learning-curve.svg/png, token-credit.svg, checkpoints/ (a PEFT LoRA
 * adapter, the value head, optimiser, RNG and environment state), perplexity.json and, at the end,
 * eval.json. Unset options take the command line's defaults (the 'small' preset of `family`,
 * the embedded default model). `resume: runDir` continues a run bit for bit. Ctrl-C (SIGINT or
 * SIGTERM) finishes the iteration, saves a checkpoint and returns `{ interrupted: true }`.
 *
 * Bad options throw an `OptionError` naming the option before any model is loaded. The TF.js
 * backend stays initialised afterwards; call `releaseBackend()` once at the end of a program that
 * trained on `webgpu` (Dawn keeps the process alive otherwise).
 */
export async function train(options: TrainOptions): Promise<TrainResult> {
  const log = options.log ?? stderrLine;
  // A resumed run keeps the preset family it was started with (recorded in its config.json).
  const savedFamily = options.resume ? savedConfig(options.resume).family : undefined;
  if (savedFamily && options.family && options.family !== savedFamily) {
    throw new OptionError(
      `family: ${options.resume} was trained with the ${savedFamily} preset family; remove family or pass ${savedFamily}`,
    );
  }
  const spec = specOf(options, familyOf(options.env, options.family ?? savedFamily), options);
  const schema = appSchema(spec);
  const o = {
    ...resolveTraining(
      spec,
      schema,
      explicitOptions(spec, options as unknown as Record<string, unknown>, 'train()'),
    ),
    family: spec.family,
  };
  if (o.task !== spec.defaultTask) {
    throw new OptionError(
      `resume: ${o.resume} is a run of ${JSON.stringify(o.task)}, not of ${JSON.stringify(spec.defaultTask)}; pass the same env (and envName) it was trained on`,
    );
  }
  if (o.resume) {
    const holder = runDirLockHolder(o.resume);
    if (holder) throw new RunLockedError(o.resume, holder, holder.host === hostname());
  }
  const agent = await createRunAgent(spec, o);
  log(`backend: ${agent.backend}; model: ${o.model}`);
  try {
    return await runTraining(spec, o, agent, log);
  } finally {
    agent.dispose();
  }
}

/** Options of {@link evaluate} and {@link play}. */
export interface CheckpointRunOptions extends EnvChoice {
  /** A run directory written by {@link train} or a `train:*` command; its latest checkpoint is used. */
  runDir: string;
  /** Arg-max actions (default true) or sampled ones. */
  greedy?: boolean;
  /** Seed of the environments and the sampler (default: the run's seed + 2,000,003). */
  seed?: number;
  /** TF.js backend (default: the run's). */
  backend?: TrainingOptions['backend'];
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

/** The options a run directory was created with (its config.json). */
function savedConfig(runDir: string, what = 'resume'): TrainingOptions & { family?: PresetEnv } {
  return readRunConfig(
    runDir,
    `${what}: ${runDir} has no config.json; pass a run directory that train() or a train:* command wrote`,
  );
}

/** Loads the latest checkpoint of a run and calls `use` with the agent, then disposes it. */
async function withCheckpoint<T>(
  o: CheckpointRunOptions,
  use: (spec: AppSpec, run: TrainingOptions, agent: Agent) => Promise<T>,
): Promise<T> {
  const log = o.log ?? stderrLine;
  const saved = savedConfig(o.runDir, 'runDir');
  // A factory-made environment keeps the name it was trained under unless told otherwise.
  const spec = specOf({ ...o, envName: o.envName ?? saved.task }, familyOf(o.env, saved.family));
  const run: TrainingOptions = {
    ...saved,
    ...(o.backend ? { backend: o.backend } : {}),
    ...(o.threads ? { threads: o.threads } : {}),
  };
  const agent = await createRunAgent(spec, run);
  try {
    const ck = await loadCheckpoint(o.runDir, (cp) => agent.loadTrainable(join(cp.dir, 'model')), {
      warn: log,
    });
    if (!ck) throw new OptionError(`runDir: ${o.runDir} has no checkpoint yet`);
    log(`checkpoint: iteration ${ck.meta.iteration}, ${ck.meta.envSteps} env steps`);
    return await use(spec, run, agent);
  } finally {
    agent.dispose();
  }
}

/**
 * Success rate and discounted return of a run's latest checkpoint on an environment (the one it
 * was trained on, or an unseen variant), greedy or sampled, with the run's sampler settings.
 */
export function evaluate(o: EvaluateOptions): Promise<EvalResult> {
  return withCheckpoint(o, (spec, run, agent) => {
    const episodes = o.episodes ?? Math.max(1, run.evalEpisodes);
    if (!Number.isInteger(episodes) || episodes < 1)
      throw new OptionError(`episodes: expected a positive integer, got ${episodes}`);
    return evaluateTask(spec, agent, spec.defaultTask, {
      episodes,
      greedy: o.greedy ?? true,
      seed: o.seed ?? run.seed + 2_000_003,
      envs: run.envs,
      config: ppoConfigOf(spec, run),
    });
  });
}

/**
 * Plays one episode with a run's latest checkpoint and returns every step: the observation, each
 * valid action's probability and the action chosen (also logged, as the `play` mode prints it).
 */
export function play(o: PlayOptions): Promise<PlayedEpisode> {
  return withCheckpoint(o, (spec, run, agent) =>
    playEpisode(
      spec,
      agent,
      spec.defaultTask,
      {
        greedy: o.greedy ?? true,
        seed: o.seed ?? run.seed,
        config: ppoConfigOf(spec, run),
        ...(o.maxSteps ? { maxSteps: o.maxSteps } : {}),
      },
      o.log ?? stderrLine,
    ),
  );
}
