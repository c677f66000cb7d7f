// The published tarball works for a library user: `npm pack`, install into an empty project,
// then use it through `import`, `require` and a TypeScript type-check. Also runs publint and
// arethetypeswrong. Needs `dist/` (turbo runs `build` before `test`).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { typecheckSnippet } from '@poad/dev-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const pkgDir = new URL('..', import.meta.url).pathname;
const bin = (name: string) => join(pkgDir, '..', '..', 'node_modules', '.bin', name);
const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });

let project = '';

beforeAll(() => {
  if (!existsSync(join(pkgDir, 'dist', 'index.js'))) {
    throw new Error(
      'dist/ is missing: run `npm run build -w @poad/bellman` (turbo does this before test)',
    );
  }
  project = mkdtempSync(join(tmpdir(), 'poad-bellman-pack-'));
  run('npm', ['pack', '--pack-destination', project, '--loglevel=error'], pkgDir);
  const tarball = readdirSync(project).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error('npm pack produced no tarball');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', `./${tarball}`],
    project,
  );
}, 180_000);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

const segment = `{ rewards: [0, 1], dones: [false, true], tokenCounts: [2, 3], values: [0.5, 0.6, 0.7, 0.4, 0.9], bootstrapValue: 0 }`;

describe('the packed tarball', () => {
  it('ships only dist, README and package.json', () => {
    const files = run('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], pkgDir);
    const list = (JSON.parse(files) as { files: { path: string }[] }[])[0]!.files.map(
      (f) => f.path,
    );
    expect(
      list.every((f) => f.startsWith('dist/') || f === 'README.md' || f === 'package.json'),
    ).toBe(true);
    expect(list).toContain('dist/index.cjs');
    expect(list).toContain('dist/index.d.cts');
  });

  it('works through ESM import', () => {
    writeFileSync(
      join(project, 'esm.mjs'),
      `import { poad, ntpo } from '@poad/bellman';\nconst s = ${segment};\nconsole.log(JSON.stringify([Array.from(poad(s, { gamma: 0.95, lambda: 0.95 }).returns), Array.from(ntpo(s, { gamma: 0.95, lambda: 1 }).returns)]));\n`,
    );
    const [p, n] = JSON.parse(run('node', ['esm.mjs'], project)) as number[][];
    expect(p!.length).toBe(5);
    // λ = 1 after a done: NTPO's returns inside the last action are γ^(tokens left) · r.
    expect(n![2]).toBeCloseTo(0.95 ** 2, 12);
    expect(n![4]).toBeCloseTo(1, 12);
  });

  it('works through CommonJS require', () => {
    writeFileSync(
      join(project, 'cjs.cjs'),
      `const { actionGae, tokenGae } = require('@poad/bellman');\nconst s = ${segment};\nconst t = tokenGae({ ...s, tokenCounts: [1, 1], values: [0.5, 0.7] }, { gamma: 0.9, lambda: 0.8 });\nconst a = actionGae({ ...s, values: [0.5, 0.7] }, { gamma: 0.9, lambda: 0.8 });\nconsole.log(JSON.stringify([Array.from(t.advantages), Array.from(a.advantages)]));\n`,
    );
    const [t, a] = JSON.parse(run('node', ['cjs.cjs'], project)) as number[][];
    expect(t).toEqual(a);
  });

  it('exports the group advantages through both import and require', () => {
    const call = `[Array.from(b.grpoAdvantages([1, 0], { normalise: 'none' })), Array.from(b.rlooAdvantages([1, 0])), Array.from(b.gigpoAdvantages([{ states: ['a'], rewards: [1] }, { states: ['a'], rewards: [0] }], { gamma: 1, omega: 1, normalise: 'none' }).combined[0])]`;
    writeFileSync(
      join(project, 'group.mjs'),
      `import * as b from '@poad/bellman';\nconsole.log(JSON.stringify(${call}));\n`,
    );
    writeFileSync(
      join(project, 'group.cjs'),
      `const b = require('@poad/bellman');\nconsole.log(JSON.stringify(${call}));\n`,
    );
    // GRPO without std: ±0.5; RLOO: ±1; GiGPO: episode 0.5 + step 0.5 (both visit state a).
    const expected = [[0.5, -0.5], [1, -1], [1]];
    expect(JSON.parse(run('node', ['group.mjs'], project))).toEqual(expected);
    expect(JSON.parse(run('node', ['group.cjs'], project))).toEqual(expected);
  });

  it('type-checks in a strict TypeScript project (node16 resolution)', () => {
    typecheckSnippet(
      project,
      `import { poad, badQIteration, gigpoAdvantages, type TokenSegment, type GaeResult, type TokenMdp, type GigpoResult, type GigpoTrajectory } from '@poad/bellman';\nconst s: TokenSegment = ${segment};\nconst r: GaeResult = poad(s, { gamma: 0.9, lambda: 0.9 });\nconst m: TokenMdp = { states: [{ actions: [{ tokens: [1], reward: 1, next: [] }] }] };\nconst v: number = badQIteration(m, { gamma: 0.9 }).v[0]![0]!;\nconst g: GigpoTrajectory[] = [{ states: ['a'], rewards: [1] }];\nconst a: GigpoResult = gigpoAdvantages(g, { gamma: 0.95, omega: 1, normalise: 'std' });\nexport { r, v, a };\n`,
    );
    // A type error must be reported: the check is able to fail.
    const bad = `import { poad } from '@poad/bellman';\npoad({ rewards: [0] }, { gamma: 0.9, lambda: 0.9 });\n`;
    expect(() => typecheckSnippet(project, bad)).toThrow(/TS2345/);
  });

  it('passes publint --strict and arethetypeswrong', () => {
    expect(run(bin('publint'), ['--strict'], pkgDir)).toMatch(/No problems found|All good/i);
    run(bin('attw'), ['--pack', '.', '--format', 'ascii'], pkgDir);
  });
});
