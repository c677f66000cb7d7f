import type { OptionsSchema } from '@poad/config';
import { resolveModelPath, settledPromptFormat } from './agent/model-path.js';
import type { RunConfig } from './run-config.js';

/** The fields of `values` that `schema` has. */
function fieldsOf(
  schema: OptionsSchema,
  values: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([k]) => k in schema));
}

/** A run as config.json holds it: the run options, the algorithm's config fields, the env options. */
export function flatRunConfig(rc: RunConfig): Record<string, unknown> {
  // Where it resumes from and which checkpoint eval loads are not the run's settings.
  const { resume: _resume, checkpoint: _checkpoint, ...run } = rc.run;
  return {
    ...run,
    ...fieldsOf(rc.algorithm.configSchema, rc.config as unknown as Record<string, unknown>),
    ...rc.envOptions,
  };
}

/** Run options that say where output goes, how it is shown or how it is computed, not what. */
const NOT_SETTINGS = new Set<string>([
  'runs',
  'runName',
  'resume',
  'quiet',
  'checkpointEvery',
  'evalEvery',
  'backend',
  'threads',
  'matmul',
  'maxNonFiniteSkips',
  // The date a chat template writes (the day a run started): runs of the same settings started
  // on different days are the same experiment.
  'promptDate',
  // Which checkpoint eval and play load, and which one is kept as the best: the training is the
  // same.
  'checkpoint',
  'keepBest',
]);

/** The collapse monitor's options: they change a run's numbers only when it stops or rolls back. */
const MONITOR_SETTINGS = [
  'onCollapse',
  'collapseDrop',
  'collapsePatience',
  'collapseFloors',
  'maxKlSkipShare',
  'rollbackLrFactor',
  'maxRollbacks',
];

/**
 * What decides a run's numbers, as one object: its run options but those of output and display,
 * the algorithm's settings (`settingsOf` of its entry: fields it ignores dropped) and the env's
 * options. Two runs with equal settings train and evaluate the same way (bit for bit on the same
 * backend and thread count); `compare --reuse` matches runs by them.
 */
export function runSettings(rc: RunConfig): Record<string, unknown> {
  const promptFormat = settledPromptFormat(rc.run.model, rc.run.promptFormat);
  const flat = {
    ...rc.run,
    // 'default' and the older 'models/default' both mean the embedded default model.
    model: resolveModelPath(rc.run.model),
    // `auto` on a model without a chat template prompts as `plain` (and old runs did).
    promptFormat,
    ...(rc.algorithm.settingsOf?.(rc.config) ??
      fieldsOf(rc.algorithm.configSchema, rc.config as unknown as Record<string, unknown>)),
    ...rc.envOptions,
  };
  const watchOnly = rc.run.onCollapse === 'warn';
  return Object.fromEntries(
    Object.entries(flat).filter(
      ([k, v]) =>
        !NOT_SETTINGS.has(k) && v !== undefined && !(watchOnly && MONITOR_SETTINGS.includes(k)),
    ),
  );
}
