import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  closestName,
  coerceOption,
  kebab,
  type Naming,
  OptionError,
  type OptionLayer,
  type OptionsSchema,
  resolveOptions,
} from '@poad/config';
import { algorithmEntry, algorithmNames } from './algorithms/registry.js';
import type { AlgorithmConfigBase, AlgorithmEntry } from './algorithms/types.js';
import type { AppSpec } from './app.js';
import { migrateRunConfig } from './migrate-config.js';
import { resolveModelPath, settledPromptFormat } from './model-path.js';
import { offeredAlgorithms, presetValues } from './presets.js';
import type { RunOptions } from './run-options.js';
import { runOptionsSchema } from './run-options.js';

/**
 * A run, resolved: its own options, its algorithm and that algorithm's config, and the
 * environment's options. config.json holds the three as one flat object ({@link flatRunConfig}).
 */
export interface RunConfig {
  /** Task, algorithm and preset names, model, backend, sizes, output and evaluation settings. */
  readonly run: RunOptions;
  /** The registry entry of `run.algo`. */
  readonly algorithm: AlgorithmEntry;
  /** The algorithm's config (its schema's fields; `seed` seeds every random choice of the run). */
  readonly config: AlgorithmConfigBase;
  /** The environment's own options (the app's `extraOptions`), passed to `makeEnv`. */
  readonly envOptions: Readonly<Record<string, unknown>>;
}

/** Where explicit values came from, for errors naming them. */
export interface ValueSources {
  /** By field (e.g. `command line`, `config file c.yaml:`). */
  readonly sources?: Readonly<Record<string, string>>;
  /** For fields `sources` does not name (default `option`). */
  readonly where?: string;
  /** `--flag` (default) or `where.field`. */
  readonly naming?: Naming;
}

/**
 * Options that may change when resuming: they do not change what is computed (a different
 * `threads`, `backend` or `matmul` changes only the last bits of floating-point sums, so such a resumed
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
  'matmul',
  'maxNonFiniteSkips',
] as const;

/** Native-kernel threads of a run that does not say: `POAD_NATIVE_THREADS`, else the CPU count. */
export function defaultThreads(): number {
  const env = Number(process.env.POAD_NATIVE_THREADS);
  return Number.isInteger(env) && env > 0 ? Math.min(env, 1024) : availableParallelism();
}

/** The fields of `values` that `schema` has. */
function fieldsOf(
  schema: OptionsSchema,
  values: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([k]) => k in schema));
}

/** The three schemas a run's fields fall into, for algorithm `algo` on `spec`. */
function schemasOf(spec: AppSpec, entry: AlgorithmEntry) {
  return {
    run: runOptionsSchema(spec, offeredAlgorithms(spec)),
    config: entry.configSchema,
    env: spec.extraOptions ?? {},
  };
}

/**
 * Every flag a training command of `spec` reads: the run options (the task under the app's own
 * name, e.g. `--dataset`), the config fields of every algorithm it offers, and the environment's
 * options. Which of them a run takes depends on `--algo` ({@link resolveRun}).
 */
export function commandLineSchema(spec: AppSpec): OptionsSchema {
  const { task, ...run } = runOptionsSchema(spec, offeredAlgorithms(spec));
  const out: OptionsSchema = { [spec.taskOption ?? 'task']: task!, ...run };
  for (const name of offeredAlgorithms(spec)) Object.assign(out, algorithmEntry(name).configSchema);
  return { ...out, ...(spec.extraOptions ?? {}) };
}

/**
 * The defaults a run of `algo` under preset `name` starts from, by field (for `--help`): the
 * preset's values over the schemas' defaults.
 */
export function runDefaults(spec: AppSpec, algo: string, name?: string): Record<string, unknown> {
  const entry = algorithmEntry(algo);
  const s = schemasOf(spec, entry);
  const out: Record<string, unknown> = { threads: defaultThreads() };
  for (const schema of [s.run, s.config, s.env])
    for (const [k, spec] of Object.entries(schema))
      if (spec.default !== undefined) out[k] = spec.default;
  const preset = presetValues(spec.presets, name ?? spec.presets.default, algo);
  return { ...out, ...fieldsOf({ ...s.run, ...s.config }, preset) };
}

/**
 * Resolves a new run from explicit values (flags and a config file, or `train()`'s options),
 * once and typed: the environment's preset for the algorithm under the schemas' defaults, the
 * explicit values over both. Each field goes to the one schema that has it (the run's options,
 * the algorithm's config, the environment's options) and is checked there; a field of another
 * algorithm is refused with the algorithm it belongs to. `explicit.resume` instead reloads the
 * run's own settings ({@link loadRunConfig}); only {@link RESUMABLE_OVERRIDES} may change then.
 */
export function resolveRun(
  spec: AppSpec,
  explicit: Readonly<Record<string, unknown>>,
  how: ValueSources = {},
): RunConfig {
  if (typeof explicit.resume === 'string') {
    const changed = Object.keys(explicit).filter(
      (k) =>
        k !== 'resume' &&
        explicit[k] !== undefined &&
        !(RESUMABLE_OVERRIDES as readonly string[]).includes(k),
    );
    if (changed.length) {
      throw new OptionError(
        `--resume keeps the run's own settings; remove ${changed.map((k) => `--${kebab(k)}`).join(', ')} (only ${RESUMABLE_OVERRIDES.map(kebab).join(', ')} may change)`,
      );
    }
    return loadRunConfig(spec, explicit.resume, explicit, how);
  }
  const runSchema = runOptionsSchema(spec, offeredAlgorithms(spec));
  const algo = String(explicit.algo ?? runSchema.algo!.default);
  const entry = entryFor(spec, algo, how);
  const presetName =
    explicit.preset === undefined
      ? spec.presets.default
      : String(
          coerceOption(
            'preset',
            runSchema.preset!,
            explicit.preset,
            how.sources?.preset ?? how.where ?? 'option',
            how.naming,
          ),
        );
  const preset = presetValues(spec.presets, presetName, algo);
  return resolveWith(spec, entry, explicit, how, { name: `preset ${presetName}`, values: preset });
}

/** The entry of `algo`, refused when the environment's presets do not offer it. */
function entryFor(spec: AppSpec, algo: string, how: ValueSources): AlgorithmEntry {
  const offered = offeredAlgorithms(spec);
  if (!offered.includes(algo)) {
    const where = how.sources?.algo ?? how.where ?? 'option';
    const label = how.naming === 'field' ? `${where}.algo` : `${where} --algo`;
    throw new OptionError(
      `${label}: ${JSON.stringify(algo)} is not offered for ${spec.envId(spec.defaultTask).split('/')[0]}${
        algorithmNames().includes(algo) ? ' (its presets have no values for it)' : ''
      }; choose one of: ${offered.join(', ')}`,
    );
  }
  return algorithmEntry(algo);
}

/** Splits `explicit` among the three schemas and resolves each over its layer of `preset`. */
function resolveWith(
  spec: AppSpec,
  entry: AlgorithmEntry,
  explicit: Readonly<Record<string, unknown>>,
  how: ValueSources,
  preset: OptionLayer | null,
): RunConfig {
  const s = schemasOf(spec, entry);
  const part: Record<'run' | 'config' | 'env', Record<string, unknown>> = {
    run: {},
    config: {},
    env: {},
  };
  for (const [key, value] of Object.entries(explicit)) {
    if (value === undefined) continue;
    if (key in s.run) part.run[key] = value;
    else if (key in s.config) part.config[key] = value;
    else if (key in s.env) part.env[key] = value;
    else throw notAnOption(spec, entry, key, how);
  }
  const layer = (schema: OptionsSchema): OptionLayer[] =>
    preset ? [{ name: preset.name, values: fieldsOf(schema, preset.values) }] : [];
  const options = { ...how, naming: how.naming ?? ('flag' as const) };
  const config = entry.resolveConfig(part.config, { ...options, layers: layer(s.config) });
  // Run options the algorithm's config decides (e.g. its number of environments).
  const imposed = entry.runOptions?.(config) ?? {};
  for (const [key, value] of Object.entries(imposed)) {
    if (part.run[key] !== undefined && String(part.run[key]) !== String(value)) {
      const where = how.sources?.[key] ?? how.where ?? 'option';
      const label = how.naming === 'field' ? `${where}.${key}` : `${where} --${kebab(key)}`;
      throw new OptionError(
        `${label}: --algo ${entry.name} runs ${value} here (its config decides it, e.g. groups × group-size); remove it or change the config`,
        { option: key, reason: 'decided by the algorithm', label },
      );
    }
  }
  const run = resolveOptions(s.run, part.run, {
    ...options,
    layers: [
      { name: 'default', values: { threads: defaultThreads() } },
      ...layer(s.run),
      { name: `--algo ${entry.name}`, values: imposed },
    ],
  }) as RunOptions;
  const envOptions = resolveOptions(s.env, part.env, options);
  spec.validate?.({ task: run.task, ...config, ...envOptions });
  return { run, algorithm: entry, config, envOptions };
}

/** The error for a field that no schema of this run has, naming where it belongs if anywhere. */
function notAnOption(
  spec: AppSpec,
  entry: AlgorithmEntry,
  key: string,
  how: ValueSources,
): OptionError {
  const where = how.sources?.[key] ?? how.where ?? 'option';
  const field = how.naming === 'field';
  const label = field ? `${where}.${key}` : `${where} --${kebab(key)}`;
  const owners = offeredAlgorithms(spec).filter((a) => key in algorithmEntry(a).configSchema);
  if (owners.length)
    return new OptionError(
      `${label}: not an option of --algo ${entry.name}; it is one of ${owners.join(', ')}'s (--algo ${owners[0]} --help lists them)`,
      { option: key, reason: 'not an option of this algorithm', label },
    );
  const s = schemasOf(spec, entry);
  const known = [...Object.keys(s.run), ...Object.keys(s.config), ...Object.keys(s.env)];
  const close = closestName(key, known);
  const name = (k: string) => (field ? k : `--${kebab(k)}`);
  return new OptionError(
    `${label}: unknown option for --algo ${entry.name}.${close ? ` Did you mean ${name(close)}?` : ''} Known options: ${known.map(name).join(', ')}`,
    { option: key, reason: 'unknown option', label },
  );
}

/** The options a run directory was created with (its config.json), as written. */
export function readRunConfigFile(runDir: string, whenMissing: string): Record<string, unknown> {
  const file = join(runDir, 'config.json');
  if (!existsSync(file)) throw new OptionError(whenMissing);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new OptionError(`${file}: not valid JSON (${(err as Error).message})`);
  }
}

/**
 * A run directory's own settings (its config.json, under today's names: see migrate-config.ts),
 * checked by the same schemas as a new run's, with `overrides` (those of
 * {@link RESUMABLE_OVERRIDES}) applied. Fields the run was recorded without take the schemas'
 * defaults, as the code of that time did; `threads` its default, `promptFormat` `plain`.
 */
export function loadRunConfig(
  spec: AppSpec,
  runDir: string,
  overrides: Readonly<Record<string, unknown>> = {},
  how: ValueSources = {},
): RunConfig {
  const raw = readRunConfigFile(
    runDir,
    `--resume ${runDir}: no config.json there; pass the run directory a previous run printed`,
  );
  const algo = String(raw.algo ?? 'poad');
  if (!algorithmNames().includes(algo))
    throw new OptionError(
      `${join(runDir, 'config.json')}: algo ${JSON.stringify(algo)} is not a registered algorithm (${algorithmNames().join(', ')})`,
    );
  const entry = algorithmEntry(algo);
  const s = schemasOf(spec, entry);
  const saved = migrateRunConfig(raw, (k) => k in s.run || k in s.config || k in s.env);
  // Runs recorded before prompt formats existed prompted plainly (not `auto`, today's default).
  if (saved.promptFormat === undefined) saved.promptFormat = 'plain';
  const kept = Object.fromEntries(
    Object.entries(overrides).filter(([k, v]) => k !== 'resume' && v !== undefined),
  );
  const where = join(runDir, 'config.json');
  const sources = Object.fromEntries([
    ...Object.keys(saved).map((k) => [k, where] as const),
    ...Object.keys(kept).map((k) => [k, how.sources?.[k] ?? how.where ?? 'option'] as const),
  ]);
  return resolveWith(
    spec,
    entryFor(spec, algo, { where }),
    { ...saved, ...kept, resume: runDir },
    { ...how, sources },
    null,
  );
}

/** A run as config.json holds it: the run options, the algorithm's config fields, the env options. */
export function flatRunConfig(rc: RunConfig): Record<string, unknown> {
  const { resume: _resume, ...run } = rc.run;
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
]);

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
  return Object.fromEntries(
    Object.entries(flat).filter(([k, v]) => !NOT_SETTINGS.has(k) && v !== undefined),
  );
}
