import {
  markResolved,
  OptionError,
  type OptionLayer,
  type ResolveOptions,
  resolveOptions,
} from '@poad/config';
import { etpo } from './etpo.js';
import { gigpo, grpo, rloo } from './group.js';
import { archer, ntpo, poad, twosome } from './ppo.js';
import type { AlgorithmConfigBase, AlgorithmEntry } from './types.js';

/** The algorithms this package ships, in the order `--help` lists them. */
const BUILT_IN = [poad, ntpo, twosome, archer, etpo, grpo, rloo, gigpo] as const;

type BuiltIn = (typeof BUILT_IN)[number];

/** The config of each built-in algorithm, by name (what `train()` types its options with). */
export type AlgorithmConfigs = {
  [E in BuiltIn as E['name']]: E extends AlgorithmEntry<infer C> ? C : never;
};

/** A built-in algorithm's name. */
export type AlgorithmName = keyof AlgorithmConfigs;

const entries = new Map<string, AlgorithmEntry>(
  BUILT_IN.map((e) => [e.name, e as unknown as AlgorithmEntry]),
);

/**
 * Adds an algorithm (or replaces one of the same name): from then on `--algo NAME`, `train({ algo:
 * NAME })`, `compare --algos` and the playground offer it on environments whose presets list it.
 */
export function registerAlgorithm<C extends AlgorithmConfigBase>(entry: AlgorithmEntry<C>): void {
  if (!/^[a-z][a-z0-9-]*$/.test(entry.name))
    throw new OptionError(
      `registerAlgorithm: name ${JSON.stringify(entry.name)} must be lowercase letters, digits and '-' (it is a --algo value)`,
    );
  if (!('seed' in entry.configSchema))
    throw new OptionError(
      `registerAlgorithm(${entry.name}): its configSchema needs a 'seed' field (every random choice of a run takes it)`,
    );
  if (typeof entry.Trainer !== 'function' || typeof entry.report !== 'function')
    throw new OptionError(
      `registerAlgorithm(${entry.name}): it needs a Trainer class (e.g. one extending TrainerBase of @poad/ppo) and a report function turning its iterations into the run loop's reports`,
    );
  entries.set(entry.name, entry as unknown as AlgorithmEntry);
}

/** The names of every registered algorithm. */
export function algorithmNames(): string[] {
  return [...entries.keys()];
}

/** The registered algorithm `name`; an unknown name throws an `OptionError` listing the known ones. */
export function algorithmEntry(name: string): AlgorithmEntry {
  const entry = entries.get(name);
  if (!entry)
    throw new OptionError(
      `unknown algorithm ${JSON.stringify(name)}; choose one of: ${algorithmNames().join(', ')}`,
    );
  return entry;
}

/**
 * An algorithm's config without a run: its schema's defaults, `layers` (e.g. a preset) and
 * `explicit` values, the entry's fixed fields and its rules across fields, checked once and marked
 * resolved (its trainer takes it as it is). A run resolves its config with the run's other options
 * instead (`resolveRun`); this serves code without a run, such as a browser session or an agent
 * built on its own.
 */
export function algorithmConfig<C extends AlgorithmConfigBase = AlgorithmConfigBase>(
  entry: AlgorithmEntry<C>,
  explicit: Readonly<Record<string, unknown>> = {},
  layers: readonly OptionLayer[] = [],
  how: Omit<ResolveOptions, 'layers'> = { where: 'config', naming: 'field' },
): C {
  const fields = resolveOptions(entry.configSchema, explicit, { ...how, layers });
  const config = { ...entry.fixed, ...fields } as unknown as C;
  entry.check?.(config);
  return markResolved(config) as C;
}
