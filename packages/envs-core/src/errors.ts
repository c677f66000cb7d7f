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
export class UnknownEnvError extends Error {
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

/** Thrown when an argument to an envs-core function is malformed (names the argument and the fix). */
export class EnvArgumentError extends Error {
  override readonly name = 'EnvArgumentError';
  constructor(
    readonly argument: string,
    message: string,
  ) {
    super(`${argument}: ${message}`);
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
