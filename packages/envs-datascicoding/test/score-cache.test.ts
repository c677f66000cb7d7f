// Score caches: in memory (an environment's default) and on disk (for commands that score the
// same programs across invocations). Only seeded-v1 outcomes the program decides are kept.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDataSciCodingEnv,
  type Dataset,
  DiskScoreCache,
  type Evaluation,
  EvaluationPool,
  evaluateHeldOut,
  evaluateProgram,
  isCacheable,
  loadDataset,
  MemoryScoreCache,
  type ScoreKeyParts,
  scoreKey,
} from '../src/index.js';
import { body, LOGISTIC, PYTHON } from './helpers.js';

const scratch = mkdtempSync(join(tmpdir(), 'poad-dsc-cache-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const pool = new EvaluationPool(2);
let dataset: Dataset;
beforeAll(async () => {
  // Loaded through loadDataset's own cache (not the run's shared copy), which the environment
  // test below loads iris from.
  dataset = await loadDataset('iris', PYTHON);
}, 60_000);

const evaluation = (over: Partial<Evaluation> = {}): Evaluation => ({
  ok: true,
  auc: 0.9,
  aucs: [0.9, 0.9, 0.9, 0.9, 0.9],
  std: 0,
  scoring: 'seeded-v1',
  isolation: 'namespaces',
  durationMs: 10,
  stdout: '',
  stderr: '',
  ...over,
});

describe('scoreKey', () => {
  const parts: ScoreKeyParts = {
    scoring: 'seeded-v1',
    dataDigest: 'a'.repeat(64),
    source: 'def build_model(x, y): pass',
    python: {
      python: PYTHON,
      pythonVersion: '3.11',
      numpy: '1',
      sklearn: '1',
      pandas: '1',
      scipy: '1',
    },
    isolation: 'namespaces',
    timeLimit: 'wall',
    limits: {
      timeoutMs: 1,
      memoryMb: 1,
      cpuSeconds: 1,
      fileSizeMb: 1,
      maxProcesses: 1,
      diskMb: 1,
      maxOutputBytes: 1,
      maxResultBytes: 1,
    },
  };

  it('changes with every part that decides an outcome, and only with them', () => {
    const key = scoreKey(parts);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    // The order of the limits' fields does not matter.
    expect(scoreKey({ ...parts, limits: { ...parts.limits } })).toBe(key);
    const changed: ScoreKeyParts[] = [
      { ...parts, scoring: 'os-seeded' },
      { ...parts, dataDigest: 'b'.repeat(64) },
      { ...parts, source: `${parts.source} ` },
      { ...parts, python: { ...parts.python, sklearn: '2' } },
      { ...parts, isolation: 'basic' },
      { ...parts, timeLimit: 'cpu' },
      { ...parts, limits: { ...parts.limits, timeoutMs: 2 } },
    ];
    const keys = new Set([key, ...changed.map(scoreKey)]);
    expect(keys.size).toBe(changed.length + 1);
  });
});

describe('isCacheable', () => {
  it('keeps seeded-v1 scores and failures the program decides, not the machine', () => {
    expect(isCacheable(evaluation())).toBe(true);
    expect(isCacheable(evaluation({ scoring: 'os-seeded' }))).toBe(false);
    for (const reason of ['syntax', 'exception', 'no-model', 'memory-limit'] as const)
      expect(isCacheable(evaluation({ ok: false, reason }))).toBe(true);
    for (const reason of ['timeout', 'cpu-limit', 'aborted', 'sandbox'] as const)
      expect(isCacheable(evaluation({ ok: false, reason }))).toBe(false);
    expect(
      isCacheable(evaluation({ ok: false, reason: 'crashed', error: 'terminated by SIGSEGV' })),
    ).toBe(true);
    expect(
      isCacheable(evaluation({ ok: false, reason: 'crashed', error: 'terminated by SIGKILL' })),
    ).toBe(false);
  });
});

describe('MemoryScoreCache', () => {
  it('drops the least recently used scores beyond its size', () => {
    const small = evaluation();
    const cache = new MemoryScoreCache(1000);
    cache.set('a', small);
    cache.set('b', small);
    cache.set('c', small);
    expect(cache.size).toBe(3);
    expect(cache.get('a')).toBe(small); // a is now the most recent
    cache.set('d', small);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(small);
    // An entry larger than the whole cache is not kept.
    cache.set('big', evaluation({ stdout: 'x'.repeat(1000) }));
    expect(cache.get('big')).toBeUndefined();
    expect(() => new MemoryScoreCache(0)).toThrow(/maxBytes/);
  });
});

describe('DiskScoreCache', () => {
  it('keeps scores across instances, failures with their NaN, and ignores unreadable files', () => {
    const dir = join(scratch, 'disk');
    const key = 'ab'.repeat(32);
    const failed = evaluation({
      ok: false,
      auc: Number.NaN,
      aucs: [],
      std: Number.NaN,
      reason: 'exception',
      error: 'ValueError: x',
    });
    new DiskScoreCache(dir).set(key, failed);
    const again = new DiskScoreCache(dir).get(key);
    expect(again).toEqual(failed);
    expect(Number.isNaN(again?.auc)).toBe(true);
    expect(readdirSync(join(dir, 'ab'))).toEqual([`${key}.json`]);
    writeFileSync(join(dir, 'ab', `${key}.json`), '{"ok": tru');
    expect(new DiskScoreCache(dir).get(key)).toBeUndefined();
    expect(() => new DiskScoreCache(dir).get('not-a-key')).toThrow(/64 hex digits/);
  });
});

describe('scoring through a cache', () => {
  it('runs a program once, then answers from the cache with the same outcome', async () => {
    const cache = new MemoryScoreCache();
    const options = { python: PYTHON, pool, cache };
    const [a, b] = await Promise.all([
      evaluateProgram(dataset, LOGISTIC, options),
      evaluateProgram(dataset, LOGISTIC, options),
    ]);
    // Two requests at once: the second waits for the first's run.
    expect([a.cached, b.cached].filter(Boolean)).toHaveLength(1);
    const c = await evaluateProgram(dataset, LOGISTIC, options);
    expect(c.cached).toBe(true);
    expect(c.aucs).toEqual(a.aucs);
    expect(cache.size).toBe(1);
    // Another rule, or other limits, is another score (the two run side by side).
    const [old, other] = await Promise.all([
      evaluateProgram(dataset, LOGISTIC, { ...options, scoring: 'os-seeded' }),
      evaluateProgram(dataset, LOGISTIC, { ...options, limits: { timeoutMs: 29_000 } }),
    ]);
    expect(old.cached).toBeUndefined();
    expect(other.cached).toBeUndefined();
  }, 60_000);

  it('keeps held-out scores apart when only the held-out labels differ', async () => {
    // The sandbox sees the held-out labels as -1 either way; the AUC uses the true ones.
    const csv = join(scratch, 'held.csv');
    const rows = Array.from({ length: 120 }, (_, i) => {
      const a = (i * 37) % 101;
      const b = (i * 53) % 89;
      return `${a},${b},${a + b + ((i * 7) % 13) > 100 ? 'y' : 'n'}`;
    });
    writeFileSync(csv, `a,b,label\n${rows.join('\n')}\n`);
    const data = await loadDataset({ csv, target: 'label', holdout: { fraction: 0.25 } }, PYTHON);
    const held = data.holdout!;
    const y = held.y.slice();
    y[0] = 1 - (y[0] as number);
    const relabelled: Dataset = { ...data, holdout: { ...held, y } };
    const cache = new MemoryScoreCache();
    const options = { python: PYTHON, pool, cache };
    const first = await evaluateHeldOut(data, LOGISTIC, options);
    const again = await evaluateHeldOut(data, LOGISTIC, options);
    const other = await evaluateHeldOut(relabelled, LOGISTIC, options);
    expect(again.cached).toBe(true);
    expect(other.cached).toBeUndefined();
    expect(other.auc).not.toBe(first.auc);
    expect(cache.size).toBe(2);
  }, 60_000);

  it('runs a program that timed out again next time', async () => {
    const cache = new MemoryScoreCache();
    const options = { python: PYTHON, pool, cache, limits: { timeoutMs: 1000 } };
    // It waits rather than computes: a timeout is a timeout, and the CPU stays free meanwhile.
    const stuck = body('import time', 'time.sleep(60)');
    const first = await evaluateProgram(dataset, stuck, options);
    expect(first.reason).toBe('timeout');
    const second = await evaluateProgram(dataset, stuck, options);
    expect(second.reason).toBe('timeout');
    expect(second.cached).toBeUndefined();
    expect(cache.size).toBe(0);
  }, 60_000);

  it('is on in an environment by default, and off with cache: false', async () => {
    const step = async (cache?: false) => {
      const env = createDataSciCodingEnv('iris', {
        python: PYTHON,
        pool,
        ...(cache === false ? { cache } : {}),
      });
      await env.reset();
      const s = await env.step(LOGISTIC);
      await env.close();
      return s;
    };
    await step();
    const cached = await step();
    expect(cached.info).toMatchObject({ cached: true, scoring: 'seeded-v1' });
    const fresh = await step(false);
    expect(fresh.info.cached).toBe(false);
    expect(fresh.reward).toBe(cached.reward);
  }, 60_000);
});
