import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { TINY_RUN as TINY, type TrainingHarness, trainingHarness } from '@poad/dev-kit';
import { expect } from 'vitest';
import type { AppSpec } from '../src/app.js';
import { runCli } from '../src/cli.js';
import { tinyModelDir } from './tiny-model.js';

/**
 * Options of a tiny run (`@poad/dev-kit`'s `TINY_RUN`) on the wasm backend, its perplexity
 * (before and after) measured on the first 4 held-out texts rather than all 200, whose two passes
 * cost as much as a 3-iteration tiny run itself (train-virtualhome's smoke test measures it on
 * all of them, as a default run does).
 */
export const TINY_RUN: readonly string[] = [
  ...TINY,
  '--backend',
  'wasm',
  '--perplexity-lines',
  '4',
];

/** `@poad/dev-kit`'s training harness on the tiny model, running `spec` through `runCli` in this process. */
export interface CliHarness extends TrainingHarness {
  /** The tiny model's folder (set before the file's tests run). */
  readonly model: string;
  /** Adds a line to the captured output (e.g. from a library's `log` callback). */
  log(line: string): void;
  /** The options of a new run: the tiny model, then {@link TrainingHarness.args}. */
  newRun(name: string, iterations: number, extra?: readonly string[]): string[];
}

/**
 * Registers a test file's harness: before its tests the tiny model is built and (with
 * `reference`) the uninterrupted reference run `straight` of 3 iterations trains; after them
 * everything is removed.
 */
export function cliHarness(options: {
  base: readonly string[];
  reference?: AppSpec;
  spec?: AppSpec;
}): CliHarness {
  let model = '';
  const spec = options.spec ?? options.reference;
  const lines: string[] = [];
  const h = trainingHarness({
    inProcess: (argv) => {
      if (!spec) throw new Error('cliHarness: pass spec (or reference) to run commands');
      return runCli(spec, argv);
    },
    base: () => ['--model', model, ...options.base],
    async setup() {
      model = await tinyModelDir();
      if (options.reference) {
        const r = await h.run(h.args('straight', 3));
        expect(r.code, r.out).toBe(0);
      }
    },
    teardown() {
      delete process.env.POAD_TEST_CHECKPOINT_FAULT;
      rmSync(join(model, '..'), { recursive: true, force: true });
    },
  });
  const captured = h.output;
  return {
    ...h,
    get model() {
      return model;
    },
    log: (line: string) => void lines.push(line),
    newRun: (name: string, iterations: number, extra: readonly string[] = []) =>
      h.args(name, iterations, extra),
    output: () => [...lines.splice(0), captured()].join(''),
  };
}
