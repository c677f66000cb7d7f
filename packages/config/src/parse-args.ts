import { OptionError } from './errors.js';
import { camel, suggestOption } from './names.js';
import type { OptionsSchema } from './schema.js';

/** What {@link parseArgs} read. */
export interface ParsedArgs {
  /**
   * The values given, by field name, as read (command-line strings, `true`/`false` for flags,
   * config-file values); {@link resolveOptions} converts and checks them.
   */
  explicit: Record<string, unknown>;
  /** Where each explicit value came from (`command line` or `config file PATH:`), for errors. */
  sources: Record<string, string>;
  /** Words that are not options (e.g. a sub-command). */
  positionals: string[];
  help: boolean;
  /** Path of the config file, if `--config` was given. */
  configPath?: string;
}

/**
 * Reads `--name value`, `--name=value`, `--flag`, `--no-flag` and `-h/--help` against `schema`.
 * An unknown option throws an `OptionError` naming it with the closest valid one. `--config FILE`
 * (JSON or YAML, read by `loadConfig`) may set any option under either spelling; the command line
 * wins. Values are checked later, once, by `resolveOptions`.
 */
export function parseArgs(
  argv: readonly string[],
  schema: OptionsSchema,
  loadConfig?: (path: string) => Record<string, unknown>,
): ParsedArgs {
  const known = Object.keys(schema);
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
        throw new OptionError(`unknown option ${arg}.${suggestOption(arg.slice(1), known)}`);
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
    if (!spec) throw new OptionError(`unknown option --${name}.${suggestOption(name, known)}`);
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
    cli[key] = value;
  }
  const explicit: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  if (configPath && loadConfig) {
    for (const [rawKey, v] of Object.entries(loadConfig(configPath))) {
      const key = camel(rawKey);
      if (!schema[key])
        throw new OptionError(
          `config file ${configPath}: unknown option "${rawKey}".${suggestOption(rawKey, known)}`,
        );
      explicit[key] = v;
      sources[key] = `config file ${configPath}:`;
    }
  }
  for (const [key, v] of Object.entries(cli)) {
    explicit[key] = v;
    sources[key] = 'command line';
  }
  return { explicit, sources, positionals, help, ...(configPath ? { configPath } : {}) };
}
