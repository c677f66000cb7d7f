import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkEnv, EpisodeOverError, listEnvs, makeEnv, NotResetError } from '@poad/envs-core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createDataSciCodingEnv,
  type DataSciCodingOptions,
  DataSciOptionError,
  DatasetError,
  EnvBusyError,
  EvaluationPool,
  PythonUnavailableError,
  registerDataSciCodingEnvs,
} from '../src/index.js';
import { body, LOGISTIC, ownSandboxProcesses, PYTHON, waitUntil } from './helpers.js';

const registeredAtImport = listEnvs().filter((id) => id.startsWith('datascicoding/'));
const runs = mkdtempSync(join(tmpdir(), 'poad-dsc-env-test-'));
const pool = new EvaluationPool(2);
const options: DataSciCodingOptions = { python: PYTHON, pool, tmpDir: runs };
afterAll(() => rmSync(runs, { recursive: true, force: true }));

const BANNED = body('from sklearn.svm import SVC', 'model = SVC(probability=True)');
const FAILING = body(
  'from sklearn.linear_model import LogisticRegression',
  "raise ValueError('bad idea')",
);

describe('DataSciCoding env', () => {
  it('asks for the body of build_model in the infilling layout', async () => {
    const env = createDataSciCodingEnv('iris', options);
    expect(env.id).toBe('datascicoding/iris');
    const first = await env.reset({ seed: 3 });
    expect(first).toMatchObject({ actions: null, reward: 0, terminated: false, truncated: false });
    const text = first.observation;
    expect(
      text.startsWith('<PRE> """Classifier for the iris dataset."""\nimport numpy as np\n'),
    ).toBe(true);
    expect(text).toContain('def build_model(x_train: np.ndarray, y_train: np.ndarray):\n');
    expect(text).toContain('The full dataset has shape (150, 4)');
    expect(text).toContain('predict_proba');
    expect(text.endsWith('"""\n     <SUF>\n    return model\n <MID>')).toBe(true);
    await env.close();
  }, 30_000);

  it('shows the error and the attempt after a failure, then ends on success', async () => {
    const env = createDataSciCodingEnv('iris', options);
    await expect(env.step(LOGISTIC)).rejects.toThrow(NotResetError);
    const start = await env.reset();
    const failed = await env.step(FAILING);
    expect(failed).toMatchObject({
      reward: -1,
      terminated: false,
      truncated: false,
      actions: null,
    });
    expect(failed.info).toMatchObject({ attempt: 1, reason: 'exception', auc: null });
    expect(String(failed.info.error)).toContain('ValueError: bad idea');
    expect(failed.observation).toContain('failed with this error:\nsplit 0: ValueError: bad idea');
    expect(failed.observation).toContain(`    ${FAILING}\n    return model\n`);
    expect(failed.observation).toContain('The corrected build_model function.');
    expect(failed.observation.endsWith(' <SUF>\n    return model\n <MID>')).toBe(true);

    const solved = await env.step(LOGISTIC);
    expect(solved.terminated).toBe(true);
    expect(solved.truncated).toBe(false);
    expect(solved.reward).toBeGreaterThan(0.95);
    expect(solved.info.aucs).toHaveLength(5);
    expect(solved.info.auc).toBe(solved.reward);
    expect(solved.info.std as number).toBeGreaterThanOrEqual(0);
    expect(solved.info).toMatchObject({ attempt: 2, length: 2 });
    expect(solved.info.discountedReturn).toBeCloseTo(-1 + solved.reward, 12);
    expect(solved.observation).toBe(start.observation);
    await expect(env.step(LOGISTIC)).rejects.toThrow(EpisodeOverError);
    await env.close();
    await env.close();
  }, 60_000);

  it('truncates after maxAttempts failures with the configured failure reward', async () => {
    const env = createDataSciCodingEnv('iris', {
      ...options,
      maxAttempts: 2,
      failureReward: -0.5,
      gamma: 0.5,
    });
    await env.reset();
    const first = await env.step(BANNED);
    expect(first).toMatchObject({ reward: -0.5, terminated: false, truncated: false });
    expect(first.info.reason).toBe('banned');
    const second = await env.step(BANNED);
    expect(second).toMatchObject({ reward: -0.5, terminated: false, truncated: true });
    expect(second.info).toMatchObject({ length: 2, discountedReturn: -0.75 });
    await expect(env.step(BANNED)).rejects.toThrow(EpisodeOverError);
  }, 30_000);

  it('validates its inputs', () => {
    expect(() => createDataSciCodingEnv('iris', { maxAttempts: 0 })).toThrow(DataSciOptionError);
    expect(() => createDataSciCodingEnv('iris', { limits: { timeoutMs: -1 } })).toThrow(
      /limits.timeoutMs/,
    );
    expect(() => createDataSciCodingEnv('cifar' as 'iris')).toThrow(DatasetError);
    const csv = join(runs, 'heart disease.csv');
    writeFileSync(csv, 'a,b\n1,0\n2,1\n3,0\n4,1\n');
    expect(createDataSciCodingEnv({ csv, target: 'b' }).id).toBe('datascicoding/heart-disease');
    expect(createDataSciCodingEnv({ openml: 31 }).id).toBe('datascicoding/openml-31');
  });

  it('rejects reset with one install hint when Python is missing', async () => {
    const env = createDataSciCodingEnv('iris', { ...options, python: join(runs, 'no-python') });
    const error = await env.reset().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PythonUnavailableError);
    expect((error as Error).message).toContain('apt-get install python3-sklearn python3-pandas');
  });

  it('stops a running evaluation when closed', async () => {
    const env = createDataSciCodingEnv('iris', { ...options, limits: { timeoutMs: 20_000 } });
    await env.reset();
    const pending = env.step(body('while True:', '    pass'));
    await expect(env.step(LOGISTIC)).rejects.toThrow(EnvBusyError);
    await waitUntil(() => ownSandboxProcesses().length > 0, 'the program runs');
    await env.close();
    const step = await pending;
    // Stopped by close, not by its 20 s time limit ('timeout').
    expect(step.reward).toBe(-1);
    expect(step.info.reason).toBe('aborted');
    expect(ownSandboxProcesses()).toEqual([]);
    expect(readdirSync(runs).filter((f) => f.startsWith('poad-dsc-'))).toEqual([]);
  }, 60_000);

  it('keeps the event loop free and runs envs concurrently through the pool', async () => {
    const shared = new EvaluationPool(2);
    // No score cache: the two envs would otherwise share one run of the same program.
    const envs = [0, 1].map(() =>
      createDataSciCodingEnv('iris', { ...options, pool: shared, cache: false }),
    );
    await Promise.all(envs.map((env) => env.reset()));
    // 0.5 s of waiting in each of the five fits: 2.5 s side by side, hundreds of 10 ms ticks.
    const slow = body('import time', 'time.sleep(0.5)', LOGISTIC);
    let ticks = 0;
    let mostRunning = 0;
    const timer = setInterval(() => {
      ticks++;
      mostRunning = Math.max(mostRunning, shared.running);
    }, 10);
    const started = performance.now();
    const steps = await Promise.all(envs.map((env) => env.step(slow)));
    const elapsed = performance.now() - started;
    clearInterval(timer);
    for (const step of steps) expect(step.terminated).toBe(true);
    expect(mostRunning).toBe(2);
    // A blocked loop would tick about once in total; a free one about every 10 ms.
    expect(ticks).toBeGreaterThan(elapsed / 10 / 4);
    expect(ticks).toBeGreaterThan(30);
  }, 60_000);
});

describe('conformance and registry', () => {
  it('passes the envs-core conformance kit', async () => {
    const report = await checkEnv(() => createDataSciCodingEnv('iris', options), {
      maxSteps: 5,
      episodes: 2,
      benchmarkSteps: 0,
      ignoreInfoKeys: ['durationMs'],
      actionGenerator: (_step, rng) => (rng.float() < 0.6 ? BANNED : LOGISTIC),
    });
    expect(report.openActionSpace).toBe(true);
    expect(report.checks).toEqual(
      expect.arrayContaining([
        'not-reset',
        'reset',
        'episode-limit',
        'episode-info',
        'episode-over',
        'determinism',
        'close',
      ]),
    );
  }, 120_000);

  it('registers the built-in datasets only when asked', () => {
    expect(registeredAtImport).toEqual([]);
    const ids = registerDataSciCodingEnvs({ python: PYTHON });
    expect(ids).toEqual([
      'datascicoding/iris',
      'datascicoding/wine',
      'datascicoding/breast_cancer',
      'datascicoding/digits',
    ]);
    expect(listEnvs()).toEqual(expect.arrayContaining(ids));
    registerDataSciCodingEnvs();
    const env = makeEnv('datascicoding/wine', { maxAttempts: 3 });
    expect(env.id).toBe('datascicoding/wine');
  });
});
