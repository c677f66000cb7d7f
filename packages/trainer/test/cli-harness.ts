import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import type { AppSpec } from '../src/app.js';
import { runCli } from '../src/cli.js';
import { tinyModelDir } from './tiny-model.js';

/** Options of a tiny run: 2 envs × 4 steps, one epoch of 2 minibatches, no evaluation, wasm. */
export const TINY_RUN = [
  '--envs',
  '2',
  '--num-steps',
  '4',
  '--epochs',
  '1',
  '--minibatches',
  '2',
  '--eval-episodes',
  '0',
  '--backend',
  'wasm',
] as const;

/** A tiny model, a runs folder and the captured stderr of commands driven through runCli. */
export interface CliHarness {
  /** The tiny model's folder (set before the file's tests run). */
  readonly model: string;
  /** Where runs go (beside the model; both are removed after the file). */
  readonly runs: string;
  /** What the commands wrote to stderr since the last call. */
  output(): string;
  /** Adds a line to the captured output (e.g. from a library's `log` callback). */
  log(line: string): void;
  /** The options of a new run: model, runs, name, `--max-iterations`, `--quiet`, the base options, `extra`. */
  newRun(name: string, iterations: number, extra?: readonly string[]): string[];
}

/**
 * Registers the hooks of a test file that trains on the tiny model: before its tests the model
 * is built, stderr is captured, and (with `reference`) the uninterrupted reference run
 * `straight` of 3 iterations trains; after them everything is removed.
 */
export function cliHarness(options: { base: readonly string[]; reference?: AppSpec }): CliHarness {
  let model = '';
  let runs = '';
  const stderr: string[] = [];
  const h: CliHarness = {
    get model() {
      return model;
    },
    get runs() {
      return runs;
    },
    output: () => stderr.splice(0).join(''),
    log: (line) => void stderr.push(line),
    newRun: (name, iterations, extra = []) => [
      '--model',
      model,
      '--runs',
      runs,
      '--run-name',
      name,
      '--max-iterations',
      String(iterations),
      '--quiet',
      ...options.base,
      ...extra,
    ],
  };
  beforeAll(async () => {
    model = await tinyModelDir();
    runs = join(model, '..', 'runs');
    vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
      stderr.push(String(s));
      return true;
    });
    if (options.reference) {
      expect(await runCli(options.reference, h.newRun('straight', 3)), h.output()).toBe(0);
    }
  });
  afterAll(() => {
    delete process.env.POAD_TEST_CHECKPOINT_FAULT;
    vi.restoreAllMocks();
    rmSync(join(model, '..'), { recursive: true, force: true });
  });
  return h;
}
