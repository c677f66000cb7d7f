import { OptionError } from '@poad/config';
import {
  type EnvPresets,
  type EnvTraits,
  type PresetValues,
  SMALL_MODEL_VALUES,
} from '@poad/envs-core';
import { algorithmConfig, algorithmEntry, algorithmNames } from './algorithms/registry.js';
import type { AlgorithmConfigBase, AlgorithmEntry } from './algorithms/types.js';
import type { AppSpec } from './app.js';

/**
 * Why `entry` cannot train on an environment with `traits`, or null when it can: an algorithm
 * states what it needs (`needs`), an environment what it offers (`traits`).
 */
export function unsupportedReason(entry: AlgorithmEntry, traits: EnvTraits): string | null {
  if (entry.needs?.labels && traits.actions !== 'labels')
    return `${entry.name} needs the valid action labels of every step, and this environment's actions are open text`;
  if (entry.needs?.seededResets && !traits.seededResets)
    return `${entry.name} plays each group of episodes from one start state and needs resets from a seed, which this environment does not offer`;
  return null;
}

/** The registered algorithms that can train on an environment (its presets' traits), in registry order. */
export function offeredAlgorithms(spec: Pick<AppSpec, 'presets'>): string[] {
  return algorithmNames().filter(
    (a) => unsupportedReason(algorithmEntry(a), spec.presets.traits) === null,
  );
}

/**
 * The entry of `algo` for a run of `spec`: an unknown name, or an algorithm the environment does
 * not offer what it needs, is refused with the reason and the algorithms it offers.
 */
export function offeredEntry(
  spec: Pick<AppSpec, 'presets' | 'envId' | 'defaultTask'>,
  algo: string,
  how: { sources?: Readonly<Record<string, string>>; where?: string; naming?: 'flag' | 'field' },
): AlgorithmEntry {
  const where = how.sources?.algo ?? how.where ?? 'option';
  const label = how.naming === 'field' ? `${where}.algo` : `${where} --algo`;
  const offered = offeredAlgorithms(spec);
  const env = spec.envId(spec.defaultTask).split('/')[0];
  if (!algorithmNames().includes(algo))
    throw new OptionError(
      `${label}: ${JSON.stringify(algo)} is not offered for ${env} (no such algorithm is registered); choose one of: ${offered.join(', ')}`,
      { option: 'algo', reason: 'unknown algorithm', label },
    );
  const why = unsupportedReason(algorithmEntry(algo), spec.presets.traits);
  if (why)
    throw new OptionError(
      `${label}: ${JSON.stringify(algo)} is not offered for ${env}: ${why}; choose one of: ${offered.join(', ')}`,
      { option: 'algo', reason: why, label },
    );
  return algorithmEntry(algo);
}

/** The values preset `name` of `presets` gives algorithm `algo` (its row, then what it changes). */
export function presetValues(presets: EnvPresets, name: string, algo: string): PresetValues {
  const p = presets.presets[name];
  if (!p)
    throw new OptionError(
      `unknown preset ${JSON.stringify(name)}; this environment has: ${Object.keys(presets.presets).join(', ')}`,
    );
  return { ...p.values, ...(p.byAlgorithm?.[algo] ?? {}) };
}

/**
 * The presets `train()` gives an environment that brings none (a factory, or a registered
 * environment registered without presets): labelled actions (or open text: `actions`) with seeded
 * resets, and one preset,
 * `small`, of the project's values for the embedded default model (`SMALL_MODEL_VALUES` of
 * `@poad/envs-core`), with the group-relative algorithms' groups as VirtualHome's. Pass `presets`
 * to `train()` for others, e.g. an environment package's.
 */
export function defaultPresets(actions: EnvTraits['actions'] = 'labels'): EnvPresets {
  const groups = { numSteps: 32, groups: 2, groupSize: 4 };
  return {
    traits: { actions, seededResets: true },
    default: 'small',
    presets: {
      small: {
        source: 'small: tuned for the embedded default model on short labelled actions',
        values: SMALL_MODEL_VALUES,
        byAlgorithm: { grpo: groups, rloo: groups, gigpo: groups },
      },
    },
  };
}

/**
 * The config and size of a run of `algo` under an environment's preset, with `explicit` fields
 * over it, checked once as a run's are: what a run needs without its run directory, e.g. in a
 * browser. Preset fields the algorithm's config does not have are not its own (ETPO has no
 * entropy bonus) and are left out.
 */
export function presetRun(
  presets: EnvPresets,
  algo: string,
  explicit: Readonly<Record<string, unknown>> = {},
  preset: string = presets.default,
): { envs: number; envSteps: number; config: AlgorithmConfigBase } {
  const entry = offeredEntry({ presets, envId: () => 'this environment', defaultTask: '' }, algo, {
    where: 'settings',
    naming: 'field',
  });
  const values = presetValues(presets, preset, algo);
  const own = Object.fromEntries(Object.entries(values).filter(([k]) => k in entry.configSchema));
  const config = algorithmConfig(entry, explicit, [{ name: `preset ${preset}`, values: own }], {
    where: 'settings',
    naming: 'field',
  });
  const envs = entry.runOptions?.(config).envs ?? values.envs;
  return { envs: Number(envs), envSteps: Number(values.envSteps), config };
}
