import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { EtpoConfig } from '@poad/etpo';
import type { Algorithm, PpoConfig, PresetEnv, TokenSpace } from '@poad/ppo';
import { OptionError, type OptionValues, resolveOptions } from '@poad/run-kit';
import type { AppSpec } from './app.js';
import type { TrainingSchema } from './options.js';
import { ETPO_SETTINGS, runPreset } from './presets.js';

export type TrainingOptions = OptionValues<TrainingSchema>;

/**
 * Options that may change when resuming: they do not change what is computed (a different
 * `threads` or `backend` changes only the last bits of floating-point sums, so such a resumed
 * run is no longer bit-identical to an uninterrupted one; `maxNonFiniteSkips` only decides when
 * a run with non-finite values stops).
 */
export const RESUMABLE_OVERRIDES = [
  'maxIterations',
  'quiet',
  'evalEpisodes',
  'evalEvery',
  'checkpointEvery',
  'backend',
  'threads',
  'maxNonFiniteSkips',
] as const;

/** The options a run directory was created with (its config.json); `whenMissing` is the error. */
export function readRunConfig(
  runDir: string,
  whenMissing: string,
): TrainingOptions & { family?: PresetEnv } {
  const file = join(runDir, 'config.json');
  if (!existsSync(file)) throw new OptionError(whenMissing);
  return JSON.parse(readFileSync(file, 'utf8')) as TrainingOptions & { family?: PresetEnv };
}

/** Native-kernel threads of a run that does not say: `POAD_NATIVE_THREADS`, else the CPU count. */
export function defaultThreads(): number {
  const env = Number(process.env.POAD_NATIVE_THREADS);
  return Number.isInteger(env) && env > 0 ? Math.min(env, 1024) : availableParallelism();
}

/** Preset values expressed as option names, for the layered defaults. */
export function presetDefaults(
  spec: AppSpec,
  explicit: Record<string, unknown>,
): Record<string, unknown> {
  const algo = (explicit.algo ?? 'poad') as Algorithm | 'etpo';
  const p = runPreset(spec.family, algo, (explicit.preset ?? 'small') as 'small' | 'paper');
  const c = p.config;
  return {
    ...(p.etpo ?? {}),
    envs: p.numEnvs,
    envSteps: p.envSteps,
    numSteps: c.numSteps,
    lr: c.lr,
    criticLr: c.criticLr,
    epochs: c.epochs,
    minibatches: c.numMinibatches,
    gradAccumulation: c.gradAccumulation,
    gamma: c.gamma,
    lambda: c.gaeLambda ?? 0.95,
    entropyCoef: c.entropyCoef,
    clip: c.clip ?? 0.2,
    targetKl: c.targetKl === null ? 0 : (c.targetKl ?? 0.02),
    candidateNormalisation: c.candidateNormalisation ?? 'words',
    tokenSpace: c.tokenSpace ?? 'vocabulary',
    maxNewTokens: c.maxNewTokens ?? 10,
    temperature: c.temperature ?? 0.5,
    topK: c.topK ?? 50,
    threads: defaultThreads(),
  };
}

/** Resolves the options of a new run, or reloads those of a run being resumed. */
export function resolveTraining(
  spec: AppSpec,
  schema: TrainingSchema,
  explicit: Record<string, unknown>,
): TrainingOptions {
  if (typeof explicit.resume === 'string') {
    const saved = readRunConfig(
      explicit.resume,
      `--resume ${explicit.resume}: no config.json there; pass the run directory a previous run printed`,
    );
    const changed = Object.keys(explicit).filter(
      (k) => k !== 'resume' && !(RESUMABLE_OVERRIDES as readonly string[]).includes(k),
    );
    if (changed.length) {
      throw new OptionError(
        `--resume keeps the run's own settings; remove ${changed.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} (only ${RESUMABLE_OVERRIDES.join(', ')} may change)`,
      );
    }
    // Runs recorded before `threads` existed take the default, as they did then.
    const threads = (saved as Partial<TrainingOptions>).threads ?? defaultThreads();
    return { ...saved, threads, ...explicit } as TrainingOptions;
  }
  const o = resolveOptions(schema, explicit, (e) => presetDefaults(spec, e));
  if (
    o.advantageNormalisation !== undefined &&
    !/^(masked|nan-trick|none|chunk:[1-9]\d*)$/.test(o.advantageNormalisation)
  ) {
    throw new OptionError(
      `--advantage-normalisation ${o.advantageNormalisation}: expected masked, nan-trick, none or chunk:N with N ≥ 1 (e.g. chunk:4)`,
    );
  }
  if (o.optimizer === 'lion' && o.algo !== 'etpo') {
    throw new OptionError(
      `--optimizer lion is offered for --algo etpo only; ${o.algo} trains with AdamW (remove --optimizer)`,
    );
  }
  return o;
}

/**
 * The trainer configuration a resolved run asks for. For ETPO: the rollout, sampler and optimiser
 * fields it shares with PPO, with POAD's sampler (`etpoConfigOf` adds β and τ).
 */
export function ppoConfigOf(spec: AppSpec, o: TrainingOptions): Partial<PpoConfig> {
  const algorithm = (o.algo === 'etpo' ? 'poad' : o.algo) as Algorithm;
  const base = runPreset(spec.family, algorithm, o.preset as 'small' | 'paper').config;
  return {
    ...base,
    algorithm,
    seed: o.seed,
    numSteps: o.numSteps,
    lr: o.lr,
    criticLr: o.criticLr,
    epochs: o.epochs,
    numMinibatches: o.minibatches,
    gradAccumulation: o.gradAccumulation,
    gamma: o.gamma,
    gaeLambda: o.lambda,
    intraGamma: typeof o.intraGamma === 'number' ? o.intraGamma : null,
    intraLambda: typeof o.intraLambda === 'number' ? o.intraLambda : null,
    ...(o.advantageNormalisation
      ? { advantageNormalisation: o.advantageNormalisation as PpoConfig['advantageNormalisation'] }
      : {}),
    entropyCoef: o.entropyCoef,
    clip: o.clip,
    targetKl: o.targetKl > 0 ? o.targetKl : null,
    candidateNormalisation: o.candidateNormalisation as PpoConfig['candidateNormalisation'],
    // Runs recorded before --token-space existed used the vocabulary; twosome has no token policy.
    tokenSpace:
      o.algo === 'twosome' ? 'vocabulary' : ((o.tokenSpace ?? 'vocabulary') as TokenSpace),
    truncationAsTermination: o.truncationAsTermination,
    maxNewTokens: o.maxNewTokens,
    temperature: o.temperature,
    topK: o.topK,
    // Runs recorded before the option existed take its default.
    maxNonFiniteSkips: o.maxNonFiniteSkips ?? 8,
  };
}

/** ETPO's β, τ and reference of a run (the preset's where unset). */
export function etpoSettingsOf(o: TrainingOptions): {
  beta: number;
  tau: number;
  reference: 'base' | 'uniform';
  optimizer: 'adamw' | 'lion';
} {
  return {
    beta: o.beta ?? ETPO_SETTINGS.beta,
    tau: o.tau ?? ETPO_SETTINGS.tau,
    reference: (o.reference ?? ETPO_SETTINGS.reference) as 'base' | 'uniform',
    optimizer: (o.optimizer ?? ETPO_SETTINGS.optimizer) as 'adamw' | 'lion',
  };
}

/** ETPO's trainer configuration: the shared fields of {@link ppoConfigOf} plus β and τ. */
export function etpoConfigOf(spec: AppSpec, o: TrainingOptions): EtpoConfig {
  const { algorithm: _poad, ...shared } = ppoConfigOf(spec, o);
  const { beta, tau, optimizer } = etpoSettingsOf(o);
  return { ...shared, beta, tau, optimizer };
}
