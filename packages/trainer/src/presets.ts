import { OptionError } from '@poad/config';
import type { EnvPresets, PresetValues } from '@poad/envs-core';
import { algorithmEntry, algorithmNames } from './algorithms/registry.js';
import type { AlgorithmConfigBase } from './algorithms/types.js';
import type { AppSpec } from './app.js';

/** The registered algorithms an environment's presets offer, in the presets' order. */
export function offeredAlgorithms(spec: Pick<AppSpec, 'presets'>): string[] {
  const known = new Set(algorithmNames());
  return spec.presets.algorithms.filter((a) => known.has(a));
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
 * environment registered without presets): one preset, `small`, with the values tuned for the
 * embedded default model on short labelled actions (those of VirtualHome's `small`, docs/results.md:
 * 8 environments × 16 steps, 200 iterations, actor lr 5e-4, critic lr 1e-3, γ 0.95, 2 epochs of 4
 * minibatches, entropy bonus 1e-3), for every registered algorithm. Pass `presets` to `train()` for
 * others, e.g. an environment package's.
 */
export function defaultPresets(): EnvPresets {
  return {
    algorithms: algorithmNames(),
    default: 'small',
    presets: {
      small: {
        source: 'small: tuned for the embedded default model on short labelled actions',
        values: {
          envs: 8,
          envSteps: 25_600,
          numSteps: 16,
          lr: 5e-4,
          criticLr: 1e-3,
          gamma: 0.95,
          epochs: 2,
          numMinibatches: 4,
          gradAccumulation: 1,
          entropyCoef: 1e-3,
        },
        byAlgorithm: {
          grpo: { numSteps: 32, groups: 2, groupSize: 4 },
          rloo: { numSteps: 32, groups: 2, groupSize: 4 },
          gigpo: { numSteps: 32, groups: 2, groupSize: 4 },
        },
      },
    },
  };
}

/**
 * The config and size of a run of `algo` under an environment's preset, with `explicit` fields
 * over it (checked once by the algorithm's schema): what a run needs without its run directory,
 * e.g. in a browser. Preset fields the algorithm's config does not have are not its own (ETPO has
 * no entropy bonus) and are left out.
 */
export function presetRun(
  presets: EnvPresets,
  algo: string,
  explicit: Readonly<Record<string, unknown>> = {},
  preset: string = presets.default,
): { envs: number; envSteps: number; config: AlgorithmConfigBase } {
  if (!presets.algorithms.includes(algo))
    throw new OptionError(
      `algo: ${JSON.stringify(algo)} is not offered here; choose one of: ${presets.algorithms.join(', ')}`,
    );
  const entry = algorithmEntry(algo);
  const values = presetValues(presets, preset, algo);
  const own = Object.fromEntries(Object.entries(values).filter(([k]) => k in entry.configSchema));
  const config = entry.resolveConfig(explicit, {
    layers: [{ name: `preset ${preset}`, values: own }],
    where: 'settings',
    naming: 'field',
  });
  const envs = entry.runOptions?.(config).envs ?? values.envs;
  return { envs: Number(envs), envSteps: Number(values.envSteps), config };
}
