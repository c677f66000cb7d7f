import { coerceOption, fieldLabel, type Naming } from './coerce.js';
import { OptionError } from './errors.js';
import { kebab, suggestOption } from './names.js';
import type { OptionsSchema, OptionValues } from './schema.js';

/** Defaults layered between a schema's own and the explicit values (e.g. a preset). */
export interface OptionLayer {
  /** Names the layer in errors, e.g. `preset small`. */
  readonly name: string;
  readonly values: Readonly<Record<string, unknown>>;
}

/** How {@link resolveOptions} reads its inputs. */
export interface ResolveOptions {
  /** Defaults above the schema's, lowest first; explicit values win over all of them. */
  readonly layers?: readonly OptionLayer[];
  /** Where each explicit value came from, by field (e.g. `command line`), for errors. */
  readonly sources?: Readonly<Record<string, string>>;
  /** Where explicit values came from when `sources` does not say (default `option`). */
  readonly where?: string;
  /** How errors name a field: `--flag` (default) or `where.field`. */
  readonly naming?: Naming;
}

/**
 * The final values of a schema: its defaults < each layer < `explicit`. Every value is converted
 * and checked here, once, by {@link coerceOption} (explicit values may be command-line strings
 * or typed values); an unknown name, a bad value or a missing required field throws an
 * `OptionError` naming it. Explicit `undefined` means unset.
 */
export function resolveOptions<T extends OptionsSchema>(
  schema: T,
  explicit: Readonly<Record<string, unknown>>,
  options: ResolveOptions = {},
): OptionValues<T> {
  const naming = options.naming ?? 'flag';
  const where = options.where ?? 'option';
  const known = Object.keys(schema);
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(schema))
    if (spec.default !== undefined) out[key] = spec.default;
  const take = (values: Readonly<Record<string, unknown>>, from: (key: string) => string) => {
    for (const [key, raw] of Object.entries(values)) {
      if (raw === undefined) continue;
      const spec = schema[key];
      if (!spec) {
        const label = fieldLabel(key, from(key), naming);
        const hint =
          naming === 'field'
            ? ` Valid fields: ${known.join(', ')}.`
            : suggestOption(kebab(key), known);
        throw new OptionError(`${label}: unknown option.${hint}`, {
          option: key,
          reason: `unknown option.${hint}`,
          label,
        });
      }
      out[key] = coerceOption(key, spec, raw, from(key), naming);
    }
  };
  for (const layer of options.layers ?? []) take(layer.values, () => layer.name);
  take(explicit, (key) => options.sources?.[key] ?? where);
  const missing = known.filter((k) => out[k] === undefined && !schema[k]!.optional);
  if (missing.length) {
    const names = missing.map((k) => (naming === 'field' ? k : `--${kebab(k)}`)).join(', ');
    throw new OptionError(`missing required option(s): ${names}`, {
      option: missing[0]!,
      reason: 'required',
    });
  }
  return out as OptionValues<T>;
}

/** Every config a resolver returned, shared by all of them (see {@link markResolved}). */
const RESOLVED = new WeakSet<object>();

/**
 * Freezes a config whose every field was checked (by {@link resolveOptions} and the cross-field
 * rules) and marks it as resolved, so that every {@link configResolver} returns it unchanged:
 * code handed it, e.g. a trainer's constructor, checks nothing again. For a caller that resolved
 * the fields itself, as a training run does for its algorithm's config.
 */
export function markResolved<T extends object>(config: T): Readonly<T> {
  const out = Object.isFrozen(config) ? config : Object.freeze(config);
  RESOLVED.add(out);
  return out;
}

/** Whether `config` was returned by a resolver or {@link markResolved}. */
export function isResolved(config: unknown): boolean {
  return typeof config === 'object' && config !== null && RESOLVED.has(config);
}

/** What {@link configResolver} needs beside the schema. */
export interface ConfigResolverSpec<T extends OptionsSchema> {
  /** The error of an invalid field, from its label (e.g. `config.lr`) and the reason. */
  readonly error: (label: string, reason: string) => Error;
  /** Rules across fields, run after every field was checked; throws the package's own error. */
  readonly check?: (config: OptionValues<T>) => void;
}

/**
 * One algorithm's `resolveConfig`: fills unset fields from the schema's defaults (below them,
 * `options.layers`, e.g. a preset), checks every field once (errors name it as `config.field`
 * unless `options` says otherwise), then `spec.check`, and freezes the result. A config any
 * resolver returned (or {@link markResolved} marked) passes through unchanged, so code handed a
 * resolved config checks nothing again.
 */
export function configResolver<T extends OptionsSchema>(
  schema: T,
  spec: ConfigResolverSpec<T>,
): (overrides?: Partial<OptionValues<T>>, options?: ResolveOptions) => OptionValues<T> {
  return (overrides = {}, options = {}) => {
    if (RESOLVED.has(overrides)) return overrides as OptionValues<T>;
    let config: OptionValues<T>;
    try {
      config = resolveOptions(schema, overrides, { where: 'config', naming: 'field', ...options });
    } catch (e) {
      if (e instanceof OptionError && e.option !== undefined)
        throw spec.error(e.label ?? `config.${e.option}`, e.reason);
      throw e;
    }
    spec.check?.(config);
    return markResolved(config);
  };
}
