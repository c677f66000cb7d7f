import { execFileSync } from 'node:child_process';
import { createRng } from '@poad/envs-core';
import { assembleProgram, createDataSciCodingEnv } from '@poad/envs-datascicoding';
import { describe, expect, it } from 'vitest';
import {
  buildCodeCorpus,
  DEFAULT_CODE_CORPUS,
  EVALUATION_SHAPES,
  EVALUATION_TITLES,
  TITLES,
} from '../src/code-corpus.js';
import {
  MISTAKE_KINDS,
  type MistakeKind,
  mistake,
  renderBody,
  validProgram,
} from '../src/code-programs.js';

const PYTHON = '/usr/bin/python3';
const small = { ...DEFAULT_CODE_CORPUS, samples: 2000 };

/** Which of the programs Python can compile (one interpreter for all of them). */
function compiles(sources: readonly string[]): boolean[] {
  const out = execFileSync(
    PYTHON,
    [
      '-c',
      'import json,sys\nres=[]\nfor s in json.load(sys.stdin):\n    try:\n        compile(s, "solution.py", "exec"); res.append(True)\n    except SyntaxError:\n        res.append(False)\nprint(json.dumps(res))',
    ],
    { input: JSON.stringify(sources) },
  );
  return JSON.parse(out.toString()) as boolean[];
}

describe('code corpus', () => {
  it('is deterministic for a seed, differs across seeds, and mixes the sample kinds as asked', () => {
    const a = buildCodeCorpus(small);
    expect(buildCodeCorpus(small)).toEqual(a);
    expect(buildCodeCorpus({ ...small, seed: 2 }).train).not.toEqual(a.train);
    const all = [...a.train, ...a.heldOut];
    expect(all).toHaveLength(2000);
    const reflection = all.filter((s) => s.kind === 'reflection').length / all.length;
    expect(reflection).toBeGreaterThan(0.2);
    expect(reflection).toBeLessThan(0.3);
    const initial = all.filter((s) => s.kind === 'initial');
    const mistaken = initial.filter((s) => s.mistaken).length / initial.length;
    expect(mistaken).toBeGreaterThan(0.15);
    expect(mistaken).toBeLessThan(0.25);
    // Different programs, not a few memorisable ones.
    expect(new Set(all.map((s) => s.completion)).size).toBeGreaterThan(0.75 * all.length);
  });

  it("never names an evaluation dataset or uses an evaluation dataset's shape", () => {
    const { train, heldOut } = buildCodeCorpus(small);
    for (const t of EVALUATION_TITLES) expect(TITLES).not.toContain(t);
    for (const s of [...train, ...heldOut]) {
      const title = /Classifier for the (.+) dataset\./.exec(s.prompt)?.[1];
      expect(TITLES).toContain(title);
      for (const m of s.prompt.matchAll(/has shape \((\d+), (\d+)\)/g)) {
        const shape = [Number(m[1]), Number(m[2])];
        expect(EVALUATION_SHAPES.some(([n, d]) => n === shape[0] && d === shape[1])).toBe(false);
      }
      expect(s.prompt.startsWith('<PRE> ')).toBe(true);
      expect(s.prompt.endsWith(' <MID>')).toBe(true);
    }
  });

  it('writes programs Python compiles, except for the unclosed parenthesis mistake', () => {
    const rng = createRng(11);
    const ctx = { n: 400, d: 12 };
    const valid = Array.from({ length: 150 }, () =>
      assembleProgram(renderBody(validProgram(rng, ctx)), ctx.n, ctx.d),
    );
    expect(compiles(valid).every(Boolean)).toBe(true);
    const wrong = MISTAKE_KINDS.map((k) => mistake(rng, ctx, k)!);
    const ok = compiles(wrong.map((m) => assembleProgram(renderBody(m.wrong), ctx.n, ctx.d)));
    for (const [i, m] of wrong.entries()) expect(ok[i], m.kind).toBe(m.kind !== 'unclosed-paren');
  });
});

describe('code programs in the real sandbox (scikit-learn)', () => {
  it('valid programs run and score; every mistake fails with exactly the error the corpus shows, and its fix runs', async () => {
    const env = createDataSciCodingEnv('iris');
    const data = await env.dataset();
    const ctx = { n: data.n, d: data.d };
    const rng = createRng(3);
    const step = async (body: string) => {
      await env.reset();
      return env.step(body);
    };
    try {
      for (let i = 0; i < 8; i++) {
        const body = renderBody(validProgram(rng, ctx));
        const s = await step(body);
        expect(s.reward, `${body}\n${String(s.info.error)}`).toBeGreaterThan(0.5);
      }
      const kinds: MistakeKind[] = [...MISTAKE_KINDS];
      for (const kind of kinds) {
        const m = mistake(rng, ctx, kind);
        expect(m, kind).toBeDefined();
        const wrong = await step(renderBody(m!.wrong));
        expect(wrong.reward, kind).toBe(-1);
        expect(wrong.info.error, `${kind}\n${renderBody(m!.wrong)}`).toBe(m!.error);
        const fixed = await step(renderBody(m!.fixed));
        expect(fixed.reward, `${kind} fix\n${renderBody(m!.fixed)}`).toBeGreaterThan(0.5);
      }
    } finally {
      await env.close();
    }
  }, 300_000);
});
