// The published package: no TF.js anywhere, works from ESM, CommonJS and TypeScript after an
// offline install of its tarball, and its README example runs there.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkPublished,
  exampleFiles,
  installOffline,
  packedFiles,
  packInto,
  runTool,
  startFakeHub,
  typecheckSnippet,
} from '@poad/dev-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubModelFiles } from './hub-test-model.js';

const pkgDir = new URL('..', import.meta.url).pathname;
/** @poad/config, which the package depends on (its errors extend config's UserError). */
const configDir = new URL('../../config', import.meta.url).pathname;
let project = '';
/** The package's own tarball, as npm publishes it. */
let tarball = '';
const temp: string[] = [];

beforeAll(async () => {
  if (!existsSync(join(pkgDir, 'dist', 'index.js')))
    throw new Error(
      'dist/ is missing: run `npm run build -w @poad/hf-files` (turbo does this before test)',
    );
  const dest = mkdtempSync(join(tmpdir(), 'poad-hf-files-pack-'));
  temp.push(dest);
  const tarballs = await packInto(dest, [pkgDir, configDir]);
  tarball = tarballs[0]!;
  project = await installOffline(tarballs, { prefix: 'poad-hf-files-user-' });
  temp.push(project);
}, 300_000);
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

describe('@poad/hf-files as published', () => {
  it('depends on no TF.js package and imports none', () => {
    const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    const deps = Object.keys({
      ...manifest.dependencies,
      ...manifest.peerDependencies,
      ...manifest.optionalDependencies,
    });
    expect(deps.filter((d) => d.startsWith('@tensorflow/'))).toEqual([]);
    const sources = readdirSync(join(pkgDir, 'src')).filter((f) => f.endsWith('.ts'));
    expect(sources.length).toBeGreaterThan(10);
    for (const f of sources)
      expect(readFileSync(join(pkgDir, 'src', f), 'utf8'), f).not.toMatch(/['"]@tensorflow\//);
    // Nothing in the installed project pulled TF.js in.
    expect(existsSync(join(project, 'node_modules', '@tensorflow'))).toBe(false);
    expect(existsSync(join(project, 'node_modules', 'tokenizers'))).toBe(true);
  });

  it('ships only dist, README and package.json', () => {
    const files = packedFiles(pkgDir);
    expect(
      files.every((f) => f.startsWith('dist/') || f === 'README.md' || f === 'package.json'),
    ).toBe(true);
    expect(files).toContain('dist/index.cjs');
    expect(files.some((f) => f.includes('.test.'))).toBe(false);
  });

  it('runs the README example', () => {
    const files = exampleFiles(readFileSync(join(pkgDir, 'README.md'), 'utf8'));
    expect([...files.keys()]).toEqual(['example.mjs', 'hub-example.mjs']);
    writeFileSync(join(project, 'example.mjs'), files.get('example.mjs')!);
    const out = runTool('node', ['example.mjs'], project);
    expect(out).toContain("dtype: 'BF16'");
    expect(out).toContain('2 [');
    expect(out).toContain('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight');
  });

  it('runs the README Hub example against a local fake Hub, then offline', async () => {
    const hub = await startFakeHub();
    const repo = hub.addRepo('HuggingFaceTB/SmolLM2-135M-Instruct', await hubModelFiles());
    const home = mkdtempSync(join(tmpdir(), 'poad-hf-files-home-'));
    temp.push(home);
    const example = exampleFiles(readFileSync(join(pkgDir, 'README.md'), 'utf8'));
    writeFileSync(join(project, 'hub-example.mjs'), example.get('hub-example.mjs')!);
    // Asynchronous: the fake Hub answers from this process while the example runs.
    const run = (env: Record<string, string>) =>
      new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ['hub-example.mjs'],
          {
            cwd: project,
            env: { ...process.env, HF_HOME: home, HF_TOKEN: '', ...env },
            timeout: 120_000,
          },
          (err, stdout, stderr) =>
            err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
        ),
      );
    try {
      const out = await run({ HF_ENDPOINT: hub.endpoint });
      expect(out).toContain(`HuggingFaceTB/SmolLM2-135M-Instruct ${repo.commit} hub`);
      expect(out).toContain(
        join(home, 'hub', 'models--HuggingFaceTB--SmolLM2-135M-Instruct', 'snapshots', repo.commit),
      );
      expect(out).toContain('llama 2 64');
      expect(out).toContain(
        '<|user|>You see a door. Actions: "open door", "wait".</s><|assistant|>',
      );
    } finally {
      await hub.close();
    }
    const offline = await run({ HF_HUB_OFFLINE: '1', HF_ENDPOINT: hub.endpoint });
    expect(offline).toContain(`${repo.commit} cache`);
  });

  it('works from CommonJS and type-checks under node16 resolution', () => {
    const cjs = `const h = require('@poad/hf-files');\nconst bytes = h.serializeSafetensors({ x: { shape: [2], data: Float32Array.of(1.5, -2) } });\nconst back = h.parseSafetensors(bytes).tensors.get('x');\nconsole.log(JSON.stringify([back.shape, Array.from(back.data)]));\n`;
    writeFileSync(join(project, 'cjs.cjs'), cjs);
    expect(JSON.parse(runTool('node', ['cjs.cjs'], project))).toEqual([[2], [1.5, -2]]);
    const good = `import { parseLlamaConfig, type LlamaConfig, type PeftAdapter } from '@poad/hf-files';\nexport const c: LlamaConfig = parseLlamaConfig({});\nexport type A = PeftAdapter['tensors'];\n`;
    typecheckSnippet(project, good);
    const bad = `import { peftKey } from '@poad/hf-files';\nexport const k: number = peftKey(0, 'q_proj', 'A');\n`;
    expect(() => typecheckSnippet(project, bad)).toThrow(/TS2322/);
  });

  it('passes publint --strict and arethetypeswrong', async () => {
    await expect(checkPublished(tarball)).resolves.toHaveProperty('attw');
  });
});
