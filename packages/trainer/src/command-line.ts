import { availableParallelism } from 'node:os';
import { closestName, formatHelp, kebab, OptionError, type OptionsSchema } from '@poad/config';
import { algorithmEntry } from './algorithms/registry.js';
import type { AlgorithmEntry } from './algorithms/types.js';
import type { AppSpec } from './app.js';
import { offeredAlgorithms, presetValues } from './presets.js';
import type { ValueSources } from './run-config.js';
import { RUN_OPTIONS, runOptionsSchema } from './run-options.js';

/** Native-kernel threads of a run that does not say: `POAD_NATIVE_THREADS`, else the CPU count. */
export function defaultThreads(): number {
  const env = Number(process.env.POAD_NATIVE_THREADS);
  return Number.isInteger(env) && env > 0 ? Math.min(env, 1024) : availableParallelism();
}

/*
 * What a training command line reads and shows: its flags (the run's options, every offered
 * algorithm's config fields, the environment's options), their defaults under a preset, --help,
 * and the error for a flag no schema of the run has.
 */

/** The fields of `values` that `schema` has. */
function fieldsOf(
  schema: OptionsSchema,
  values: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([k]) => k in schema));
}

/** The three schemas a run's fields fall into, for algorithm `algo` on `spec`. */
export function schemasOf(spec: AppSpec, entry: AlgorithmEntry) {
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

/** `--help` of a training command, for the algorithm and preset the command line names. */
export function helpOf(spec: AppSpec, explicit: Readonly<Record<string, unknown>>): string {
  const offered = offeredAlgorithms(spec);
  const algo =
    typeof explicit.algo === 'string' && offered.includes(explicit.algo)
      ? explicit.algo
      : offered.includes('poad')
        ? 'poad'
        : offered[0]!;
  const preset =
    typeof explicit.preset === 'string' && explicit.preset in spec.presets.presets
      ? explicit.preset
      : spec.presets.default;
  const entry = algorithmEntry(algo);
  const taskKey = spec.taskOption ?? 'task';
  const { [taskKey]: _task, ...all } = commandLineSchema(spec);
  const runKeys = [taskKey, ...Object.keys(RUN_OPTIONS).filter((k) => k !== 'task')];
  const schema = {
    [taskKey]: commandLineSchema(spec)[taskKey]!,
    ...Object.fromEntries(runKeys.filter((k) => k in all).map((k) => [k, all[k]!])),
    ...entry.configSchema,
    ...(spec.extraOptions ?? {}),
  };
  const defaults = runDefaults(spec, algo, preset);
  return formatHelp(schema, {
    usage: `npm run ${spec.command} -- [train|eval|play] [options]`,
    summary: `${spec.summary}\n\nModes:\n  train  (default) train with --algo and write a run directory\n  eval   evaluate the latest checkpoint of --resume RUN_DIR (greedy and sampled, unseen variants too)\n  play   print one greedy and one sampled episode of --resume RUN_DIR step by step, with every action's probability\n\nAlgorithms:\n${offered.map((a) => `  ${a.padEnd(8)} ${algorithmEntry(a).summary}`).join('\n')}\n\nExit codes: 0 done; 2 bad input (options, files, model folder, a Hub model that cannot be found, reached or downloaded, a run directory another process is training, a checkpoint that cannot be written or read, an environment returning a non-finite reward or malformed step); 3 stopped after --max-non-finite-skips minibatches in a row with a NaN/Inf loss or gradient norm (the latest checkpoint is the last good one); 130 interrupted (a checkpoint was saved; --resume continues).\n\nDefaults below are the '${preset}' preset for --algo ${algo}; each algorithm has its own options (--algo NAME --help), and other presets change the defaults (--preset NAME --help). Flags are the fields of the algorithm's config in kebab-case; a --config file (JSON or YAML) takes the same names.`,
    defaults: { ...defaults, [taskKey]: defaults.task },
    examples: spec.examples,
    groups: [
      { title: 'Run:', keys: Object.keys(schema).filter((k) => runKeys.includes(k)) },
      { title: `Algorithm ${algo} (its config's fields):`, keys: Object.keys(entry.configSchema) },
      {
        title: `${spec.envId(spec.defaultTask).split('/')[0]} options:`,
        keys: Object.keys(spec.extraOptions ?? {}),
      },
    ],
  });
}

/** The error for a field that no schema of this run has, naming where it belongs if anywhere. */
export function notAnOption(
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
