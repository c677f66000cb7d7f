/**
 * One command-line / config-file option. Names are camelCase here and kebab-case on the CLI.
 * An option without a default is required unless it is marked `optional` (then it may stay
 * undefined).
 */
export type OptionSpec = OptionKind & { optional?: boolean };

type OptionKind =
  | { type: 'string'; description: string; default?: string; placeholder?: string }
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

export type OptionsSchema = Record<string, OptionSpec>;

type BaseValue<S extends OptionSpec> = S extends { type: 'string' | 'enum' }
  ? string
  : S extends { type: 'number' | 'integer' }
    ? number
    : S extends { type: 'boolean' }
      ? boolean
      : readonly string[];

type ValueOf<S extends OptionSpec> = S extends { optional: true }
  ? BaseValue<S> | undefined
  : BaseValue<S>;

export type OptionValues<T extends OptionsSchema> = { [K in keyof T]: ValueOf<T[K]> };

/** Bad command-line or config input; the message says what is valid. Thrown before any work starts. */
export class OptionError extends Error {
  override readonly name = 'OptionError';
}

export const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const camel = (s: string) => s.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [
    i,
    ...new Array<number>(b.length).fill(0),
  ]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(
        d[i - 1]![j]! + 1,
        d[i]![j - 1]! + 1,
        d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
  }
  return d[a.length]![b.length]!;
}

function suggest(name: string, schema: OptionsSchema): string {
  const names = Object.keys(schema).map(kebab);
  const best = names.map((n) => [n, distance(name, n)] as const).sort((x, y) => x[1] - y[1])[0];
  const hint = best && best[1] <= 3 ? ` Did you mean --${best[0]}?` : '';
  return `${hint} Valid options: ${names.map((n) => `--${n}`).join(', ')} (see --help).`;
}

/** Converts and checks one raw value (a CLI string or a config-file value). */
export function coerceOption(key: string, spec: OptionSpec, raw: unknown, where: string): unknown {
  const flag = `--${kebab(key)}`;
  const fail = (what: string): never => {
    throw new OptionError(`${where} ${flag}: ${what}`);
  };
  switch (spec.type) {
    case 'string':
      if (typeof raw !== 'string' || raw.length === 0)
        fail(`expected a non-empty string, got ${JSON.stringify(raw)}`);
      return raw;
    case 'enum': {
      if (typeof raw !== 'string' || !spec.choices.includes(raw)) {
        fail(`${JSON.stringify(raw)} is not one of: ${spec.choices.join(', ')}`);
      }
      return raw;
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === '1' || raw === 'yes') return true;
      if (raw === 'false' || raw === '0' || raw === 'no') return false;
      return fail(`expected true or false, got ${JSON.stringify(raw)}`);
    }
    case 'number':
    case 'integer': {
      const x =
        typeof raw === 'number'
          ? raw
          : typeof raw === 'string' && raw.trim() !== ''
            ? Number(raw)
            : Number.NaN;
      if (!Number.isFinite(x)) fail(`expected a number, got ${JSON.stringify(raw)}`);
      if (spec.type === 'integer' && !Number.isInteger(x)) fail(`expected an integer, got ${x}`);
      if (spec.min !== undefined && x < spec.min) fail(`${x} is below the minimum ${spec.min}`);
      if (spec.max !== undefined && x > spec.max) fail(`${x} is above the maximum ${spec.max}`);
      return x;
    }
    case 'list': {
      const items = Array.isArray(raw)
        ? raw.map(String)
        : typeof raw === 'string'
          ? raw
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : fail(`expected a comma-separated list, got ${JSON.stringify(raw)}`);
      if (items.length === 0) fail('expected at least one item');
      if (spec.choices) {
        const bad = items.filter((i) => !spec.choices!.includes(i));
        if (bad.length)
          fail(`${bad.join(', ')} not allowed; choose from: ${spec.choices.join(', ')}`);
      }
      return items;
    }
  }
}

export interface ParsedArgs {
  /** Values given explicitly (config file, then command line), already checked. */
  explicit: Record<string, unknown>;
  /** Words that are not options (e.g. a sub-command). */
  positionals: string[];
  help: boolean;
  /** Path of the config file, if `--config` was given. */
  configPath?: string;
}

/**
 * Parses `--name value`, `--name=value`, `--flag`, `--no-flag` and `-h/--help` against the
 * schema. Unknown options and invalid values throw `OptionError` naming the option and the
 * valid choices. `--config FILE` (JSON or YAML) may set any option; the command line wins.
 */
export function parseArgs(
  argv: readonly string[],
  schema: OptionsSchema,
  loadConfig?: (path: string) => Record<string, unknown>,
): ParsedArgs {
  const cli: Record<string, unknown> = {};
  const positionals: string[] = [];
  let help = false;
  let configPath: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      if (arg.startsWith('-') && arg.length > 1 && !/^-\d/.test(arg)) {
        throw new OptionError(`unknown option ${arg}.${suggest(arg.slice(1), schema)}`);
      }
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    let name = arg.slice(2, eq < 0 ? undefined : eq);
    let value: string | boolean | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
    if (name === 'config') {
      configPath = value ?? argv[++i];
      if (!configPath) throw new OptionError('--config needs a file path (JSON or YAML)');
      continue;
    }
    let key = camel(name);
    if (
      !(key in schema) &&
      name.startsWith('no-') &&
      schema[camel(name.slice(3))]?.type === 'boolean'
    ) {
      name = name.slice(3);
      key = camel(name);
      value = false;
    }
    const spec = schema[key];
    if (!spec) throw new OptionError(`unknown option --${name}.${suggest(name, schema)}`);
    if (value === undefined) {
      if (spec.type === 'boolean') value = true;
      else {
        const next = argv[i + 1];
        // `--extra "--envs 4"`: an argument with a space cannot be an option name, so it is a value.
        if (next === undefined || (next.startsWith('--') && next.length > 2 && !/\s/.test(next))) {
          throw new OptionError(
            `--${name} needs a value (${spec.description}); for a value that starts with --, write --${name}=VALUE`,
          );
        }
        value = next;
        i++;
      }
    }
    cli[key] = coerceOption(key, spec, value, 'command line');
  }
  const explicit: Record<string, unknown> = {};
  if (configPath && loadConfig) {
    const fromFile = loadConfig(configPath);
    for (const [rawKey, v] of Object.entries(fromFile)) {
      const key = camel(rawKey);
      const spec = schema[key];
      if (!spec)
        throw new OptionError(
          `config file ${configPath}: unknown option "${rawKey}".${suggest(kebab(key), schema)}`,
        );
      explicit[key] = coerceOption(key, spec, v, `config file ${configPath}:`);
    }
  }
  Object.assign(explicit, cli);
  return { explicit, positionals, help, ...(configPath ? { configPath } : {}) };
}

/**
 * Resolves the final values: schema defaults < `layered` defaults (e.g. per-algorithm presets,
 * computed from the explicit values) < explicit values. Every option ends with a value.
 */
export function resolveOptions<T extends OptionsSchema>(
  schema: T,
  explicit: Record<string, unknown>,
  layered?: (explicit: Record<string, unknown>) => Record<string, unknown>,
): OptionValues<T> {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(schema))
    if (spec.default !== undefined) out[key] = spec.default;
  if (layered) {
    for (const [key, v] of Object.entries(layered({ ...out, ...explicit }))) {
      const spec = schema[key];
      if (spec && v !== undefined) out[key] = coerceOption(key, spec, v, 'preset');
    }
  }
  Object.assign(out, explicit);
  const missing = Object.keys(schema).filter((k) => out[k] === undefined && !schema[k]!.optional);
  if (missing.length) {
    throw new OptionError(
      `missing required option(s): ${missing.map((k) => `--${kebab(k)}`).join(', ')}`,
    );
  }
  return out as OptionValues<T>;
}

/** Help text listing every option with its type, default and meaning. */
export function formatHelp(
  schema: OptionsSchema,
  info: { usage: string; summary: string; examples?: string[]; defaults?: Record<string, unknown> },
): string {
  const rows = Object.entries(schema).map(([key, spec]) => {
    const value =
      spec.type === 'boolean'
        ? ''
        : spec.type === 'enum'
          ? ` <${spec.choices.join('|')}>`
          : spec.type === 'list'
            ? ` <a,b,…>`
            : spec.type === 'string'
              ? ` <${spec.placeholder ?? 'text'}>`
              : ` <${spec.type === 'integer' ? 'int' : 'num'}>`;
    const def = info.defaults?.[key] ?? spec.default;
    const range =
      (spec.type === 'number' || spec.type === 'integer') &&
      (spec.min !== undefined || spec.max !== undefined)
        ? ` [${spec.min ?? '-∞'}, ${spec.max ?? '∞'}]`
        : spec.type === 'list' && spec.choices
          ? ` (from: ${spec.choices.join(', ')})`
          : '';
    const shown =
      def === undefined
        ? spec.optional
          ? 'unset'
          : 'required'
        : Array.isArray(def)
          ? def.join(',')
          : String(def);
    return [
      `  --${kebab(key)}${value}`,
      `${spec.description}${range} (default: ${shown})`,
    ] as const;
  });
  const width = Math.min(40, Math.max(...rows.map((r) => r[0].length)) + 2);
  const lines = rows.map(([flag, text]) =>
    flag.length >= width ? `${flag}\n${' '.repeat(width)}${text}` : `${flag.padEnd(width)}${text}`,
  );
  return [
    `Usage: ${info.usage}`,
    '',
    info.summary,
    '',
    'Options:',
    ...lines,
    `  --config <file>`.padEnd(width) +
      'JSON or YAML file setting any option above (command line wins)',
    `  -h, --help`.padEnd(width) + 'Show this help',
    ...(info.examples?.length ? ['', 'Examples:', ...info.examples.map((e) => `  ${e}`)] : []),
    '',
  ].join('\n');
}
