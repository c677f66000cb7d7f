import { hostname } from 'node:os';
import { join } from 'node:path';
import { releaseBackend } from '@poad/lora-model';
import {
  formatHelp,
  loadCheckpoint,
  OptionError,
  parseArgsWithConfig,
  RunLockedError,
  runDirLockHolder,
  writeJsonAtomicSync,
} from '@poad/run-kit';
import type { Agent } from './agent.js';
import type { AppSpec } from './app.js';
import { evaluateAll } from './evaluate.js';
import { trainingSchema } from './options.js';
import { playEpisode } from './play.js';
import { ppoConfigOf, presetDefaults, resolveTraining, type TrainingOptions } from './resolve.js';
import { createRunAgent } from './run-agent.js';
import { runTraining } from './train.js';

const capitalise = (s: string) => s[0]!.toUpperCase() + s.slice(1);

/**
 * Errors caused by the run's inputs (bad options, files or model folders, a run directory another
 * process holds or the disk refuses, an environment returning values a learner cannot take): one
 * line naming the fix, exit 2.
 */
const USER_ERRORS = new Set([
  'CheckpointError',
  'CheckpointLoadError',
  'CheckpointWriteError',
  'RunLockedError',
  'PpoConfigError',
  'ModelConfigError',
  'BackendUnavailableError',
  'WebGpuUnavailableError',
  'UnknownEnvError',
  'EnvArgumentError',
  'EnvOutputError',
]);

/** Errors that stop training because its numbers went non-finite: one line, exit 3. */
const NON_FINITE_ERRORS = new Set(['NonFiniteUpdateError', 'NonFiniteStateError']);

/** Exit codes of a training command (also listed in --help). */
export const EXIT_CODES = {
  done: 0,
  userError: 2,
  nonFinite: 3,
  interrupted: 130,
} as const;

/** Ways to adjust what `runCli` builds, for tests and embedding. */
export interface RunCliHooks {
  /** Receives the agent built from `--model` and returns the one to use (e.g. instrumented). */
  wrapAgent?(agent: Agent): Agent;
}

/** The training schema of an app as it appears on its command line (task option renamed). */
function schemasOf(spec: AppSpec) {
  const base = trainingSchema(
    spec.tasks,
    spec.defaultTask,
    spec.taskOption ? capitalise(spec.taskOption) : 'Task',
    spec.defaultModel,
    spec.defaultEvalEpisodes,
  );
  const schema = { ...base, ...(spec.extraOptions ?? {}) } as typeof base;
  const taskKey = spec.taskOption ?? 'task';
  // The command-line schema: the task option under the app's own name (e.g. --dataset).
  const cliSchema = Object.fromEntries(
    Object.entries(schema).map(([k, v]) => [k === 'task' ? taskKey : k, v]),
  );
  return { schema, cliSchema, taskKey };
}

/** Parses a training command line (with its `--config` file) into explicit option values. */
async function parseTrainingArgv(spec: AppSpec, argv: readonly string[]) {
  const { schema, cliSchema, taskKey } = schemasOf(spec);
  const parsed = await parseArgsWithConfig(argv, cliSchema);
  if (taskKey !== 'task' && taskKey in parsed.explicit) {
    parsed.explicit.task = parsed.explicit[taskKey];
    delete parsed.explicit[taskKey];
  }
  return { schema, cliSchema, parsed };
}

/**
 * The fully resolved options a training command line would run with (preset defaults, config
 * file and flags layered; a `--resume` folder's own settings), without starting anything.
 */
export async function trainingOptionsOf(
  spec: AppSpec,
  argv: readonly string[],
): Promise<TrainingOptions> {
  const { schema, parsed } = await parseTrainingArgv(spec, argv);
  return resolveTraining(spec, schema, parsed.explicit);
}

/**
 * The whole command line of a training app: `train` (default) or `eval`. Every input is
 * checked before any work starts; errors print one line with the fix and exit with code 2.
 */
export async function runCli(
  spec: AppSpec,
  argv: readonly string[],
  hooks: RunCliHooks = {},
): Promise<number> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  try {
    const { schema, cliSchema, parsed } = await parseTrainingArgv(spec, argv);
    if (parsed.help) {
      process.stdout.write(
        formatHelp(cliSchema, {
          usage: `npm run ${spec.command} -- [train|eval] [options]`,
          summary: `${spec.summary}\n\nModes:\n  train  (default) train (PPO; soft Q-learning for --algo etpo) and write a run directory\n  eval   evaluate the latest checkpoint of --resume RUN_DIR (greedy and sampled, unseen variants too)\n  play   print one greedy and one sampled episode of --resume RUN_DIR step by step, with every action's probability\n\nExit codes: 0 done; 2 bad input (options, files, model folder, a run directory another process is training, a checkpoint that cannot be written or read, an environment returning a non-finite reward or malformed step); 3 stopped after --max-non-finite-skips minibatches in a row with a NaN/Inf loss or gradient norm (the latest checkpoint is the last good one); 130 interrupted (a checkpoint was saved; --resume continues).\n\nTraining defaults below are the '${String(parsed.explicit.preset ?? 'small')}' preset for --algo ${String(parsed.explicit.algo ?? 'poad')}; other algorithms and presets change them (e.g. --algo etpo --help).`,
          defaults: presetDefaults(spec, parsed.explicit),
          examples: spec.examples as string[],
        }),
      );
      return 0;
    }
    const mode = parsed.positionals[0] ?? 'train';
    if (!['train', 'eval', 'play'].includes(mode) || parsed.positionals.length > 1) {
      throw new OptionError(
        `unknown mode ${JSON.stringify(parsed.positionals.join(' '))}; use train, eval or play (see --help)`,
      );
    }
    const o = resolveTraining(spec, schema, parsed.explicit);
    spec.validate?.(o);
    if (mode !== 'train' && !o.resume)
      throw new OptionError(
        `${mode} needs --resume RUN_DIR (the run whose latest checkpoint to ${mode === 'eval' ? 'evaluate' : 'play'})`,
      );
    if (mode === 'train') await spec.prepare?.(o);
    // Refuse a run directory another process is training before loading the model (train
    // takes the lock itself; eval and play only read and take none).
    if (mode === 'train' && o.resume) {
      const holder = runDirLockHolder(o.resume);
      if (holder) throw new RunLockedError(o.resume, holder, holder.host === hostname());
    }
    const built = await createRunAgent(spec, o);
    const agent = hooks.wrapAgent ? hooks.wrapAgent(built) : built;
    log(`backend: ${agent.backend}; model: ${o.model}`);
    try {
      if (mode === 'train') {
        const r = await runTraining(spec, o, agent, log);
        log(
          r.interrupted
            ? `interrupted; resume with: npm run ${spec.command} -- --resume ${r.runDir}`
            : `done: ${r.runDir}`,
        );
        return r.interrupted ? EXIT_CODES.interrupted : EXIT_CODES.done;
      }
      const ck = await loadCheckpoint(
        o.resume!,
        (cp) => agent.loadTrainable(join(cp.dir, 'model')),
        {
          warn: log,
        },
      );
      if (!ck)
        throw new OptionError(`--resume ${o.resume}: no checkpoint in this run directory yet`);
      log(`checkpoint: iteration ${ck.meta.iteration}, ${ck.meta.envSteps} env steps`);
      if (mode === 'play') {
        for (const greedy of [true, false]) {
          await playEpisode(
            spec,
            agent,
            o.task,
            { greedy, seed: o.seed, config: ppoConfigOf(spec, o), options: o },
            log,
          );
        }
        return 0;
      }
      const results = await evaluateAll(
        spec,
        agent,
        { ...o, config: ppoConfigOf(spec, o), options: o },
        log,
      );
      writeJsonAtomicSync(join(o.resume!, `eval-iter-${ck.meta.iteration}.json`), {
        iteration: ck.meta.iteration,
        results,
      });
      return 0;
    } finally {
      agent.dispose();
    }
  } catch (err) {
    const name = (err as { name?: string }).name ?? '';
    if (err instanceof OptionError || USER_ERRORS.has(name)) {
      log(`error: ${(err as Error).message}`);
      return EXIT_CODES.userError;
    }
    if (NON_FINITE_ERRORS.has(name)) {
      log(`error: ${(err as Error).message}`);
      const note = (err as { note?: string }).note;
      if (note) log(note);
      return EXIT_CODES.nonFinite;
    }
    throw err;
  }
}

/**
 * The whole program of a training app: {@link runCli} on the process's arguments, then the GPU
 * device released (Dawn would otherwise keep the process alive), with the exit code set.
 */
export async function runMain(spec: AppSpec): Promise<void> {
  try {
    process.exitCode = await runCli(spec, process.argv.slice(2));
  } finally {
    await releaseBackend();
  }
}
