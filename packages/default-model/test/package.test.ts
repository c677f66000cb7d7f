// The published package holds the model files and finds them from ESM and CommonJS.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkPublished, installOffline, packedFiles, packInto, runTool } from '@poad/dev-kit';
import { afterAll, describe, expect, it } from 'vitest';
import {
  defaultCodeModelPath,
  defaultModelPath,
  END_OF_TEXT_ID,
  heldOutLines,
  heldOutSamples,
  heldOutTextPath,
  informativePriorModelPath,
} from '../src/index.js';

const pkgDir = new URL('..', import.meta.url).pathname;
const MODEL_FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'training.json'];
const temp: string[] = [];
/** The package's tarball, packed once (it holds the models) for the install and the lint. */
let tarball: Promise<string> | undefined;
const packed = (): Promise<string> => {
  tarball ??= (async () => {
    const dest = mkdtempSync(join(tmpdir(), 'poad-default-model-pack-'));
    temp.push(dest);
    return (await packInto(dest, [pkgDir]))[0]!;
  })();
  return tarball;
};
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

describe('@poad/default-model', () => {
  it("END_OF_TEXT_ID is </s> in every embedded model's vocabulary", () => {
    for (const dir of [defaultModelPath, defaultCodeModelPath, informativePriorModelPath]) {
      const tokenizer = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
      expect(tokenizer.model.vocab['</s>'], dir).toBe(END_OF_TEXT_ID);
    }
  });

  it('points at a Hugging Face LLaMA folder and the held-out text', () => {
    const config = JSON.parse(readFileSync(join(defaultModelPath, 'config.json'), 'utf8'));
    expect(config.model_type).toBe('llama');
    const tokenizer = JSON.parse(readFileSync(join(defaultModelPath, 'tokenizer.json'), 'utf8'));
    expect(Object.keys(tokenizer.model.vocab).length).toBeLessThanOrEqual(config.vocab_size);
    // safetensors: an 8-byte little-endian header length, then a JSON header.
    const st = readFileSync(join(defaultModelPath, 'model.safetensors'));
    const header = JSON.parse(st.subarray(8, 8 + Number(st.readBigUInt64LE(0))).toString());
    expect(header['model.embed_tokens.weight'].shape).toEqual([
      config.vocab_size,
      config.hidden_size,
    ]);
    expect(heldOutTextPath.endsWith('heldout.txt')).toBe(true);
    const lines = heldOutLines();
    expect(lines.length).toBe(200);
    expect(lines.every((l) => l.length > 0)).toBe(true);
    expect(heldOutLines(3)).toEqual(lines.slice(0, 3));
  });

  it('points at the code model: a LLaMA folder of at most 16 MB with held-out samples', () => {
    const config = JSON.parse(readFileSync(join(defaultCodeModelPath, 'config.json'), 'utf8'));
    expect(config.model_type).toBe('llama');
    const tokenizer = JSON.parse(
      readFileSync(join(defaultCodeModelPath, 'tokenizer.json'), 'utf8'),
    );
    expect(Object.keys(tokenizer.model.vocab).length).toBeLessThanOrEqual(config.vocab_size);
    let bytes = 0;
    for (const f of MODEL_FILES) bytes += readFileSync(join(defaultCodeModelPath, f)).length;
    expect(bytes).toBeLessThanOrEqual(16 * 2 ** 20);
    const samples = heldOutSamples(defaultCodeModelPath, 5);
    expect(samples).toHaveLength(5);
    for (const s of samples) {
      expect(s.prompt).toMatch(/^<PRE> .*def build_model\(x_train/s);
      expect(s.completion.length).toBeGreaterThan(0);
    }
    // The informative-prior variant: the default model's architecture, its own tokenizer.
    const inf = JSON.parse(readFileSync(join(informativePriorModelPath, 'config.json'), 'utf8'));
    expect(inf.hidden_size).toBe(
      JSON.parse(readFileSync(join(defaultModelPath, 'config.json'), 'utf8')).hidden_size,
    );
    expect(
      JSON.parse(readFileSync(join(informativePriorModelPath, 'training.json'), 'utf8')).steps,
    ).toBe(910);
    // A folder without held-out samples has none.
    expect(heldOutSamples(defaultModelPath)).toEqual([]);
  });

  it('ships the model files, the held-out text and dist only', () => {
    const files = packedFiles(pkgDir);
    for (const f of MODEL_FILES) expect(files).toContain(`model/${f}`);
    for (const f of [...MODEL_FILES, 'heldout.jsonl'])
      expect(files).toContain(`models/default-code/${f}`);
    for (const f of [...MODEL_FILES, 'heldout.txt'])
      expect(files).toContain(`models/informative-prior/${f}`);
    expect(files).toContain('heldout.txt');
    expect(files).toContain('dist/index.cjs');
    expect(
      files.every((f) =>
        /^(dist|model|models\/(default-code|informative-prior))\/|^(README\.md|package\.json|heldout\.txt)$/.test(
          f,
        ),
      ),
    ).toBe(true);
  });

  it('resolves the installed files from ESM and CommonJS', async () => {
    const project = await installOffline([await packed()]);
    temp.push(project);
    const check = `const fs = require('node:fs'); const path = require('node:path');\nconst ok = fs.existsSync(path.join(m.defaultModelPath, 'model.safetensors')) && fs.existsSync(path.join(m.defaultCodeModelPath, 'model.safetensors'));\nconsole.log(JSON.stringify({ ok, inside: m.defaultModelPath.startsWith(process.cwd()), lines: m.heldOutLines().length, samples: m.heldOutSamples(m.defaultCodeModelPath, 3).length }));\n`;
    const esm = `import * as m from '@poad/default-model';\nimport { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n${check}`;
    const cjs = `const m = require('@poad/default-model');\n${check}`;
    writeFileSync(join(project, 'esm.mjs'), esm);
    writeFileSync(join(project, 'cjs.cjs'), cjs);
    for (const file of ['esm.mjs', 'cjs.cjs']) {
      expect(JSON.parse(runTool('node', [file], project))).toEqual({
        ok: true,
        inside: true,
        lines: 200,
        samples: 3,
      });
    }
  });

  it('passes publint --strict and arethetypeswrong', async () => {
    await expect(checkPublished(await packed())).resolves.toHaveProperty('attw');
  });
});
