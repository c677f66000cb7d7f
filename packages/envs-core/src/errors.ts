import { InputError, UserError } from '@poad/config';

/** Thrown when `step` receives a label that is not among the current valid actions. */
export class InvalidActionError extends Error {
  override readonly name = 'InvalidActionError';
  constructor(
    readonly envId: string,
    readonly action: string,
    readonly validActions: readonly string[],
  ) {
    super(
      `${envId}: action ${JSON.stringify(action)} is not valid now. Valid actions: ${validActions
        .map((a) => JSON.stringify(a))
        .join(', ')}`,
    );
  }
}

/** Thrown when `step` is called after the episode ended and before `reset`. */
export class EpisodeOverError extends Error {
  override readonly name = 'EpisodeOverError';
  constructor(readonly envId: string) {
    super(`${envId}: the episode has ended; call reset() before step().`);
  }
}

/** Thrown when `step` is called before the first `reset`. */
export class NotResetError extends Error {
  override readonly name = 'NotResetError';
  constructor(readonly envId: string) {
    super(`${envId}: call reset() before the first step().`);
  }
}

/** Thrown by `makeEnv` when no environment is registered under the requested id. */
export class UnknownEnvError extends UserError {
  override readonly name = 'UnknownEnvError';
  constructor(
    readonly envId: string,
    readonly registeredIds: readonly string[],
  ) {
    super(
      `Unknown environment id ${JSON.stringify(envId)}. Registered ids: ${
        registeredIds.length > 0 ? registeredIds.join(', ') : '(none)'
      }. Register it with registerEnv(id, factory) (environment packages export a register function, e.g. registerVirtualHomeEnvs()).`,
    );
  }
}

/** Thrown by `registerEnv` when an id is already taken by a different factory. */
export class DuplicateEnvError extends Error {
  override readonly name = 'DuplicateEnvError';
  constructor(readonly envId: string) {
    super(
      `Environment id ${JSON.stringify(envId)} is already registered with a different factory. Pick another id, or pass { override: true } in the metadata to replace it.`,
    );
  }
}

/**
 * Thrown when an argument to an environment package's function is malformed: an
 * {@link InputError} whose message names the argument and the fix.
 */
export class EnvArgumentError extends InputError {
  override readonly name: string = 'EnvArgumentError';

  /** The argument at fault (the error's `input`). */
  get argument(): string {
    return this.input;
  }
}

/** Thrown by `checkEnv` on the first conformance violation. */
export class ConformanceError extends Error {
  override readonly name = 'ConformanceError';
  constructor(
    readonly envId: string,
    /** Name of the failed check, e.g. `determinism` or `labels`. */
    readonly check: string,
    detail: string,
  ) {
    super(`${envId} fails the "${check}" conformance check: ${detail}`);
  }
}

/** Where a {@link EnvOutputError} happened: which env of a `VecEnv`, which episode and step. */
export interface EnvOutputSite {
  /** The environment's registry id. */
  readonly envId: string;
  /** Its index in the vectorised env. */
  readonly index: number;
  /** Its episode, counted from 1 (resets so far). */
  readonly episode: number;
  /** The agent step within that episode that returned the output (0 for `reset`). */
  readonly step: number;
}

/**
 * Thrown by `VecEnv` when an environment returns something a learner cannot take: a
 * non-finite reward, non-boolean `terminated`/`truncated`, an empty label list while the episode
 * runs, or a label list that turns into an open action space (or back) mid-episode. The check
 * runs on every `reset`/`step` result before it is handed on, so nothing of it reaches a
 * rollout buffer.
 */
export class EnvOutputError extends UserError {
  override readonly name = 'EnvOutputError';
  readonly envId: string;
  readonly index: number;
  readonly episode: number;
  readonly step: number;
  constructor(
    site: EnvOutputSite,
    /** The `TextStep` field at fault: `reward`, `terminated`, `truncated`, `actions`, … */
    readonly field: string,
    problem: string,
  ) {
    super(
      `${site.envId} (env ${site.index}, episode ${site.episode}, ${site.step === 0 ? 'reset' : `step ${site.step}`}): ${problem} Fix the environment's ${site.step === 0 ? 'reset()' : 'step()'}; checkEnv() from @poad/envs-core finds such defects before training.`,
    );
    this.envId = site.envId;
    this.index = site.index;
    this.episode = site.episode;
    this.step = site.step;
  }
}
