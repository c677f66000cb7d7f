import { describe, expect, it } from 'vitest';
import { parseConfigText } from './files.js';
import {
  formatHelp,
  OptionError,
  type OptionsSchema,
  parseArgs,
  resolveOptions,
} from './options.js';

const schema = {
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
  model: {
    type: 'string',
    default: 'models/default',
    description: 'Model folder',
    placeholder: 'dir',
  },
} satisfies OptionsSchema;

const load = (text: string, path: string) => () => parseConfigText(text, path);

describe('parseArgs / resolveOptions', () => {
  it('parses every syntax and converts types', () => {
    const p = parseArgs(
      [
        'train',
        '--task',
        'entertainment',
        '--seed=3',
        '--greedy',
        '--algos',
        'poad,ntpo',
        '--lr',
        '1e-6',
      ],
      schema,
    );
    expect(p.positionals).toEqual(['train']);
    expect(p.explicit).toEqual({
      task: 'entertainment',
      seed: 3,
      greedy: true,
      algos: ['poad', 'ntpo'],
      lr: 1e-6,
    });
    expect(parseArgs(['--no-greedy'], schema).explicit).toEqual({ greedy: false });
  });

  it('rejects unknown options with a suggestion and the valid list', () => {
    expect(() => parseArgs(['--sed', '2'], schema)).toThrow(OptionError);
    expect(() => parseArgs(['--sed', '2'], schema)).toThrow(/Did you mean --seed\?.*--task/);
  });

  it('rejects invalid values before any work, listing the valid choices', () => {
    expect(() => parseArgs(['--task', 'cooking'], schema)).toThrow(
      /"cooking" is not one of: food-preparation, entertainment/,
    );
    expect(() => parseArgs(['--seed', '-1'], schema)).toThrow(/below the minimum 0/);
    expect(() => parseArgs(['--seed', '1.5'], schema)).toThrow(/integer/);
    expect(() => parseArgs(['--lr', 'fast'], schema)).toThrow(/expected a number/);
    expect(() => parseArgs(['--algos', 'poad,dqn'], schema)).toThrow(/dqn not allowed/);
    expect(() => parseArgs(['--task'], schema)).toThrow(/needs a value/);
    expect(() => parseArgs(['--model', '--seed'], schema)).toThrow(/write --model=VALUE/);
  });

  it('takes an argument with a space as a value even when it starts with --', () => {
    const p = parseArgs(['--model', '--odd dir', '--seed', '3'], schema);
    expect(p.explicit).toMatchObject({ model: '--odd dir', seed: 3 });
  });

  it('layers schema defaults < presets < config file < command line', () => {
    const cfg = load('{"seed": 7, "algo": "ntpo", "lr": 0.5}', 'c.json');
    const p = parseArgs(['--config', 'c.json', '--seed', '9'], schema, cfg);
    const v = resolveOptions(schema, p.explicit, (e) => ({
      lr: e.algo === 'ntpo' ? 2e-6 : 1e-6,
      greedy: true,
    }));
    expect(v).toMatchObject({
      seed: 9,
      algo: 'ntpo',
      lr: 0.5,
      greedy: true,
      task: 'food-preparation',
    });
    const noFile = resolveOptions(schema, parseArgs(['--algo', 'ntpo'], schema).explicit, (e) => ({
      lr: e.algo === 'ntpo' ? 2e-6 : 1e-6,
    }));
    expect(noFile.lr).toBe(2e-6);
  });

  it('reads YAML config files and checks their keys and values too', () => {
    const yaml = load('algo: twosome\nmax-iterations: 3\n', 'c.yaml');
    expect(() => parseArgs(['--config', 'c.yaml'], schema, yaml)).toThrow(
      /unknown option "max-iterations"/,
    );
    const ok = parseArgs(['--config', 'c.yml'], schema, load('algo: twosome\nseed: 4\n', 'c.yml'));
    expect(ok.explicit).toEqual({ algo: 'twosome', seed: 4 });
    expect(() => parseArgs(['--config', 'c.yml'], schema, load('seed: lots\n', 'c.yml'))).toThrow(
      /config file c\.yml:.*--seed/,
    );
    expect(() => parseConfigText('[1,2]', 'x.json')).toThrow(/object/);
    expect(() => parseConfigText('{', 'x.json')).toThrow(/not valid JSON/);
  });

  it('reports a missing required option and allows optional ones to stay unset', () => {
    expect(() => resolveOptions(schema, {})).toThrow(/--lr/);
    const withOptional = {
      ...schema,
      resume: { type: 'string', optional: true, description: 'Run to resume' },
    } satisfies OptionsSchema;
    const v = resolveOptions(withOptional, { lr: 1 });
    expect(v.resume).toBeUndefined();
    expect(formatHelp(withOptional, { usage: 'x', summary: 'y' })).toContain(
      'Run to resume (default: unset)',
    );
  });

  it('help lists every option with its default and meaning', () => {
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
    ]) {
      expect(help).toContain(flag);
    }
    expect(help).toMatch(/Actor learning rate \[0, ∞\] \(default: 0\.000001\)/);
    expect(help).toMatch(/Random seed \[0, ∞\] \(default: 1\)/);
  });
});
