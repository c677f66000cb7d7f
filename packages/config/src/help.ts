import { kebab } from './names.js';
import type { OptionSpec, OptionsSchema } from './schema.js';

/** What {@link formatHelp} prints around the options. */
export interface HelpInfo {
  usage: string;
  summary: string;
  examples?: readonly string[];
  /** Defaults to show instead of the schema's (e.g. a preset's), by field. */
  defaults?: Readonly<Record<string, unknown>>;
  /** Headed groups of fields, in order; fields in none of them are listed under "Options:". */
  groups?: readonly { title: string; keys: readonly string[] }[];
}

function valueHint(spec: OptionSpec): string {
  switch (spec.type) {
    case 'boolean':
      return '';
    case 'enum':
      return ` <${spec.choices.join('|')}>`;
    case 'list':
      return ' <a,b,…>';
    case 'string':
      return ` <${spec.placeholder ?? 'text'}>`;
    default:
      return ` <${spec.type === 'integer' ? 'int' : 'num'}>`;
  }
}

function rangeHint(spec: OptionSpec): string {
  if (
    (spec.type === 'number' || spec.type === 'integer') &&
    (spec.min !== undefined || spec.max !== undefined)
  )
    return ` [${spec.min ?? '-∞'}, ${spec.max ?? '∞'}]`;
  if (spec.type === 'list' && spec.choices) return ` (from: ${spec.choices.join(', ')})`;
  return '';
}

function shownDefault(spec: OptionSpec, def: unknown): string {
  if (def === undefined) return spec.optional ? 'unset' : 'required';
  return Array.isArray(def) ? def.join(',') : String(def);
}

/** Help text listing every option with its type, range, default and meaning. */
export function formatHelp(schema: OptionsSchema, info: HelpInfo): string {
  const row = (key: string) => {
    const spec = schema[key]!;
    const def = info.defaults?.[key] ?? spec.default;
    return [
      `  --${kebab(key)}${valueHint(spec)}`,
      `${spec.description}${rangeHint(spec)} (default: ${shownDefault(spec, def)})`,
    ] as const;
  };
  const all = Object.keys(schema);
  const grouped = new Set((info.groups ?? []).flatMap((g) => g.keys));
  const sections: { title: string; keys: string[] }[] = [];
  const rest = all.filter((k) => !grouped.has(k));
  if (rest.length) sections.push({ title: 'Options:', keys: rest });
  for (const g of info.groups ?? []) {
    const keys = g.keys.filter((k) => k in schema);
    if (keys.length) sections.push({ title: g.title, keys });
  }
  const rows = sections.map((s) => ({ title: s.title, rows: s.keys.map(row) }));
  const flags = rows.flatMap((s) => s.rows.map((r) => r[0].length));
  const width = Math.min(40, Math.max(16, ...flags) + 2);
  const line = ([flag, text]: readonly [string, string]) =>
    flag.length >= width ? `${flag}\n${' '.repeat(width)}${text}` : `${flag.padEnd(width)}${text}`;
  const body = rows.flatMap((s, i) => [...(i > 0 ? [''] : []), s.title, ...s.rows.map(line)]);
  return [
    `Usage: ${info.usage}`,
    '',
    info.summary,
    '',
    ...body,
    '',
    `  --config <file>`.padEnd(width) +
      'JSON or YAML file setting any option above (command line wins)',
    `  -h, --help`.padEnd(width) + 'Show this help',
    ...(info.examples?.length ? ['', 'Examples:', ...info.examples.map((e) => `  ${e}`)] : []),
    '',
  ].join('\n');
}
