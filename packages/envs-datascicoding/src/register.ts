import { registerEnv } from '@poad/envs-core';
import { BUILTIN_DATASETS } from './datasets.js';
import { createDataSciCodingEnv, type DataSciCodingOptions, DEFAULT_MAX_ATTEMPTS } from './env.js';
import { DATASCICODING_PRESETS } from './presets.js';

/**
 * Registers `datascicoding/<name>` for every dataset bundled with scikit-learn (`iris`, `wine`,
 * `breast_cancer`, `digits`), with the training presets. `defaults` apply to every env; options given to `makeEnv` override
 * them. Safe to call more than once. Importing the package registers nothing by itself.
 */
export function registerDataSciCodingEnvs(defaults: DataSciCodingOptions = {}): string[] {
  const ids: string[] = [];
  for (const name of BUILTIN_DATASETS) {
    const id = `datascicoding/${name}`;
    registerEnv<DataSciCodingOptions>(
      id,
      (options) => createDataSciCodingEnv(name, { ...defaults, ...(options ?? {}) }),
      {
        description: `Write a scikit-learn classifier for the ${name} dataset; reward = mean ROC AUC.`,
        maxSteps: defaults.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        actionSpace: 'open',
        gamma: defaults.gamma ?? 1,
        presets: DATASCICODING_PRESETS,
        override: true,
      },
    );
    ids.push(id);
  }
  return ids;
}
