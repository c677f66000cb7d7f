import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  coerceOption,
  kebab,
  markResolved,
  type Naming,
  OptionError,
  type OptionsSchema,
  parseArgs,
  resolveOptions,
} from '@poad/config';
import { readConfigFile } from '@poad/run-kit';
import { algorithmEntry, algorithmNames } from './algorithms/registry.js';
import type { AlgorithmConfigBase, AlgorithmEntry } from './algorithms/types.js';
import type { AppSpec } from './app.js';
import {
  commandLineSchema,
  defaultThreads,
  helpOf,
  notAnOption,
  schemasOf,
} from './command-line.js';
import { migrateRunConfig } from './migrate-config.js';
import { offeredAlgorithms, offeredEntry, presetValues } from './presets.js';
import { type RunOptions, runOptionsSchema } from './run-options.js';

export { defaultThreads };

/**
 * A run, resolved: its own options, its algorithm and that algorithm's config, and the
 * environment's options. config.json holds the three as one flat object (`flatRunConfig`).
 */
export interface RunConfig {
  /** Task, algorithm and preset names, model, backend, sizes, output and evaluation settings. */
  readonly run: RunOptions;
  /** The registry entry of `run.algo`. */
  readonly algorithm: AlgorithmEntry;
  /**
   * The algorithm's config (its schema's fields and the entry's fixed ones; `seed` seeds every
   * random choice of the run), resolved once: the trainer takes it as it is.
   */
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

/** What a training command line asks for: `train`, `eval` or `play` of a run, or its help. */
export type CommandLineRun =
  | { readonly help: string }
  | { readonly mode: 'train' | 'eval' | 'play'; readonly rc: RunConfig };

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
  'checkpoint',
] as const;

/**
 * Resolves a run, once and typed, from a training command line (`{ argv }`: its flags and a
 * `--config` file; `--help` gives the help text instead) or from values given in code (`{ values
 * }`, e.g. `train()`'s options). This is the one validation of a run:
 *
 * 1. the values are read (a command line is parsed; the task flag under the app's own name,
 *    e.g. `--dataset`, becomes `task`);
 * 2. the algorithm is chosen (`algo`, refused with the reason when the environment does not
 *    offer what it needs), and the environment's preset for it (`preset`) is the one layer of
 *    defaults above the schemas'; `resume` instead takes the run directory's own settings, of
 *    which only {@link RESUMABLE_OVERRIDES} may change;
 * 3. every field, of the run's options, the algorithm's config and the environment's options
 *    together, is checked by one `resolveOptions` (a field of another algorithm is refused with
 *    the algorithm it belongs to), then the algorithm's rules across fields (`check`), the run
 *    options its config decides (`runOptions`) and the environment's own check (`validate`).
 *
 * The algorithm's config is marked resolved: its trainer takes it as it is.
 */
export function resolveRun(
  spec: AppSpec,
  request: { readonly argv: readonly string[] },
): CommandLineRun;
export function resolveRun(
  spec: AppSpec,
  request: { readonly values: Readonly<Record<string, unknown>> } & ValueSources,
): RunConfig;
export function resolveRun(
  spec: AppSpec,
  request:
    | { readonly argv: readonly string[] }
    | ({ readonly values: Readonly<Record<string, unknown>> } & ValueSources),
): CommandLineRun | RunConfig {
  let explicit: Record<string, unknown>;
  let how: ValueSources;
  let mode: 'train' | 'eval' | 'play' = 'train';
  if ('argv' in request) {
    const parsed = parseArgs(request.argv, commandLineSchema(spec), readConfigFile);
    const taskKey = spec.taskOption ?? 'task';
    if (taskKey !== 'task' && taskKey in parsed.explicit) {
      parsed.explicit.task = parsed.explicit[taskKey];
      parsed.sources.task = parsed.sources[taskKey]!;
      delete parsed.explicit[taskKey];
    }
    if (parsed.help) return { help: helpOf(spec, parsed.explicit) };
    mode = modeOf(parsed.positionals);
    explicit = parsed.explicit;
    how = { sources: parsed.sources, naming: 'flag' };
  } else {
    explicit = { ...request.values };
    how = { naming: 'flag', ...request };
  }
  // The algorithm, and the layer of defaults above the schemas': the environment's preset for
  // it, or for a resumed run its own config.json (then nothing but what it recorded).
  let presetName = '';
  if (typeof explicit.resume === 'string') {
    const saved = savedRun(spec, explicit, how);
    explicit = saved.explicit;
    how = saved.how;
  } else {
    presetName = String(
      explicit.preset === undefined
        ? spec.presets.default
        : coerceOption(
            'preset',
            runOptionsSchema(spec, offeredAlgorithms(spec)).preset!,
            explicit.preset,
            how.sources?.preset ?? how.where ?? 'option',
            how.naming,
          ),
    );
  }
  const entry = offeredEntry(spec, String(explicit.algo ?? defaultAlgo(spec)), how);
  const preset = presetName ? presetValues(spec.presets, presetName, entry.name) : {};
  const s = schemasOf(spec, entry);
  const all: OptionsSchema = { ...s.run, ...s.config, ...s.env };
  for (const key of Object.keys(explicit))
    if (explicit[key] !== undefined && !(key in all)) throw notAnOption(spec, entry, key, how);
  const values = resolveOptions(all, explicit, {
    ...how,
    layers: [
      { name: 'default', values: { threads: defaultThreads() } },
      ...(presetName
        ? [
            {
              name: `preset ${presetName}`,
              values: Object.fromEntries(Object.entries(preset).filter(([k]) => k in all)),
            },
          ]
        : []),
    ],
  });
  // The three parts of the run, each in its schema's order as resolved.
  const run: Record<string, unknown> = {};
  const config: Record<string, unknown> = { ...entry.fixed };
  const envOptions: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (key in s.run) run[key] = value;
    else if (key in s.config) config[key] = value;
    else envOptions[key] = value;
  }
  entry.check?.(config as unknown as AlgorithmConfigBase);
  imposeRunOptions(entry, config as unknown as AlgorithmConfigBase, run, s.run, explicit, how);
  spec.validate?.({ task: String(run.task), ...config, ...envOptions });
  const rc: RunConfig = {
    run: run as RunOptions,
    algorithm: entry,
    config: markResolved(config) as unknown as AlgorithmConfigBase,
    envOptions,
  };
  return 'argv' in request ? { mode, rc } : rc;
}

/** The mode of a command line's positional words: `train` (default), `eval` or `play`. */
function modeOf(positionals: readonly string[]): 'train' | 'eval' | 'play' {
  const mode = positionals[0] ?? 'train';
  if (!['train', 'eval', 'play'].includes(mode) || positionals.length > 1) {
    throw new OptionError(
      `unknown mode ${JSON.stringify(positionals.join(' '))}; use train, eval or play (see --help)`,
    );
  }
  return mode as 'train' | 'eval' | 'play';
}

/** The algorithm a run of `spec` takes when none is named: POAD where offered. */
function defaultAlgo(spec: AppSpec): string {
  const offered = offeredAlgorithms(spec);
  return offered.includes('poad') ? 'poad' : (offered[0] ?? 'poad');
}

/**
 * Sets the run options the algorithm's config decides (e.g. `envs` = groups × group size), each
 * checked by its schema; an explicit different value is refused.
 */
function imposeRunOptions(
  entry: AlgorithmEntry,
  config: AlgorithmConfigBase,
  run: Record<string, unknown>,
  schema: OptionsSchema,
  explicit: Readonly<Record<string, unknown>>,
  how: ValueSources,
): void {
  for (const [key, value] of Object.entries(entry.runOptions?.(config) ?? {})) {
    const where = how.sources?.[key] ?? how.where ?? 'option';
    const label = how.naming === 'field' ? `${where}.${key}` : `${where} --${kebab(key)}`;
    if (explicit[key] !== undefined && String(explicit[key]) !== String(value)) {
      throw new OptionError(
        `${label}: --algo ${entry.name} runs ${value} here (its config decides it, e.g. groups × group-size); remove it or change the config`,
        { option: key, reason: 'decided by the algorithm', label },
      );
    }
    run[key] = coerceOption(key, schema[key]!, value, `--algo ${entry.name}`, how.naming);
  }
}

/**
 * A resumed run's values: its config.json (under today's names: see migrate-config.ts) with the
 * resumable overrides of `explicit` over it; anything else given is refused. Fields the run was
 * recorded without take the schemas' defaults, as the code of that time did; `promptFormat`
 * `plain`.
 */
function savedRun(
  spec: AppSpec,
  explicit: Readonly<Record<string, unknown>>,
  how: ValueSources,
): { explicit: Record<string, unknown>; how: ValueSources } {
  const runDir = String(explicit.resume);
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
  const where = join(runDir, 'config.json');
  const raw = readRunConfigFile(
    runDir,
    `--resume ${runDir}: no config.json there; pass the run directory a previous run printed`,
  );
  const algo = String(raw.algo ?? 'poad');
  if (!algorithmNames().includes(algo))
    throw new OptionError(
      `${where}: algo ${JSON.stringify(algo)} is not a registered algorithm (${algorithmNames().join(', ')})`,
    );
  const s = schemasOf(spec, algorithmEntry(algo));
  const saved = migrateRunConfig(raw, (k) => k in s.run || k in s.config || k in s.env);
  // Runs recorded before prompt formats existed prompted plainly (not `auto`, today's default);
  // the environment says what its options were before they were recorded (e.g. a scoring rule).
  if (saved.promptFormat === undefined) saved.promptFormat = 'plain';
  for (const [k, v] of Object.entries(spec.recordedDefaults ?? {}))
    if (saved[k] === undefined) saved[k] = v;
  const kept = Object.fromEntries(
    Object.entries(explicit).filter(([k, v]) => k !== 'resume' && v !== undefined),
  );
  const sources = Object.fromEntries([
    ...Object.keys(saved).map((k) => [k, where] as const),
    ...Object.keys(kept).map((k) => [k, how.sources?.[k] ?? how.where ?? 'option'] as const),
  ]);
  return {
    explicit: { ...saved, ...kept, resume: runDir },
    how: { ...how, sources, where },
  };
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
 * A run directory's own settings (its config.json), checked by the same schemas as a new run's
 * ({@link resolveRun} with `resume`), with `overrides` (those of {@link RESUMABLE_OVERRIDES})
 * applied.
 */
export function loadRunConfig(
  spec: AppSpec,
  runDir: string,
  overrides: Readonly<Record<string, unknown>> = {},
  how: ValueSources = {},
): RunConfig {
  return resolveRun(spec, { ...how, values: { ...overrides, resume: runDir } });
}
