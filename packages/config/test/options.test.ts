import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  configResolver,
  defaultsOf,
  defineSchema,
  formatHelp,
  OptionError,
  type OptionValues,
  parseArgs,
  pickSchema,
  resolveOptions,
} from '../src/index.js';

const schema = defineSchema({
  task: {
    type: 'enum',
    choices: ['food-preparation', 'entertainment'],
    default: 'food-preparation',
    description: 'Task',
  },
  algo: {
    type: 'enum',
    choices: ['poad', 'ntpo', 'twosome', 'archer'],
    default: 'poad',
    description: 'Algorithm',
  },
  seed: { type: 'integer', default: 1, min: 0, description: 'Random seed' },
  lr: { type: 'number', min: 0, description: 'Actor learning rate' },
  greedy: { type: 'boolean', default: false, description: 'Greedy actions' },
  algos: {
    type: 'list',
    choices: ['poad', 'ntpo', 'twosome'],
    default: ['poad'],
    description: 'Algorithms',
  },
  model: { type: 'string', default: 'default', description: 'Model folder', placeholder: 'dir' },
  normalise: {
    type: 'string',
    optional: true,
    pattern: /^(none|chunk:[1-9]\d*)$/,
    expected: 'none or chunk:N with N ≥ 1',
    description: 'Normalisation',
  },
});

const file = (values: Record<string, unknown>) => () => values;
const resolve = (argv: string[], load?: () => Record<string, unknown>) => {
  const p = parseArgs(argv, schema, load);
  return resolveOptions(schema, p.explicit, { sources: p.sources });
};

describe('parseArgs', () => {
  it('reads every syntax; values stay as given until resolved', () => {
    const p = parseArgs(
      ['train', '--task', 'entertainment', '--seed=3', '--greedy', '--algos', 'poad,ntpo'],
      schema,
    );
    expect(p.positionals).toEqual(['train']);
    expect(p.explicit).toEqual({
      task: 'entertainment',
      seed: '3',
      greedy: true,
      algos: 'poad,ntpo',
    });
    expect(p.sources.seed).toBe('command line');
    expect(parseArgs(['--no-greedy'], schema).explicit).toEqual({ greedy: false });
  });

  it('rejects unknown options with a suggestion and the valid list', () => {
    expect(() => parseArgs(['--sed', '2'], schema)).toThrow(OptionError);
    expect(() => parseArgs(['--sed', '2'], schema)).toThrow(/Did you mean --seed\?.*--task/);
    expect(() => parseArgs(['-x'], schema)).toThrow(/unknown option -x/);
    const long = defineSchema({ numMinibatches: { type: 'integer', description: 'n' } });
    expect(() => parseArgs(['--minibatches', '2'], long)).toThrow(
      /unknown option --minibatches\. Did you mean --num-minibatches\?/,
    );
  });

  it('needs a value after a non-boolean option', () => {
    expect(() => parseArgs(['--task'], schema)).toThrow(/needs a value/);
    expect(() => parseArgs(['--model', '--seed'], schema)).toThrow(/write --model=VALUE/);
    const p = parseArgs(['--model', '--odd dir', '--seed', '3'], schema);
    expect(p.explicit).toMatchObject({ model: '--odd dir', seed: '3' });
  });

  it('takes a config file under either spelling; the command line wins', () => {
    const p = parseArgs(
      ['--config', 'c.yaml', '--seed', '9'],
      schema,
      file({ seed: 7, algo: 'ntpo', lr: 0.5 }),
    );
    expect(p.explicit).toMatchObject({ seed: '9', algo: 'ntpo', lr: 0.5 });
    expect(p.sources).toMatchObject({ seed: 'command line', algo: 'config file c.yaml:' });
    expect(() => parseArgs(['--config', 'c.yaml'], schema, file({ 'max-iters': 3 }))).toThrow(
      /config file c\.yaml: unknown option "max-iters"/,
    );
  });
});

describe('resolveOptions', () => {
  it('converts and checks each value once, naming where it came from', () => {
    expect(resolve(['--seed', '3', '--lr', '1e-6', '--algos', 'poad,ntpo'])).toMatchObject({
      seed: 3,
      lr: 1e-6,
      algos: ['poad', 'ntpo'],
    });
    expect(() => resolve(['--task', 'cooking', '--lr', '1'])).toThrow(
      /command line --task: "cooking" is not one of: food-preparation, entertainment/,
    );
    expect(() => resolve(['--seed', '-1', '--lr', '1'])).toThrow(/below the minimum 0/);
    expect(() => resolve(['--seed', '1.5', '--lr', '1'])).toThrow(/integer/);
    expect(() => resolve(['--lr', 'fast'])).toThrow(/expected a number/);
    expect(() => resolve(['--lr', '1', '--algos', 'poad,dqn'])).toThrow(/dqn not allowed/);
    expect(() => resolve(['--config', 'c.yml'], file({ seed: 'lots', lr: 1 }))).toThrow(
      /config file c\.yml: --seed: expected a number/,
    );
  });

  it('refuses a string the pattern does not take, saying what it expects', () => {
    expect(resolve(['--lr', '1', '--normalise', 'chunk:4']).normalise).toBe('chunk:4');
    expect(() => resolve(['--lr', '1', '--normalise', 'chunk:0'])).toThrow(
      /--normalise: "chunk:0": expected none or chunk:N with N ≥ 1/,
    );
  });

  it('layers schema defaults < layers (in order) < explicit values', () => {
    const v = resolveOptions(
      schema,
      { seed: 9 },
      {
        layers: [
          { name: 'preset', values: { lr: 1e-6, seed: 4, greedy: true } },
          { name: 'algorithm', values: { lr: 2e-6 } },
        ],
      },
    );
    expect(v).toMatchObject({ seed: 9, lr: 2e-6, greedy: true, task: 'food-preparation' });
    expect(() =>
      resolveOptions(schema, {}, { layers: [{ name: 'preset small', values: { lr: -1 } }] }),
    ).toThrow(/preset small --lr: -1 is below the minimum 0/);
  });

  it('refuses unknown names, by flag or by field', () => {
    expect(() => resolveOptions(schema, { lr: 1, sed: 2 }, { where: 'train()' })).toThrow(
      /train\(\) --sed: unknown option\. Did you mean --seed\?/,
    );
    expect(() =>
      resolveOptions(schema, { lr: 1, sed: 2 }, { where: 'config', naming: 'field' }),
    ).toThrow(/config\.sed: unknown option\. Valid fields: task, algo, seed/);
    try {
      resolveOptions(schema, { lr: 2, seed: -3 }, { where: 'config', naming: 'field' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(OptionError);
      expect((e as OptionError).option).toBe('seed');
      expect((e as OptionError).reason).toBe('-3 is below the minimum 0');
      expect((e as OptionError).label).toBe('config.seed');
      expect((e as Error).message).toBe('config.seed: -3 is below the minimum 0');
    }
  });

  it('reports a missing required option; optional ones may stay unset', () => {
    expect(() => resolveOptions(schema, {})).toThrow(/missing required option\(s\): --lr/);
    const v = resolveOptions(schema, { lr: 1, normalise: undefined });
    expect(v.normalise).toBeUndefined();
  });

  it('gives typed values: enum unions, numbers, optional fields', () => {
    const v = resolveOptions(schema, { lr: 1 });
    expectTypeOf(v.algo).toEqualTypeOf<'poad' | 'ntpo' | 'twosome' | 'archer'>();
    expectTypeOf(v.lr).toEqualTypeOf<number>();
    expectTypeOf(v.normalise).toEqualTypeOf<string | undefined>();
    expectTypeOf(v.algos).toEqualTypeOf<readonly ('poad' | 'ntpo' | 'twosome')[]>();
    expectTypeOf<OptionValues<typeof schema>['greedy']>().toEqualTypeOf<boolean>();
  });

  it('accepts every in-range number as a string or a number, and nothing outside', () => {
    const s = defineSchema({
      x: { type: 'number', min: -2, max: 3, description: 'x' },
    });
    fc.assert(
      fc.property(fc.double({ noNaN: true }), (x) => {
        const inside = x >= -2 && x <= 3 && Number.isFinite(x);
        for (const raw of [x, String(x)]) {
          if (inside) expect(resolveOptions(s, { x: raw }).x).toBe(Number(raw));
          else expect(() => resolveOptions(s, { x: raw })).toThrow(OptionError);
        }
      }),
    );
  });
});

describe('schema helpers', () => {
  it('pickSchema keeps the named fields, in order, and refuses an unknown one', () => {
    const p = pickSchema(schema, ['seed', 'lr']);
    expect(Object.keys(p)).toEqual(['seed', 'lr']);
    expect(p.seed).toBe(schema.seed);
    expect(() => pickSchema(schema, ['nope' as 'seed'])).toThrow(/no field nope/);
  });

  it('defaultsOf lists the fields that have a default', () => {
    expect(defaultsOf(schema)).toEqual({
      task: 'food-preparation',
      algo: 'poad',
      seed: 1,
      greedy: false,
      algos: ['poad'],
      model: 'default',
    });
  });
});

describe('formatHelp', () => {
  it('lists every option with its value, range, default and meaning', () => {
    const help = formatHelp(schema, {
      usage: 'train [options]',
      summary: 'Train.',
      defaults: { lr: 1e-6 },
    });
    for (const flag of [
      '--task <food-preparation|entertainment>',
      '--seed <int>',
      '--greedy',
      '--algos <a,b,…>',
      '--model <dir>',
      '--config <file>',
    ])
      expect(help).toContain(flag);
    expect(help).toMatch(/Actor learning rate \[0, ∞\] \(default: 0\.000001\)/);
    expect(help).toMatch(/Random seed \[0, ∞\] \(default: 1\)/);
    expect(help).toContain('Normalisation (default: unset)');
  });

  it('prints headed groups, and the rest under Options:', () => {
    const help = formatHelp(schema, {
      usage: 'u',
      summary: 's',
      groups: [{ title: 'Algorithm (poad):', keys: ['lr', 'seed', 'absent'] }],
    });
    const options = help.indexOf('Options:');
    const algo = help.indexOf('Algorithm (poad):');
    expect(options).toBeGreaterThan(0);
    expect(algo).toBeGreaterThan(options);
    expect(help.indexOf('--lr')).toBeGreaterThan(algo);
    expect(help.indexOf('--task')).toBeLessThan(algo);
    expect(help).not.toContain('absent');
  });
});

describe('configResolver', () => {
  class MyConfigError extends Error {
    constructor(
      readonly field: string,
      reason: string,
    ) {
      super(`${field}: ${reason}`);
    }
  }
  const resolveMine = configResolver(schema, {
    error: (label, reason) => new MyConfigError(label, reason),
    check: (c) => {
      if (c.greedy && c.algo === 'archer')
        throw new MyConfigError('config.greedy', 'archer samples; turn greedy off');
    },
  });

  it('fills defaults < layers < overrides, freezes, and passes its own result through', () => {
    const c = resolveMine(
      { lr: 0.5 },
      { layers: [{ name: 'preset', values: { seed: 4, lr: 1 } }] },
    );
    expect(c).toMatchObject({ lr: 0.5, seed: 4, task: 'food-preparation', greedy: false });
    expect(Object.isFrozen(c)).toBe(true);
    expect(resolveMine(c)).toBe(c);
    // An equal object that it did not return is resolved again (a new frozen copy).
    const again = resolveMine({ ...c });
    expect(again).not.toBe(c);
    expect(again).toEqual(c);
  });

  it("names a bad field as config.field in the package's error, then runs the cross-field check", () => {
    expect(() => resolveMine({ lr: 1, seed: -1 })).toThrow(MyConfigError);
    expect(() => resolveMine({ lr: 1, seed: -1 })).toThrow(
      'config.seed: -1 is below the minimum 0',
    );
    expect(() => resolveMine({ lr: 1, sed: 2 } as never)).toThrow(/config\.sed: unknown option/);
    expect(() => resolveMine({ lr: 1, algo: 'archer', greedy: true })).toThrow(
      /config\.greedy: archer samples/,
    );
    // A field error from other names, as the caller asks.
    expect(() => resolveMine({ lr: -1 }, { where: 'command line', naming: 'flag' })).toThrow(
      /command line --lr: -1 is below the minimum 0/,
    );
  });
});
