import { OptionError } from '@poad/config';
import { makeVecEnv } from '@poad/envs-core';
import type { CriticSource, TokenPolicy } from '@poad/ppo';
import { type LockHolder, lockRunDir } from '@poad/run-kit';
import type { Agent } from './agent/agent.js';
import type { AppSpec } from './app.js';
import { oracleCritic } from './policy/oracle-critic.js';
import type { RunConfig } from './run-config.js';
import { createRunDirectory } from './run-dir.js';
import { runTrainerOf } from './run-trainer.js';
import { TrainingRun } from './training-run.js';

export { RunFileError } from './run-dir.js';

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
 * Runs (or resumes) training with the run's algorithm and writes everything into a run
 * directory: config.json, environment.json, metrics.jsonl/csv, learning-curve.svg/png,
 * token-credit.svg, checkpoints/ (PEFT adapter, value head, trainer and environment state) and,
 * at the end, eval.json and perplexity.json. The algorithm's trainer (its registry entry's
 * `Trainer`) is built here from the run's resolved config, which it takes as it is. The run
 * directory is locked (`run.lock`) while it runs: another process training or resuming it is
 * refused with a `RunLockedError`. The loop itself is {@link TrainingRun}.
 */
export async function runTraining(
  spec: AppSpec,
  rc: RunConfig,
  agent: Agent,
  log: (line: string) => void,
): Promise<TrainResult> {
  const { run: o, config, algorithm } = rc;
  const policy = trainedPolicy(spec, rc, agent);
  const onStale = (h: LockHolder | null) =>
    log(
      `warning: the lock of this run directory was left by ${h ? `process ${h.pid} (started ${h.startedAt})` : 'a process'}, which is gone (killed or crashed); taking it over`,
    );
  // A resumed run is locked before anything in it is read or cleaned; a new one right away.
  const runDir = o.resume ?? createRunDirectory(spec, rc, agent);
  const lock = lockRunDir(runDir, { onStale });
  try {
    let index = 0;
    const env = makeVecEnv(() => spec.makeEnv(o.task, rc.envOptions, index++), o.envs, {
      seed: config.seed,
    });
    const trainer = new algorithm.Trainer({ policy, env, config });
    const run = new TrainingRun({
      spec,
      rc,
      agent,
      log,
      runDir,
      env,
      trainer: runTrainerOf(trainer, (r) => algorithm.report(r)),
      total: plannedIterations(rc),
    });
    return await run.train();
  } finally {
    lock.release();
  }
}

/**
 * The policy a run's trainer drives: the agent's, or, with `critic: 'oracle' | 'oracle-star'`
 * (`--critic`, the PPO family's), the agent's with its value calls answered by the
 * environment's exact values (`AppSpec.exactCritic`; `oracleCritic`).
 * @throws OptionError when the environment has no exact values
 */
function trainedPolicy(spec: AppSpec, rc: RunConfig, agent: Agent): TokenPolicy {
  const critic = (rc.config as { critic?: CriticSource }).critic ?? 'learned';
  if (critic === 'learned') return agent.policy;
  if (!spec.exactCritic)
    throw new OptionError(
      `--critic ${critic}: ${spec.envId(rc.run.task)} has no exact values to answer the critic with (the credit tasks have them, npm run train:credit); use --critic learned`,
      { option: 'critic', reason: 'the environment has no exact values', label: '--critic' },
    );
  const values = critic === 'oracle' ? 'policy' : 'optimal';
  return oracleCritic(agent.policy, spec.exactCritic({ task: rc.run.task, agent, values }));
}
