import { hostname } from 'node:os';
import { join } from 'node:path';
import { OptionError, UserError } from '@poad/config';
import {
  type CheckpointChoice,
  checkpointsFor,
  loadCheckpoint,
  RunLockedError,
  runDirLockHolder,
  writeJsonAtomicSync,
} from '@poad/run-kit';
import { releaseBackend } from '@poad/tfjs-kernels';
import type { Agent } from './agent/agent.js';
import { createRunAgent } from './agent/run-agent.js';
import type { AppSpec } from './app.js';
import { evaluateAll } from './evaluate.js';
import { playEpisode } from './play.js';
import { type RunConfig, resolveRun } from './run-config.js';
import { runTraining } from './train.js';

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
 * The run a training command line resolves to (the preset of its algorithm, a config file and
 * flags layered; a `--resume` folder's own settings), without starting anything.
 */
export async function runConfigOf(spec: AppSpec, argv: readonly string[]): Promise<RunConfig> {
  const r = resolveRun(spec, { argv });
  if ('help' in r) throw new OptionError('--help asks for the help text, not a run');
  return r.rc;
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
    const command = resolveRun(spec, { argv });
    if ('help' in command) {
      process.stdout.write(command.help);
      return 0;
    }
    const { mode, rc } = command;
    const o = rc.run;
    if (mode !== 'train' && !o.resume)
      throw new OptionError(
        `${mode} needs --resume RUN_DIR (the run whose latest checkpoint to ${mode === 'eval' ? 'evaluate' : 'play'})`,
      );
    if (mode === 'train' && o.checkpoint !== 'latest')
      throw new OptionError(
        `--checkpoint ${o.checkpoint}: training resumes from the latest checkpoint; --checkpoint chooses what eval and play load`,
      );
    if (mode === 'train') await spec.prepare?.({ task: o.task, ...rc.config, ...rc.envOptions });
    // Refuse a run directory another process is training before loading the model (train
    // takes the lock itself; eval and play only read and take none).
    if (mode === 'train' && o.resume) {
      const holder = runDirLockHolder(o.resume);
      if (holder) throw new RunLockedError(o.resume, holder, holder.host === hostname());
    }
    const { agent: built } = await createRunAgent(rc, log);
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
        { warn: log, candidates: checkpointsFor(o.resume!, o.checkpoint as CheckpointChoice) },
      );
      if (!ck)
        throw new OptionError(`--resume ${o.resume}: no checkpoint in this run directory yet`);
      log(
        `checkpoint: ${ck.name === 'best' ? 'best, ' : ''}iteration ${ck.meta.iteration}, ${ck.meta.envSteps} env steps`,
      );
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
      const results = await evaluateAll(spec, agent, rc, log);
      writeJsonAtomicSync(join(o.resume!, `eval-iter-${ck.meta.iteration}.json`), {
        iteration: ck.meta.iteration,
        checkpoint: ck.name === 'best' ? 'best' : ck.name,
        results,
      });
      return 0;
    } finally {
      agent.dispose();
    }
  } catch (err) {
    const name = (err as { name?: string }).name ?? '';
    if (err instanceof UserError) {
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
