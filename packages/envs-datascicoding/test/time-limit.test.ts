// The two clocks that stop a long program: wall time (default) and CPU time (timeLimit: 'cpu',
// for runs that must repeat on a loaded machine), and how each is reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeForkServers,
  DataSciOptionError,
  type Dataset,
  EvaluationPool,
  evaluateProgram,
  resolveLimits,
} from '../src/index.js';
import { body, LOGISTIC, PYTHON } from './helpers.js';
import { builtinDataset } from './shared-datasets.js';

const pool = new EvaluationPool(2);
let dataset: Dataset;
beforeAll(async () => {
  dataset = await builtinDataset('iris');
}, 60_000);
afterAll(() => closeForkServers());

/** Sleeps 0.5 s in each of the five fits: 2.5 s of wall time, almost no CPU time. */
const SLEEPY = body('import time', 'time.sleep(0.5)', LOGISTIC);
/** Computes for ever. */
const BUSY = body('while True:', '    pass');

describe('resolveLimits', () => {
  it('gives the CPU clock 30 s and a wall-clock backstop of 10 times its CPU seconds', () => {
    expect(resolveLimits(undefined)).toMatchObject({ timeoutMs: 30_000, cpuSeconds: 60 });
    expect(resolveLimits(undefined, 'cpu')).toMatchObject({ timeoutMs: 300_000, cpuSeconds: 30 });
    expect(resolveLimits({ cpuSeconds: 2 }, 'cpu')).toMatchObject({
      timeoutMs: 20_000,
      cpuSeconds: 2,
    });
    expect(resolveLimits({ cpuSeconds: 2, timeoutMs: 5000 }, 'cpu').timeoutMs).toBe(5000);
    expect(() => resolveLimits(undefined, 'gpu' as 'cpu')).toThrow(DataSciOptionError);
    expect(() => resolveLimits(undefined, 'gpu' as 'cpu')).toThrow(/timeLimit.*wall, cpu/);
  });
});

describe('a program that runs too long', () => {
  it('is reported as a timeout at the wall-clock limit', async () => {
    const e = await evaluateProgram(dataset, BUSY, {
      python: PYTHON,
      pool,
      limits: { timeoutMs: 1500 },
    });
    expect(e.ok).toBe(false);
    expect(e.reason).toBe('timeout');
    expect(e.error).toBe('the program did not finish within 1.5 s and was stopped');
  }, 60_000);

  it('under the CPU clock: waiting is free, computing is stopped at the CPU limit', async () => {
    const wall = await evaluateProgram(dataset, SLEEPY, {
      python: PYTHON,
      pool,
      limits: { timeoutMs: 1500 },
    });
    expect(wall.reason).toBe('timeout');
    const cpu = { python: PYTHON, pool, timeLimit: 'cpu' as const, limits: { cpuSeconds: 1 } };
    const slept = await evaluateProgram(dataset, SLEEPY, cpu);
    expect(slept.error).toBeUndefined();
    expect(slept.ok).toBe(true);
    expect(slept.durationMs).toBeGreaterThan(2500);
    const busy = await evaluateProgram(dataset, BUSY, cpu);
    expect(busy.ok).toBe(false);
    expect(busy.reason).toBe('cpu-limit');
    expect(busy.error).toBe('the program used more than 1 s of CPU time');
  }, 60_000);

  it('under the CPU clock, a new interpreter charges the program from its first line, as a forked run does', async () => {
    // 0.7 s of the program's own CPU time against a limit of 1 s: a new interpreter has spent
    // about half a second on its start and imports by then, which must not count.
    const program = body(
      'import time',
      "if not hasattr(time, 'spent'):",
      '    time.spent = time.process_time()',
      '    while time.process_time() - time.spent < 0.7:',
      '        pass',
      'from sklearn.dummy import DummyClassifier',
      "model = DummyClassifier(strategy='prior').fit(x_train, y_train)",
    );
    for (const options of [
      { forkServer: false },
      { forkServer: true },
      { isolation: 'basic' as const },
    ]) {
      const e = await evaluateProgram(dataset, program, {
        python: PYTHON,
        pool,
        timeLimit: 'cpu',
        limits: { cpuSeconds: 1 },
        ...options,
      });
      expect(e.error, JSON.stringify(options)).toBeUndefined();
      expect(e.ok).toBe(true);
    }
  }, 60_000);
});
