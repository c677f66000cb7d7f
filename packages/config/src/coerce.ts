import { OptionError } from './errors.js';
import { kebab } from './names.js';
import type { OptionSpec } from './schema.js';

/** How an error names a field: as its flag (`command line --lr: …`) or as a key (`config.lr: …`). */
export type Naming = 'flag' | 'field';

/** The name of field `key` read from `where`, as errors show it. */
export function fieldLabel(key: string, where: string, naming: Naming = 'flag'): string {
  return naming === 'field' ? `${where}.${key}` : `${where} --${kebab(key)}`;
}

/**
 * Converts and checks one value of field `key` (a command-line string, a config-file value or a
 * typed value given in code): the one place a value is validated. Throws an {@link OptionError}
 * naming the field (`where` says where the value came from) and what is valid.
 */
export function coerceOption(
  key: string,
  spec: OptionSpec,
  raw: unknown,
  where: string,
  naming: Naming = 'flag',
): unknown {
  const label = fieldLabel(key, where, naming);
  const fail = (reason: string): never => {
    throw new OptionError(`${label}: ${reason}`, { option: key, reason, label });
  };
  switch (spec.type) {
    case 'string':
      if (typeof raw !== 'string' || raw.length === 0)
        fail(`expected a non-empty string, got ${JSON.stringify(raw)}`);
      if (spec.pattern && !spec.pattern.test(raw as string))
        fail(
          `${JSON.stringify(raw)}: expected ${spec.expected ?? `a value matching ${spec.pattern}`}`,
        );
      return raw;
    case 'enum':
      if (typeof raw !== 'string' || !spec.choices.includes(raw))
        fail(`${JSON.stringify(raw)} is not one of: ${spec.choices.join(', ')}`);
      return raw;
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === '1' || raw === 'yes') return true;
      if (raw === 'false' || raw === '0' || raw === 'no') return false;
      return fail(`expected true or false, got ${JSON.stringify(raw)}`);
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
