/**
 * Runs recorded before the trainers' config schemas became the training commands' flags
 * (config.json with `minibatches` and `lambda`) name two fields differently and record every
 * option of every algorithm. This is the one place those names are mapped, when such a
 * config.json is read: `minibatches` → `numMinibatches`, `lambda` → `gaeLambda`; `family` (the
 * preset family `train()` recorded; presets now come with the environment) is dropped, and so is
 * every option of that time which the run's algorithm does not take (e.g. ETPO runs recorded
 * PPO's clip, and PPO runs ETPO's β), since it changed nothing.
 */

/** The renamed fields: old name → the config schema's name. */
export const RENAMED_FIELDS: Readonly<Record<string, string>> = {
  minibatches: 'numMinibatches',
  lambda: 'gaeLambda',
};

/** Every option the training commands had before the rename (after it, by their new names). */
const OPTIONS_BEFORE = new Set([
  'task',
  'algo',
  'preset',
  'seed',
  'model',
  'backend',
  'threads',
  'envs',
  'envSteps',
  'numSteps',
  'lr',
  'criticLr',
  'epochs',
  'numMinibatches',
  'gradAccumulation',
  'gamma',
  'gaeLambda',
  'intraGamma',
  'advantageNormalisation',
  'intraLambda',
  'entropyCoef',
  'clip',
  'targetKl',
  'beta',
  'tau',
  'reference',
  'optimizer',
  'candidateNormalisation',
  'tokenSpace',
  'maxNewTokens',
  'temperature',
  'topK',
  'truncationAsTermination',
  'loraRank',
  'loraAlpha',
  'runs',
  'runName',
  'resume',
  'maxNonFiniteSkips',
  'checkpointEvery',
  'evalEpisodes',
  'evalEvery',
  'maxIterations',
  'quiet',
]);

/** Whether a config.json was written before the rename. */
export function isOldRunConfig(saved: Readonly<Record<string, unknown>>): boolean {
  return Object.keys(RENAMED_FIELDS).some((k) => k in saved) || 'family' in saved;
}

/**
 * A config.json's values under today's names. `takes(field)` says whether the run's algorithm,
 * the run options or the environment's options have the field. A config written after the rename
 * comes back as it is.
 */
export function migrateRunConfig(
  saved: Readonly<Record<string, unknown>>,
  takes: (field: string) => boolean,
): Record<string, unknown> {
  if (!isOldRunConfig(saved)) return { ...saved };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(saved)) {
    if (key === 'family') continue;
    const name = RENAMED_FIELDS[key] ?? key;
    if (OPTIONS_BEFORE.has(name) && !takes(name)) continue;
    out[name] = value;
  }
  return out;
}
