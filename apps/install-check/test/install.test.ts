// The public packages as a user gets them: all packed, each tarball lint-checked as published
// (publint --strict, arethetypeswrong), then installed from the tarballs into an empty project with
// no network, and the @poad/trainer README example (an environment in the project's own file)
// trained there on @poad/default-model. Needs every package's dist/ (turbo builds them first).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkPublished,
  exampleFiles,
  installOffline,
  packInto,
  runTool,
  runToolAsync,
  typecheckSnippet,
} from '@poad/dev-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = new URL('../../..', import.meta.url).pathname;
const packagesDir = join(root, 'packages');
const manifest = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    name: string;
    private?: boolean;
    engines?: { node?: string };
    devDependencies?: Record<string, string>;
  };
const publicDirs = readdirSync(packagesDir)
  .map((d) => join(packagesDir, d))
  .filter((dir) => existsSync(join(dir, 'package.json')) && !manifest(dir).private)
  .sort();

// Every public package packed once, as npm publishes it; the checks and the install read these.
const temp: string[] = [];
let tarballs: string[] = [];
beforeAll(async () => {
  const dest = mkdtempSync(join(tmpdir(), 'poad-tarballs-'));
  temp.push(dest);
  tarballs = await packInto(dest, publicDirs);
});
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

describe('every public package', () => {
  it('is one this check builds first and states the Node versions it supports', () => {
    const names = publicDirs.map((d) => manifest(d).name);
    expect(names).toContain('@poad/trainer');
    expect(names).toContain('@poad/hf-files');
    expect(names).toContain('@poad/default-model');
    // turbo builds a devDependency before this test runs: a new public package must be listed.
    const listed = Object.keys(manifest(join(root, 'apps', 'install-check')).devDependencies ?? {});
    expect(names.filter((n) => !listed.includes(n))).toEqual([]);
    for (const dir of publicDirs) expect(manifest(dir).engines?.node, dir).toMatch(/^>=\d+/);
  });

  it.each(publicDirs.map((d, i) => [d.slice(packagesDir.length + 1), i]))(
    '%s passes publint --strict and arethetypeswrong',
    async (_name, i) => {
      await expect(checkPublished(tarballs[i]!)).resolves.toHaveProperty('attw');
    },
  );

  it('the checks fail: publint on a type file in the wrong format, arethetypeswrong on an ES module a CommonJS consumer requires', async () => {
    const bad = async (name: string, manifest: object, files: Record<string, string>) => {
      const dir = mkdtempSync(join(tmpdir(), `poad-${name}-`));
      temp.push(dir);
      const json = { name, version: '1.0.0', files: Object.keys(files), ...manifest };
      writeFileSync(join(dir, 'package.json'), JSON.stringify(json));
      for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
      return (await packInto(dir, [dir]))[0]!;
    };
    // CommonJS code whose `types` is an ES module.
    const format = await bad(
      'bad-format',
      { main: './index.js', types: './index.d.ts' },
      { 'index.js': 'module.exports = { x: 1 };\n', 'index.d.ts': 'export default 1;\n' },
    );
    await expect(checkPublished(format)).rejects.toThrow(/publint --strict reports problems/);
    // Fine by publint, but an ES module only: `require` from CommonJS (node16) fails, which
    // arethetypeswrong's strict profile counts.
    const esmOnly = await bad(
      'esm-only',
      { type: 'module', exports: { '.': { types: './index.d.ts', default: './index.js' } } },
      { 'index.js': 'export const x = 1;\n', 'index.d.ts': 'export declare const x: number;\n' },
    );
    await expect(checkPublished(esmOnly)).rejects.toThrow(
      /reports 1 problem\(s\) in esm-only-1\.0\.0\.tgz:\n.*"kind":"CJSResolvesToESM".*"node16-cjs"/,
    );
  });
});

describe('installed from tarballs into an empty project without network', () => {
  let project = '';

  beforeAll(async () => {
    project = await installOffline(tarballs, { prefix: 'poad-user-project-' });
    temp.push(project);
  });

  it('trains the @poad/trainer README example on an environment defined in the project', async () => {
    const files = exampleFiles(readFileSync(join(packagesDir, 'trainer', 'README.md'), 'utf8'));
    expect([...files.keys()]).toEqual(['my-env.mjs', 'train.mjs']);
    for (const [name, text] of files) writeFileSync(join(project, name), text);
    const out = await runToolAsync('node', ['train.mjs'], project, 900_000);
    expect(out).toMatch(/iterations: 4,\s+interrupted: false/);
    expect(out).toMatch(/greedy success \d+%/);

    const runs = readdirSync(join(project, 'runs'));
    expect(runs).toHaveLength(1);
    const runDir = join(project, 'runs', runs[0]!);
    expect(runs[0]).toMatch(/^key-room-poad-s1-/);
    const rows = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n');
    expect(rows.map((r) => JSON.parse(r).iteration)).toEqual([1, 2, 3, 4]);
    expect(rows.every((r) => Number.isFinite(JSON.parse(r).episodeReturn))).toBe(true);
    // The default model came from the installed @poad/default-model.
    const env = JSON.parse(readFileSync(join(runDir, 'environment.json'), 'utf8'));
    expect(JSON.stringify(env)).toContain('@poad/trainer');
    const model = join(runDir, 'checkpoints', 'iter-00000004', 'model');
    for (const f of ['adapter_config.json', 'adapter_model.safetensors'])
      expect(existsSync(join(model, f)), f).toBe(true);
    // The adapter reads back with @poad/hf-files alone (no TF.js import).
    const check = `import { readPeftAdapter } from '@poad/hf-files';\nconst a = await readPeftAdapter(${JSON.stringify(model)});\nconsole.log(JSON.stringify({ r: a.config.r, tensors: a.tensors.size }));\n`;
    writeFileSync(join(project, 'read-adapter.mjs'), check);
    const adapter = JSON.parse(runTool('node', ['read-adapter.mjs'], project));
    expect(adapter.r).toBe(8);
    expect(adapter.tensors).toBeGreaterThan(0);
  });

  it('npx poad lists the installed environments and trains one from the command line', async () => {
    const envs = await runToolAsync('npx', ['poad', 'envs'], project, 300_000);
    expect(envs).toMatch(
      /virtualhome\/food-preparation +labels, seeded resets +poad ntpo twosome archer etpo grpo rloo gigpo/,
    );
    expect(envs).toMatch(
      /datascicoding\/iris +text, seeded resets +poad ntpo etpo grpo rloo gigpo/,
    );
    // The command says what it did on stderr (its log); the shell joins it to stdout.
    const out = await runToolAsync(
      'sh',
      [
        '-c',
        'npx poad train --env virtualhome/food-preparation --max-iterations 2 --eval-episodes 2 --run-name cli-run --quiet 2>&1',
      ],
      project,
      900_000,
    );
    expect(out).toContain(`done: ${join(project, 'runs', 'cli-run')}`);
    const rows = readFileSync(join(project, 'runs', 'cli-run', 'metrics.jsonl'), 'utf8');
    expect(
      rows
        .trim()
        .split('\n')
        .map((r) => JSON.parse(r).iteration),
    ).toEqual([1, 2]);
    expect(
      JSON.parse(readFileSync(join(project, 'runs', 'cli-run', 'config.json'), 'utf8')),
    ).toMatchObject({
      task: 'virtualhome/food-preparation',
      algo: 'poad',
      lr: 5e-4,
    });
    // A bad flag is one line and exit code 2 (runToolAsync throws with the output).
    await expect(
      runToolAsync(
        'npx',
        ['poad', 'train', '--env', 'virtualhome/food-preparation', '--lr', '-1'],
        project,
        300_000,
      ),
    ).rejects.toThrow(/--lr: -1 is below the minimum 0/);
  });

  it('works from CommonJS and type-checks in a strict TypeScript project', () => {
    const cjs = runTool(
      'node',
      [
        '-e',
        "const t = require('@poad/trainer'); const m = require('@poad/default-model'); console.log(typeof t.train, typeof t.evaluate, typeof t.createLmAgent, require('node:fs').existsSync(m.defaultModelPath))",
      ],
      project,
    );
    expect(cjs.trim()).toBe('function function function true');
    const good = `import { train, type TrainOptions } from '@poad/trainer';\nimport type { TextEnv } from '@poad/envs-core';\ndeclare const env: TextEnv;\nconst o: TrainOptions = { env: () => env, algo: 'ntpo', intraGamma: 0.9, envSteps: 128 };\nexport const run: Promise<{ runDir: string; iterations: number; interrupted: boolean }> = train(o);\n`;
    typecheckSnippet(project, good, { skipLibCheck: true });
    // A wrong option type is reported: the check can fail.
    const bad = good.replace("algo: 'ntpo'", "algo: 'dqn'");
    expect(() => typecheckSnippet(project, bad, { skipLibCheck: true })).toThrow(/algo|dqn/);
  });
});
