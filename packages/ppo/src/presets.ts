import { type Algorithm, type PpoConfig, resolveConfig } from './config.js';
import { PpoConfigError } from './errors.js';

/** Environment families with published hyper-parameters. */
export type PresetEnv = 'virtualhome' | 'overcooked' | 'datascicoding';

/** A full run specification: trainer config plus the run sizes an app needs. */
export interface Preset {
  /** Environment family. */
  readonly env: PresetEnv;
  /** Number of parallel environments N (`n_rollout_threads`). */
  readonly numEnvs: number;
  /** Total environment steps of a run (`num_env_steps`); iterations = ⌊total / (T·N)⌋. */
  readonly totalEnvSteps: number;
  /** Resolved trainer configuration (preset values with your overrides applied). */
  readonly config: PpoConfig;
  /** Where the values come from. */
  readonly source: string;
}

interface Row {
  numEnvs: number;
  totalEnvSteps: number;
  source: string;
  config: Partial<PpoConfig>;
}

const VH_POAD: Row = {
  numEnvs: 4,
  totalEnvSteps: 6000,
  source: 'VirtualHome POAD, rebuttal.sh (paper App. J table 13)',
  config: {
    numSteps: 32,
    lr: 1e-6,
    criticLr: 5e-5,
    gamma: 0.95,
    epochs: 5,
    numMinibatches: 2,
    gradAccumulation: 16,
    entropyCoef: 1e-4,
    maxNewTokens: 10,
  },
};

const OC_POAD: Row = {
  numEnvs: 4,
  totalEnvSteps: 40000,
  source: 'Overcooked POAD, train_overcooked.py',
  config: {
    numSteps: 32,
    lr: 5e-7,
    criticLr: 1e-5,
    gamma: 0.99,
    epochs: 5,
    numMinibatches: 2,
    gradAccumulation: 1,
    entropyCoef: 1e-4,
    maxNewTokens: 10,
  },
};

const DS_POAD: Row = {
  numEnvs: 4,
  totalEnvSteps: 10000,
  source: 'DataSciCoding POAD/NTPO, train_datascience.py',
  config: {
    numSteps: 8,
    lr: 1e-6,
    criticLr: 5e-5,
    gamma: 0.95,
    epochs: 1,
    numMinibatches: 4,
    gradAccumulation: 1,
    entropyCoef: 0.01,
    maxNewTokens: 128,
    temperature: 0.5,
    topK: 50,
  },
};

const mirror = (row: Row, note: string): Row => ({ ...row, source: `${row.source}; ${note}` });

const TABLE: Record<PresetEnv, Partial<Record<Algorithm, Row>>> = {
  virtualhome: {
    poad: VH_POAD,
    ntpo: mirror(
      VH_POAD,
      'NTPO has no separate script: POAD values for a like-for-like comparison',
    ),
    archer: {
      numEnvs: 4,
      totalEnvSteps: 6200,
      source: 'VirtualHome ARCHER script',
      config: { ...VH_POAD.config, gradAccumulation: 1 },
    },
    twosome: {
      numEnvs: 4,
      totalEnvSteps: 6000,
      source: 'VirtualHome TWOSOME, train_llm.sh',
      config: {
        numSteps: 32,
        lr: 1e-6,
        criticLr: 5e-5,
        gamma: 0.95,
        epochs: 1,
        numMinibatches: 4,
        gradAccumulation: 8,
        entropyCoef: 0.01,
        maxNewTokens: 10,
      },
    },
  },
  overcooked: {
    poad: OC_POAD,
    ntpo: mirror(OC_POAD, 'no separate script: POAD values for a like-for-like comparison'),
    twosome: mirror(OC_POAD, 'no separate script: POAD values for a like-for-like comparison'),
  },
  datascicoding: {
    poad: DS_POAD,
    ntpo: DS_POAD,
  },
};

/** The (env, algorithm) pairs that have a preset. */
export function presetKeys(): Array<{ env: PresetEnv; algorithm: Algorithm }> {
  const out: Array<{ env: PresetEnv; algorithm: Algorithm }> = [];
  for (const env of Object.keys(TABLE) as PresetEnv[]) {
    for (const algorithm of Object.keys(TABLE[env]) as Algorithm[]) out.push({ env, algorithm });
  }
  return out;
}

/**
 * The published hyper-parameters (algorithms.md §5) for an environment and algorithm, with any
 * field overridden by `overrides` (validated). Shared values: clip 0.2, value coefficient 0.5,
 * gradient-norm clip 0.5, KL threshold 0.02, γ and λ as listed, λ = 0.95.
 *
 * @example preset('virtualhome', 'poad', { seed: 3, epochs: 1 })
 * @throws PpoConfigError for a pair without published values (ARCHER outside VirtualHome,
 *   TWOSOME on DataSciCoding's open action space) or an invalid override.
 */
export function preset(
  env: PresetEnv,
  algorithm: Algorithm,
  overrides: Partial<PpoConfig> & { numEnvs?: number; totalEnvSteps?: number } = {},
): Preset {
  const family = TABLE[env];
  if (family === undefined) {
    throw new PpoConfigError(
      'preset(env)',
      `unknown env '${env}'; use ${Object.keys(TABLE).join(', ')}.`,
    );
  }
  const row = family[algorithm];
  if (row === undefined) {
    throw new PpoConfigError(
      'preset(algorithm)',
      `no published values for '${algorithm}' on '${env}'; choose one of ${Object.keys(family).join(', ')} or build a config with resolveConfig().`,
    );
  }
  const { numEnvs = row.numEnvs, totalEnvSteps = row.totalEnvSteps, ...rest } = overrides;
  for (const [name, v] of [
    ['numEnvs', numEnvs],
    ['totalEnvSteps', totalEnvSteps],
  ] as const) {
    if (!Number.isInteger(v) || v < 1) {
      throw new PpoConfigError(`overrides.${name}`, `expected an integer >= 1, got ${v}.`);
    }
  }
  const config = resolveConfig({ ...row.config, algorithm, ...rest });
  return { env, numEnvs, totalEnvSteps, config, source: row.source };
}
