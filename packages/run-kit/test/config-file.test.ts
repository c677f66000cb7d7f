import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineSchema, OptionError, resolveOptions } from '@poad/config';
import { tempDirs } from '@poad/dev-kit';
import { describe, expect, it } from 'vitest';
import { parseArgsWithConfig, parseConfigText } from '../src/files.js';

const schema = defineSchema({
  algo: { type: 'enum', choices: ['poad', 'twosome'], default: 'poad', description: 'Algorithm' },
  seed: { type: 'integer', default: 1, min: 0, description: 'Random seed' },
  numMinibatches: { type: 'integer', default: 4, min: 1, description: 'Minibatches' },
});

const tmp = tempDirs('run-kit-config-');

describe('parseArgsWithConfig', () => {
  it('reads a YAML or JSON file given with --config; the command line wins', async () => {
    const dir = tmp();
    const yaml = join(dir, 'c.yaml');
    writeFileSync(yaml, 'algo: twosome\nnum-minibatches: 2\nseed: 4\n');
    const p = await parseArgsWithConfig(['--config', yaml, '--seed', '9'], schema);
    expect(resolveOptions(schema, p.explicit, { sources: p.sources })).toEqual({
      algo: 'twosome',
      numMinibatches: 2,
      seed: 9,
    });
    const json = join(dir, 'c.json');
    writeFileSync(json, '{"numMinibatches": 0}');
    const q = await parseArgsWithConfig([`--config=${json}`], schema);
    expect(q.configPath).toBe(json);
    expect(() => resolveOptions(schema, q.explicit, { sources: q.sources })).toThrow(
      /config file .*c\.json: --num-minibatches: 0 is below the minimum 1/,
    );
  });

  it('names a file it cannot read or parse', async () => {
    await expect(parseArgsWithConfig(['--config', '/no/such.yaml'], schema)).rejects.toThrow(
      /--config \/no\/such\.yaml: cannot read the file/,
    );
    expect(() => parseConfigText('[1,2]', 'x.json')).toThrow(/object/);
    expect(() => parseConfigText('{', 'x.json')).toThrow(OptionError);
    expect(() => parseConfigText('{', 'x.json')).toThrow(/not valid JSON/);
    expect(() => parseConfigText('a: [', 'x.yml')).toThrow(/not valid YAML/);
    const dir = tmp();
    writeFileSync(join(dir, 'u.json'), '{"sedes": 7}');
    await expect(parseArgsWithConfig(['--config', join(dir, 'u.json')], schema)).rejects.toThrow(
      /unknown option "sedes"/,
    );
  });
});
