import type { OptionSpec } from '@poad/config';
import type { EnvPresets } from '@poad/envs-core';
import {
  type AlgorithmEntry,
  type AppSpec,
  offeredAlgorithms,
  presetRun,
  RUN_OPTIONS,
} from '@poad/trainer';
import { familyOf } from './environments.js';

/** One column of a preset table: a preset of an environment that offers the algorithm. */
export interface PresetColumn {
  /** The environment family, e.g. `virtualhome`. */
  readonly family: string;
  /** The npm script that trains it, e.g. `train:virtualhome`. */
  readonly command: string;
  readonly preset: string;
  readonly presets: EnvPresets;
}

/** A value as the tables print it: numbers as a flag takes them, strings in code, unset as "unset". */
export function formatValue(value: unknown): string {
  if (value === undefined || value === null) return 'unset';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return String(value);
    const abs = Math.abs(value);
    if (value !== 0 && (abs < 1e-3 || abs >= 1e6)) return value.toExponential().replace('e+', 'e');
    return String(value);
  }
  if (typeof value === 'string') return `\`${value}\``;
  if (Array.isArray(value)) return value.length ? value.map(formatValue).join(', ') : 'none';
  return String(value);
}

/** A field's type and range, e.g. "number in [0, 1]", "integer ≥ 1", "`words`, `tokens`". */
export function formatType(spec: OptionSpec): string {
  switch (spec.type) {
    case 'number':
    case 'integer': {
      const { min, max } = spec;
      if (min !== undefined && max !== undefined)
        return `${spec.type} in [${formatValue(min)}, ${formatValue(max)}]`;
      if (min !== undefined) return `${spec.type} ≥ ${formatValue(min)}`;
      if (max !== undefined) return `${spec.type} ≤ ${formatValue(max)}`;
      return spec.type;
    }
    case 'enum':
      return spec.choices.map((c) => `\`${c}\``).join(', ');
    case 'list':
      return spec.choices ? `list of ${spec.choices.map((c) => `\`${c}\``).join(', ')}` : 'list';
    case 'string':
      return spec.expected ?? 'string';
    default:
      return spec.type;
  }
}

/** Text for a table cell: `|` escaped, whitespace runs as one space. */
function cell(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();
}

/** A field name as its flag: `numMinibatches` → `--num-minibatches`. */
export function flagOf(field: string): string {
  return `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The presets of `apps` that offer algorithm `name`, one column each, in the apps' order. */
export function presetColumns(name: string, apps: readonly AppSpec[]): PresetColumn[] {
  return apps
    .filter((app) => offeredAlgorithms(app).includes(name))
    .flatMap((app) =>
      Object.keys(app.presets.presets).map((preset) => ({
        family: familyOf(app),
        command: app.command,
        preset,
        presets: app.presets,
      })),
    );
}

/** The values preset `column` sets for algorithm `name`: its values, then its algorithm's own. */
function presetValues(column: PresetColumn, name: string): Readonly<Record<string, unknown>> {
  const p = column.presets.presets[column.preset]!;
  return { ...p.values, ...(p.byAlgorithm?.[name] ?? {}) };
}

/**
 * The table of an algorithm's config fields: each field's flag, type and range, schema default
 * and meaning, from its `configSchema`.
 */
export function fieldsTable(entry: AlgorithmEntry): string {
  const rows = Object.entries(entry.configSchema).map(([field, spec]) => [
    `\`${field}\``,
    `\`${flagOf(field)}\``,
    cell(formatType(spec)),
    formatValue(spec.default),
    cell(spec.description),
  ]);
  return table(['field', 'flag', 'type', 'default', 'meaning'], rows);
}

/**
 * The table of what a run of the algorithm starts from under each preset that offers it: the
 * run options the presets set (environments, env steps, model, evaluation episodes), then every
 * config field as the algorithm resolves it under that preset (`presetRun`). A value the preset
 * sets is in bold; the others are the schema's defaults.
 */
export function presetTable(entry: AlgorithmEntry, columns: readonly PresetColumn[]): string {
  const runs = columns.map((c) => presetRun(c.presets, entry.name, {}, c.preset));
  const set = columns.map((c) => presetValues(c, entry.name));
  const runKeys = Object.keys(RUN_OPTIONS).filter(
    (k) =>
      k === 'envs' ||
      k === 'envSteps' ||
      set.some((values) => k in values && !(k in entry.configSchema)),
  );
  const rows: string[][] = [];
  for (const key of runKeys) {
    const spec = RUN_OPTIONS[key as keyof typeof RUN_OPTIONS] as OptionSpec;
    rows.push([
      `\`${key}\` (run option)`,
      formatValue(spec.default),
      ...columns.map((_, i) => {
        const run = runs[i]!;
        const value = key === 'envs' ? run.envs : key === 'envSteps' ? run.envSteps : set[i]![key];
        const fromPreset = key in set[i]! || (key === 'envs' && entry.runOptions !== undefined);
        return fromPreset ? `**${formatValue(value)}**` : formatValue(value ?? spec.default);
      }),
    ]);
  }
  for (const [field, spec] of Object.entries(entry.configSchema)) {
    rows.push([
      `\`${field}\``,
      formatValue(spec.default),
      ...columns.map((_, i) => {
        const value = formatValue((runs[i]!.config as unknown as Record<string, unknown>)[field]);
        return field in set[i]! ? `**${value}**` : value;
      }),
    ]);
  }
  const header = [
    'field',
    'schema default',
    ...columns.map(
      (c) => `${c.family} \`${c.preset}\`${c.preset === c.presets.default ? ' (default)' : ''}`,
    ),
  ];
  return table(header, rows);
}

/** Both tables of an algorithm, with the text that introduces them. */
export function configTables(entry: AlgorithmEntry, apps: readonly AppSpec[]): string {
  const columns = presetColumns(entry.name, apps);
  const commands = [...new Set(columns.map((c) => `\`npm run ${c.command}\``))];
  const parts = [
    `Every field of \`--algo ${entry.name}\` (\`algorithmEntry('${entry.name}').configSchema\` of \`@poad/trainer\`). On a command line a field is its flag; in \`--config FILE\`, \`train()\` and a run's \`config.json\` it is the field name.`,
    '',
    fieldsTable(entry),
    '',
  ];
  if (columns.length === 0) {
    parts.push(
      `No environment's presets offer \`${entry.name}\`; a run takes the schema defaults above.`,
    );
  } else {
    parts.push(
      `What a run starts from under each preset that offers \`${entry.name}\` (${commands.join(', ')}; \`--preset NAME\` picks one). **Bold**: set by the preset; the rest are the schema's defaults. An explicit flag or \`--config\` value overrides both.`,
      '',
      presetTable(entry, columns),
    );
  }
  return parts.join('\n');
}
