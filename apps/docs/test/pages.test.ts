import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EnvPresets } from '@poad/envs-core';
import { type AppSpec, algorithmEntry, algorithmNames } from '@poad/trainer';
import { describe, expect, it } from 'vitest';
import {
  flagOf,
  formatType,
  formatValue,
  presetColumns,
  presetTable,
} from '../src/config-tables.js';
import { DOCUMENTED_APPS } from '../src/environments.js';
import {
  ALGORITHM_DOCS,
  DocsError,
  markers,
  REPO_ROOT,
  renderPages,
  replaceGenerated,
} from '../src/pages.js';

describe('formatting', () => {
  it('prints values as a flag takes them', () => {
    expect(formatValue(5e-4)).toBe('5e-4');
    expect(formatValue(0.95)).toBe('0.95');
    expect(formatValue(25_600)).toBe('25600');
    expect(formatValue(1e6)).toBe('1e6');
    expect(formatValue(undefined)).toBe('unset');
    expect(formatValue('labels')).toBe('`labels`');
    expect(formatValue(false)).toBe('false');
  });

  it('prints types with their ranges and flags in kebab-case', () => {
    expect(formatType({ type: 'number', min: 0, max: 1, description: '' })).toBe(
      'number in [0, 1]',
    );
    expect(formatType({ type: 'integer', min: 1, description: '' })).toBe('integer ≥ 1');
    expect(formatType({ type: 'enum', choices: ['a', 'b'], description: '' })).toBe('`a`, `b`');
    expect(flagOf('numMinibatches')).toBe('--num-minibatches');
  });
});

describe('replaceGenerated', () => {
  const { begin, end } = markers('part');

  it('replaces what lies between the markers and nothing else', () => {
    const page = `# Page\n\n${begin}\nold\n${end}\n\nAfter.\n`;
    expect(replaceGenerated(page, 'p.md', 'part', 'new')).toBe(
      `# Page\n\n${begin}\n\nnew\n\n${end}\n\nAfter.\n`,
    );
  });

  it('refuses a page without its markers, or with them twice or in the wrong order', () => {
    expect(() => replaceGenerated('# Page\n', 'p.md', 'part', 'x')).toThrow(DocsError);
    expect(() => replaceGenerated('# Page\n', 'p.md', 'part', 'x')).toThrow(/p\.md: the line/);
    expect(() => replaceGenerated(`${begin}\n${begin}\n${end}\n`, 'p.md', 'part', 'x')).toThrow(
      /found 2/,
    );
    expect(() => replaceGenerated(`${end}\n${begin}\n`, 'p.md', 'part', 'x')).toThrow(
      /comes before/,
    );
  });
});

describe('preset tables', () => {
  it('give a group algorithm groups × group size environments, as a run gets them', () => {
    const columns = presetColumns('gigpo', DOCUMENTED_APPS);
    const table = presetTable(algorithmEntry('gigpo'), columns);
    const envs = table.split('\n').find((l) => l.startsWith('| `envs` (run option)'))!;
    // VirtualHome small: 2 groups × 4; credit small: 4 groups × 8.
    expect(envs.split(' | ').slice(2, 3)).toEqual(['**8**']);
    expect(envs.trimEnd().endsWith('**32** |')).toBe(true);
  });

  it('leave out the environments whose presets do not offer the algorithm', () => {
    // TWOSOME needs labelled actions: DataSciCoding's are open text.
    const families = presetColumns('twosome', DOCUMENTED_APPS).map((c) => c.family);
    expect(new Set(families)).toEqual(new Set(['virtualhome', 'overcooked', 'credit']));
  });
});

describe('the algorithm pages', () => {
  it('exist for every registered algorithm, with their generated parts up to date', () => {
    const stale = renderPages(REPO_ROOT)
      .filter((p) => p.current !== p.expected)
      .map((p) => `${p.file} is out of date: run npm run docs -w @poad/docs`);
    expect(stale).toEqual([]);
    const files = renderPages(REPO_ROOT).map((p) => p.file);
    for (const name of algorithmNames()) expect(files).toContain(`${ALGORITHM_DOCS}/${name}.md`);
  });

  it('would be out of date if a preset changed', () => {
    const app = DOCUMENTED_APPS[0]!;
    const small = app.presets.presets.small!;
    const changed: EnvPresets = {
      ...app.presets,
      presets: {
        ...app.presets.presets,
        small: { ...small, values: { ...small.values, lr: 7e-4 } },
      },
    };
    const apps: AppSpec[] = [{ ...app, presets: changed }, ...DOCUMENTED_APPS.slice(1)];
    const drifted = renderPages(REPO_ROOT, apps).filter((p) => p.current !== p.expected);
    expect(drifted.map((p) => p.file)).toContain(`${ALGORITHM_DOCS}/poad.md`);
    expect(drifted.find((p) => p.file.endsWith('poad.md'))!.expected).toContain('**7e-4**');
  });

  // Every column a page's "Logged metrics" table names is written by the trainer or an app.
  const sources = [
    'packages/trainer/src/metrics-row.ts',
    'packages/trainer/src/run-trainer.ts',
    'packages/trainer/src/algorithms/etpo.ts',
    'packages/trainer/src/algorithms/group.ts',
    'packages/trainer/src/algorithms/ppo.ts',
    'apps/train-credit/src/spec.ts',
    'apps/train-datascicoding/src/spec.ts',
  ]
    .map((f) => readFileSync(join(REPO_ROOT, f), 'utf8'))
    .join('\n');

  it.each(algorithmNames())('%s.md names only metrics columns the runs write', (name) => {
    const page = readFileSync(join(REPO_ROOT, ALGORITHM_DOCS, `${name}.md`), 'utf8');
    const section = page.split(/^## /m).find((s) => s.startsWith('Logged metrics'));
    expect(section, `${name}.md needs a "## Logged metrics" section`).toBeDefined();
    const columns = [...section!.matchAll(/^\| `(\w+)`/gm)].map((m) => m[1]!);
    expect(columns.length).toBeGreaterThanOrEqual(8);
    const unknown = columns.filter((c) => !new RegExp(`\\b${c}\\b`).test(sources));
    expect(unknown).toEqual([]);
  });
});
