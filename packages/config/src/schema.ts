/**
 * One field of a schema: its type, default, range and meaning. Field names are camelCase; on a
 * command line a field is the flag of the same name in kebab-case (`numMinibatches` →
 * `--num-minibatches`), and in a config file either spelling.
 */
export type OptionSpec = OptionKind & {
  /** May stay unset (undefined) when it has no default; otherwise a value is required. */
  optional?: boolean;
};

type OptionKind =
  | {
      type: 'string';
      description: string;
      default?: string;
      /** The value's name in `--help`, e.g. `dir`. */
      placeholder?: string;
      /** Accepted values; others are refused with `expected`. */
      pattern?: RegExp;
      /** What a value must look like, for the error of a value `pattern` refuses. */
      expected?: string;
    }
  | {
      type: 'number' | 'integer';
      description: string;
      default?: number;
      min?: number;
      max?: number;
    }
  | { type: 'boolean'; description: string; default?: boolean }
  | { type: 'enum'; description: string; choices: readonly string[]; default?: string }
  | {
      type: 'list';
      description: string;
      default?: readonly string[];
      /** Allowed items; any string when absent. */
      choices?: readonly string[];
    };

/** A set of fields by name. */
export type OptionsSchema = Record<string, OptionSpec>;

type BaseValue<S extends OptionSpec> = S extends { type: 'enum'; choices: readonly (infer C)[] }
  ? C
  : S extends { type: 'string' }
    ? string
    : S extends { type: 'number' | 'integer' }
      ? number
      : S extends { type: 'boolean' }
        ? boolean
        : S extends { type: 'list'; choices: readonly (infer C)[] }
          ? readonly C[]
          : readonly string[];

type ValueOf<S extends OptionSpec> = S extends { optional: true }
  ? BaseValue<S> | undefined
  : BaseValue<S>;

/**
 * The typed values of a schema: numbers for `number`/`integer`, the choices' union for `enum`
 * (when the schema was made with {@link defineSchema}), `undefined` allowed for optional fields.
 */
export type OptionValues<T extends OptionsSchema> = { -readonly [K in keyof T]: ValueOf<T[K]> };

/**
 * Returns `schema` as it is, typed with its literal choices, so that {@link OptionValues} of it
 * gives enum fields their union type (`'poad' | 'ntpo'`, not `string`).
 *
 * @example
 * const schema = defineSchema({
 *   lr: { type: 'number', default: 1e-3, min: 0, max: 1, description: 'Learning rate' },
 *   optimizer: { type: 'enum', choices: ['adamw', 'lion'], default: 'adamw', description: 'Optimiser' },
 * });
 * type Config = OptionValues<typeof schema>; // { lr: number; optimizer: 'adamw' | 'lion' }
 */
export function defineSchema<const S extends OptionsSchema>(schema: S): S {
  return schema;
}

/** The fields `keys` of `schema`, in that order (for a config that shares some of another's). */
export function pickSchema<S extends OptionsSchema, K extends keyof S & string>(
  schema: S,
  keys: readonly K[],
): Pick<S, K> {
  const out = {} as Pick<S, K>;
  for (const k of keys) {
    if (!(k in schema)) throw new RangeError(`pickSchema: the schema has no field ${k}`);
    out[k] = schema[k];
  }
  return out;
}

/** The defaults of a schema's fields (fields without one are left out). */
export function defaultsOf<S extends OptionsSchema>(schema: S): Partial<OptionValues<S>> {
  const out: Record<string, unknown> = {};
  for (const [k, spec] of Object.entries(schema))
    if (spec.default !== undefined) out[k] = spec.default;
  return out as Partial<OptionValues<S>>;
}
