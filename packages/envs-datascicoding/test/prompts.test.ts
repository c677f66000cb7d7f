import { describe, expect, it } from 'vitest';
import {
  assembleProgram,
  initialPrompt,
  reflectionPrompt,
  stripTrailingReturn,
} from '../src/index.js';

const data = { title: 'toy', n: 10, d: 3 };

describe('prompts', () => {
  it('ends the prefix on an indented line and uses return model as the suffix', () => {
    const { prefix, suffix } = initialPrompt(data);
    expect(prefix.endsWith('\n    ')).toBe(true);
    expect(suffix).toBe('\n    return model\n');
    expect(prefix).toContain('(10, 3)');
  });

  it('keeps the error readable inside the docstring and truncates it', () => {
    const long = `ValueError: """${'x'.repeat(600)}`;
    const { prefix } = reflectionPrompt(data, 'model = None', long, 50);
    expect(prefix).not.toContain(`"""${'x'}`);
    expect(prefix).toContain("ValueError: '''xxxxx");
    expect(prefix).toContain(' ...\nPlease fix it.');
    expect(prefix).toContain('    model = None\n    return model\n');
  });
});

describe('assembleProgram', () => {
  it('indents the first line and appends return model', () => {
    const source = assembleProgram('a = 1\n    model = a', 10, 3);
    expect(source).toBe(
      [
        'import numpy as np',
        '',
        '',
        'def build_model(x_train: np.ndarray, y_train: np.ndarray):',
        '    """Trained with x_train in shape (10, 3)."""',
        '    a = 1',
        '    model = a',
        '    return model',
        '',
      ].join('\n'),
    );
  });

  it('drops a trailing bare return unless asked to keep it', () => {
    expect(stripTrailingReturn('model = f()\n    return\n')).toBe('model = f()');
    expect(stripTrailingReturn('model = f()\n    return model')).toBe(
      'model = f()\n    return model',
    );
    expect(stripTrailingReturn('model = returned()')).toBe('model = returned()');
    expect(assembleProgram('model = 1\n    return', 1, 1)).not.toMatch(/return\n {4}return model/);
    expect(assembleProgram('model = 1\n    return', 1, 1, true)).toContain(
      '    return\n    return model',
    );
  });
});
