import { hostname } from 'node:os';
import { join } from 'node:path';
import { formatHelp, OptionError } from '@poad/config';
import {
  loadCheckpoint,
  parseArgsWithConfig,
  RunLockedError,
  runDirLockHolder,
  writeJsonAtomicSync,
} from '@poad/run-kit';
import { releaseBackend } from '@poad/tfjs-kernels';
import type { Agent } from './agent.js';
import { algorithmEntry } from './algorithms/registry.js';
import type { AppSpec } from './app.js';
import { evaluateAll } from './evaluate.js';
import { playEpisode } from './play.js';
import { offeredAlgorithms } from './presets.js';
import { createRunAgent } from './run-agent.js';
import { commandLineSchema, type RunConfig, resolveRun, runDefaults } from './run-config.js';
import { RUN_OPTIONS } from './run-options.js';
import { runTraining } from './train.js';

/**
 * Errors caused by the run's inputs (bad options, files or model folders, a Hub model that cannot
 * be found, reached or downloaded, a run directory another process holds or the disk refuses, an
 * environment returning values a learner cannot take): one line naming the fix, exit 2.
 */
const USER_ERRORS = new Set([
  'CheckpointError',
  'HubError',
  'CheckpointLoadError',
  'CheckpointWriteError',
  'RunLockedError',
  'RunFileError',
  'PpoConfigError',
  'EtpoArgumentError',
  'GroupConfigError',
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

/**
 * Reads a training command line (and its `--config` file): every flag of the app's schema, the
 * task under the app's own name (e.g. `--dataset`) renamed to `task`. Values are checked once,
 * when the run is resolved.
 */
async function readCommandLine(spec: AppSpec, argv: readonly string[]) {
  const parsed = await parseArgsWithConfig(argv, commandLineSchema(spec));
  const taskKey = spec.taskOption ?? 'task';
  if (taskKey !== 'task' && taskKey in parsed.explicit) {
    parsed.explicit.task = parsed.explicit[taskKey];
    parsed.sources.task = parsed.sources[taskKey]!;
    delete parsed.explicit[taskKey];
  }
  return parsed;
}

/**
 * The run a training command line resolves to (the preset of its algorithm, a config file and
 * flags layered; a `--resume` folder's own settings), without starting anything.
 */
export async function runConfigOf(spec: AppSpec, argv: readonly string[]): Promise<RunConfig> {
  const parsed = await readCommandLine(spec, argv);
  return resolveRun(spec, parsed.explicit, { sources: parsed.sources });
}

/** `--help` of a training command, for the algorithm and preset the command line names. */
function helpOf(spec: AppSpec, explicit: Readonly<Record<string, unknown>>): string {
  const offered = offeredAlgorithms(spec);
  const algo =
    typeof explicit.algo === 'string' && offered.includes(explicit.algo)
      ? explicit.algo
      : offered.includes('poad')
        ? 'poad'
        : offered[0]!;
  const preset =
    typeof explicit.preset === 'string' && explicit.preset in spec.presets.presets
      ? explicit.preset
      : spec.presets.default;
  const entry = algorithmEntry(algo);
  const taskKey = spec.taskOption ?? 'task';
  const { [taskKey]: _task, ...all } = commandLineSchema(spec);
  const runKeys = [taskKey, ...Object.keys(RUN_OPTIONS).filter((k) => k !== 'task')];
  const schema = {
    [taskKey]: commandLineSchema(spec)[taskKey]!,
    ...Object.fromEntries(runKeys.filter((k) => k in all).map((k) => [k, all[k]!])),
    ...entry.configSchema,
    ...(spec.extraOptions ?? {}),
  };
  const defaults = runDefaults(spec, algo, preset);
  return formatHelp(schema, {
    usage: `npm run ${spec.command} -- [train|eval|play] [options]`,
    summary: `${spec.summary}\n\nModes:\n  train  (default) train with --algo and write a run directory\n  eval   evaluate the latest checkpoint of --resume RUN_DIR (greedy and sampled, unseen variants too)\n  play   print one greedy and one sampled episode of --resume RUN_DIR step by step, with every action's probability\n\nAlgorithms:\n${offered.map((a) => `  ${a.padEnd(8)} ${algorithmEntry(a).summary}`).join('\n')}\n\nExit codes: 0 done; 2 bad input (options, files, model folder, a Hub model that cannot be found, reached or downloaded, a run directory another process is training, a checkpoint that cannot be written or read, an environment returning a non-finite reward or malformed step); 3 stopped after --max-non-finite-skips minibatches in a row with a NaN/Inf loss or gradient norm (the latest checkpoint is the last good one); 130 interrupted (a checkpoint was saved; --resume continues).\n\nDefaults below are the '${preset}' preset for --algo ${algo}; each algorithm has its own options (--algo NAME --help), and other presets change the defaults (--preset NAME --help). Flags are the fields of the algorithm's config in kebab-case; a --config file (JSON or YAML) takes the same names.`,
    defaults: { ...defaults, [taskKey]: defaults.task },
    examples: spec.examples,
    groups: [
      { title: 'Run:', keys: Object.keys(schema).filter((k) => runKeys.includes(k)) },
      { title: `Algorithm ${algo} (its config's fields):`, keys: Object.keys(entry.configSchema) },
      {
        title: `${spec.envId(spec.defaultTask).split('/')[0]} options:`,
        keys: Object.keys(spec.extraOptions ?? {}),
      },
    ],
  });
}

/**
 * The whole command line of a training app: `train` (default), `eval` or `play`. Every input is
 * checked before any work starts; errors print one line with the fix and exit with code 2.
 */
export async function runCli(
  spec: AppSpec,
  argv: readonly string[],
  hooks: RunCliHooks = {},
): Promise<number> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  try {
    const parsed = await readCommandLine(spec, argv);
    if (parsed.help) {
      process.stdout.write(helpOf(spec, parsed.explicit));
      return 0;
    }
    const mode = parsed.positionals[0] ?? 'train';
    if (!['train', 'eval', 'play'].includes(mode) || parsed.positionals.length > 1) {
      throw new OptionError(
        `unknown mode ${JSON.stringify(parsed.positionals.join(' '))}; use train, eval or play (see --help)`,
      );
    }
    const asked = resolveRun(spec, parsed.explicit, { sources: parsed.sources });
    const o = asked.run;
    if (mode !== 'train' && !o.resume)
      throw new OptionError(
        `${mode} needs --resume RUN_DIR (the run whose latest checkpoint to ${mode === 'eval' ? 'evaluate' : 'play'})`,
      );
    if (mode === 'train')
      await spec.prepare?.({ task: o.task, ...asked.config, ...asked.envOptions });
    // Refuse a run directory another process is training before loading the model (train
    // takes the lock itself; eval and play only read and take none).
    if (mode === 'train' && o.resume) {
      const holder = runDirLockHolder(o.resume);
      if (holder) throw new RunLockedError(o.resume, holder, holder.host === hostname());
    }
    // The run as the agent settled it (the prompt format used, its date), as config.json records it.
    const { agent: built, rc } = await createRunAgent(asked, log);
    const agent = hooks.wrapAgent ? hooks.wrapAgent(built) : built;
    log(`backend: ${agent.backend}; model: ${o.model}`);
    try {
      if (mode === 'train') {
        const r = await runTraining(spec, rc, agent, log);
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
        { warn: log },
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
            { greedy, seed: rc.config.seed, config: rc.config, options: rc.envOptions },
            log,
          );
        }
        return 0;
      }
      const results = await evaluateAll(
        spec,
        agent,
        {
          task: o.task,
          evalEpisodes: o.evalEpisodes,
          seed: rc.config.seed,
          envs: o.envs,
          config: rc.config,
          options: rc.envOptions,
        },
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
