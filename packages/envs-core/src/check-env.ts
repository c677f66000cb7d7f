import { canonical } from './canonical.js';
import {
  ConformanceError,
  EnvArgumentError,
  EpisodeOverError,
  InvalidActionError,
  NotResetError,
} from './errors.js';
import { findLabelProblem } from './labels.js';
import { createRng, deriveSeed, type Rng } from './rng.js';
import type { TextEnv, TextStep } from './types.js';

/** Options of {@link checkEnv}. */
export interface CheckEnvOptions {
  /** Declared upper bound on steps per episode; every episode must end within it. */
  maxSteps: number;
  /** Episodes played by the random policy (default 5). */
  episodes?: number;
  /** Seeds the policy and the episode seeds (default 0). */
  seed?: number;
  /**
   * Chooses the action at each step. Required for open action spaces (`actions === null`);
   * by default a discrete step picks a uniformly random label.
   */
  actionGenerator?: (step: TextStep, rng: Rng) => string;
  /** A label that is never valid, used to test `InvalidActionError` (default `"<not an action>"`). */
  invalidAction?: string;
  /** `info` keys left out of the determinism comparison (e.g. wall-clock timings). */
  ignoreInfoKeys?: readonly string[];
  /** Steps timed for the steps/second figure (default 2000; 0 skips it). */
  benchmarkSteps?: number;
  /** Accept the same label twice in one `actions` list (default false). */
  allowDuplicateLabels?: boolean;
}

/** What {@link checkEnv} found. */
export interface CheckEnvReport {
  envId: string;
  /** Episodes played by the reference run. */
  episodes: number;
  /** Steps taken by the reference run. */
  steps: number;
  meanEpisodeLength: number;
  longestEpisode: number;
  /** Mean of `info.discountedReturn` at episode end. */
  meanDiscountedReturn: number;
  /** Whether any step had `actions === null`. */
  openActionSpace: boolean;
  /** Random-policy steps per second (with resets), NaN when skipped. */
  stepsPerSecond: number;
  /** Names of the checks that passed. */
  checks: string[];
  /** Checks that did not apply, with the reason. */
  skipped: string[];
}

interface Episode {
  seed: number;
  actions: string[];
  /** Canonical text of the reset step followed by every step. */
  trace: string[];
}

const DEFAULT_INVALID = '<not an action>';

/**
 * Runs the conformance checks on environments made by `factory` and returns a report; throws a
 * `ConformanceError` naming the check on the first violation. Works from any test runner:
 *
 * ```ts
 * it('conforms', async () => {
 *   const report = await checkEnv(() => createMyEnv(), { maxSteps: 50 });
 *   expect(report.checks).toContain('determinism');
 * });
 * ```
 *
 * Checks: `not-reset` (step before reset throws NotResetError), `reset` (reward 0, not done),
 * `labels` (non-empty lists of non-empty, comma-free, trimmed, distinct labels), `rewards`
 * (finite), `episode-limit` (ends within `maxSteps`), `episode-info` (`info.discountedReturn`
 * finite, `info.length` a positive integer), `invalid-action` (an unknown label throws
 * InvalidActionError and changes nothing), `episode-over` (EpisodeOverError after the end),
 * `determinism` (same seed + same actions = same trajectory, across instances and after a
 * reset), `close` (safe to call twice), plus the `stepsPerSecond` figure.
 */
export async function checkEnv(
  factory: () => TextEnv,
  options: CheckEnvOptions,
): Promise<CheckEnvReport> {
  validateOptions(factory, options);
  const envA = factory();
  const opened: TextEnv[] = [envA];
  let closed = false;
  try {
    const report = await runChecks(factory, options, envA, opened);
    closed = true;
    return report;
  } finally {
    // on a failed check, still release processes and files (errors here would hide the failure)
    if (!closed)
      await Promise.all(
        opened.map((env) =>
          Promise.resolve()
            .then(() => env.close())
            .catch(() => undefined),
        ),
      );
  }
}

async function runChecks(
  factory: () => TextEnv,
  options: CheckEnvOptions,
  envA: TextEnv,
  opened: TextEnv[],
): Promise<CheckEnvReport> {
  const episodesWanted = options.episodes ?? 5;
  const baseSeed = options.seed ?? 0;
  const invalid = options.invalidAction ?? DEFAULT_INVALID;
  const ignore = new Set(options.ignoreInfoKeys ?? []);
  const checks = new Set<string>();
  const skipped: string[] = [];
  const envId = envA.id;
  const fail = (check: string, detail: string): never => {
    throw new ConformanceError(envId, check, detail);
  };
  const ctx: Ctx = { envId, options, ignore, fail, checks, open: false };

  // 1. Reference run.
  const episodes: Episode[] = [];
  const returns: number[] = [];
  for (let e = 0; e < episodesWanted; e++) {
    const seed = deriveSeed(baseSeed, e);
    const rng = createRng(deriveSeed(baseSeed, e, 1));
    const ep = await playEpisode(ctx, envA, seed, rng, returns);
    episodes.push(ep);
    await expectThrow(ctx, 'episode-over', 'EpisodeOverError', EpisodeOverError, () =>
      envA.step(ep.actions[ep.actions.length - 1] as string),
    );
  }

  // 2. A fresh instance: step before reset, then replay with invalid-action probes.
  const envB = factory();
  opened.push(envB);
  const first = episodes[0]?.actions[0] as string;
  await expectThrow(ctx, 'not-reset', 'NotResetError', NotResetError, () => envB.step(first));
  const labelsSeen = new Set<string>();
  for (const ep of episodes) {
    await replay(ctx, envB, ep, invalid, labelsSeen, 'determinism');
  }
  if (ctx.open && labelsSeen.size === 0) skipped.push('invalid-action: open action space');

  // 3. The first instance again: reset must restore everything.
  await replay(ctx, envA, episodes[0] as Episode, null, labelsSeen, 'determinism');

  // 4. Throughput.
  const benchSteps = options.benchmarkSteps ?? 2000;
  let stepsPerSecond = Number.NaN;
  if (benchSteps > 0) {
    stepsPerSecond = await measure(ctx, envA, benchSteps, baseSeed);
  } else {
    skipped.push('stepsPerSecond: benchmarkSteps is 0');
  }

  // 5. Closing twice is harmless.
  for (const env of [envA, envB]) {
    try {
      await env.close();
      await env.close();
    } catch (err) {
      fail('close', `close() threw on the second call: ${describe(err)}`);
    }
  }
  checks.add('close');

  const lengths = episodes.map((ep) => ep.actions.length);
  const total = lengths.reduce((s, l) => s + l, 0);
  return {
    envId,
    episodes: episodes.length,
    steps: total,
    meanEpisodeLength: total / episodes.length,
    longestEpisode: Math.max(...lengths),
    meanDiscountedReturn: returns.reduce((s, r) => s + r, 0) / returns.length,
    openActionSpace: ctx.open,
    stepsPerSecond,
    checks: [...checks],
    skipped,
  };
}

interface Ctx {
  envId: string;
  options: CheckEnvOptions;
  ignore: Set<string>;
  fail: (check: string, detail: string) => never;
  checks: Set<string>;
  open: boolean;
}

function validateOptions(factory: () => TextEnv, options: CheckEnvOptions): void {
  if (typeof factory !== 'function') {
    throw new EnvArgumentError('checkEnv(factory)', 'expected a function returning a TextEnv.');
  }
  if (!options || !Number.isInteger(options.maxSteps) || options.maxSteps < 1) {
    throw new EnvArgumentError(
      'checkEnv(options.maxSteps)',
      'declare the episode step limit as a positive integer, e.g. { maxSteps: 50 }.',
    );
  }
  const eps = options.episodes ?? 5;
  if (!Number.isInteger(eps) || eps < 1) {
    throw new EnvArgumentError('checkEnv(options.episodes)', `expected >= 1, got ${eps}.`);
  }
}

async function playEpisode(
  ctx: Ctx,
  env: TextEnv,
  seed: number,
  rng: Rng,
  returns: number[],
): Promise<Episode> {
  const { fail, checks } = ctx;
  let step = await guard(ctx, 'reset', () => env.reset({ seed }));
  validateStep(ctx, step, true);
  if (step.reward !== 0 || step.terminated || step.truncated) {
    fail('reset', `reset() must return reward 0 and a running episode, got ${summary(step)}.`);
  }
  checks.add('reset');
  const ep: Episode = { seed, actions: [], trace: [canonical(step, ctx.ignore)] };
  while (!step.terminated && !step.truncated) {
    if (ep.actions.length >= ctx.options.maxSteps) {
      fail(
        'episode-limit',
        `episode with seed ${seed} is still running after the declared maxSteps=${ctx.options.maxSteps}.`,
      );
    }
    const action = chooseAction(ctx, step, rng);
    ep.actions.push(action);
    step = await guard(ctx, 'step', () => env.step(action));
    validateStep(ctx, step, false);
    ep.trace.push(canonical(step, ctx.ignore));
  }
  checks.add('episode-limit');
  const { discountedReturn, length } = step.info;
  if (typeof discountedReturn !== 'number' || !Number.isFinite(discountedReturn)) {
    fail(
      'episode-info',
      `info.discountedReturn must be a finite number at episode end, got ${String(discountedReturn)}.`,
    );
  }
  if (typeof length !== 'number' || !Number.isInteger(length) || length < 1) {
    fail(
      'episode-info',
      `info.length must be a positive integer at episode end, got ${String(length)}.`,
    );
  }
  checks.add('episode-info');
  returns.push(discountedReturn as number);
  return ep;
}

function chooseAction(ctx: Ctx, step: TextStep, rng: Rng): string {
  if (ctx.options.actionGenerator) return ctx.options.actionGenerator(step, rng);
  if (step.actions === null) {
    throw new EnvArgumentError(
      'checkEnv(options.actionGenerator)',
      `${ctx.envId} has an open action space (actions === null); pass an actionGenerator that writes an action.`,
    );
  }
  return rng.choice(step.actions);
}

function validateStep(ctx: Ctx, step: TextStep, isReset: boolean): void {
  const { fail } = ctx;
  const where = isReset ? 'reset()' : 'step()';
  if (!step || typeof step !== 'object') fail('step-shape', `${where} must resolve to a TextStep.`);
  if (typeof step.observation !== 'string')
    fail('step-shape', `${where}: observation must be a string.`);
  if (typeof step.terminated !== 'boolean' || typeof step.truncated !== 'boolean') {
    fail('step-shape', `${where}: terminated and truncated must be booleans.`);
  }
  if (!step.info || typeof step.info !== 'object')
    fail('step-shape', `${where}: info must be an object.`);
  if (typeof step.reward !== 'number' || !Number.isFinite(step.reward)) {
    fail('rewards', `${where} returned a non-finite reward ${String(step.reward)}.`);
  }
  ctx.checks.add('rewards');
  const done = step.terminated || step.truncated;
  if (step.actions === null) {
    ctx.open = true;
    return;
  }
  if (!Array.isArray(step.actions)) fail('labels', `${where}: actions must be an array or null.`);
  if (step.actions.length === 0 && !done) {
    fail('labels', `${where}: the episode is running but no action is valid.`);
  }
  const problem = findLabelProblem(step.actions, ctx.options.allowDuplicateLabels === true);
  if (problem) fail('labels', `${where}: ${problem}`);
  ctx.checks.add('labels');
}

async function replay(
  ctx: Ctx,
  env: TextEnv,
  ep: Episode,
  invalid: string | null,
  labelsSeen: Set<string>,
  check: string,
): Promise<void> {
  let step = await guard(ctx, 'reset', () => env.reset({ seed: ep.seed }));
  compare(ctx, check, ep, 0, step);
  for (let t = 0; t < ep.actions.length; t++) {
    if (invalid !== null && step.actions !== null) {
      for (const label of step.actions) labelsSeen.add(label);
      await probeInvalid(ctx, env, step.actions, invalid);
      const other = [...labelsSeen].find((l) => !(step.actions as readonly string[]).includes(l));
      if (other !== undefined) await probeInvalid(ctx, env, step.actions, other);
    }
    const action = ep.actions[t] as string;
    step = await guard(ctx, 'step', () => env.step(action));
    compare(ctx, check, ep, t + 1, step);
  }
  ctx.checks.add(check);
}

async function probeInvalid(
  ctx: Ctx,
  env: TextEnv,
  valid: readonly string[],
  label: string,
): Promise<void> {
  const err = await expectThrow(
    ctx,
    'invalid-action',
    'InvalidActionError',
    InvalidActionError,
    () => env.step(label),
  );
  const listed = (err as { validActions?: unknown }).validActions;
  if (Array.isArray(listed) && listed.join('\n') !== valid.join('\n')) {
    ctx.fail(
      'invalid-action',
      `InvalidActionError for ${JSON.stringify(label)} lists [${listed.join(' | ')}] but the valid actions are [${valid.join(' | ')}].`,
    );
  }
}

function compare(ctx: Ctx, check: string, ep: Episode, t: number, step: TextStep): void {
  const got = canonical(step, ctx.ignore);
  const want = ep.trace[t];
  if (got !== want) {
    const after = t === 0 ? 'reset' : `action ${JSON.stringify(ep.actions[t - 1])} (step ${t})`;
    ctx.fail(
      check,
      `replaying seed ${ep.seed} diverged after ${after}:\n  first run: ${want}\n  replay:    ${got}\n(an invalid action must not change the state; reset must restore everything; randomness must come from the reset seed).`,
    );
  }
}

async function measure(ctx: Ctx, env: TextEnv, steps: number, seed: number): Promise<number> {
  const rng = createRng(deriveSeed(seed, 0x7fff));
  let episode = 0;
  let step = await env.reset({ seed: deriveSeed(seed, 0x7fff, episode++) });
  const start = performance.now();
  for (let i = 0; i < steps; i++) {
    step = await env.step(chooseAction(ctx, step, rng));
    if (step.terminated || step.truncated) {
      step = await env.reset({ seed: deriveSeed(seed, 0x7fff, episode++) });
    }
  }
  const seconds = (performance.now() - start) / 1000;
  return seconds > 0 ? steps / seconds : Number.POSITIVE_INFINITY;
}

async function expectThrow(
  ctx: Ctx,
  check: string,
  name: string,
  ctor: abstract new (...args: never[]) => Error,
  run: () => Promise<unknown>,
): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    if (err instanceof ctor || (err instanceof Error && err.name === name)) {
      ctx.checks.add(check);
      return err;
    }
    return ctx.fail(check, `expected ${name}, got ${describe(err)}.`);
  }
  return ctx.fail(check, `expected ${name}, but the call succeeded.`);
}

async function guard<T>(ctx: Ctx, what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    return ctx.fail(what, `${what}() threw unexpectedly: ${describe(err)}`);
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function summary(step: TextStep): string {
  return `reward=${step.reward}, terminated=${step.terminated}, truncated=${step.truncated}`;
}
