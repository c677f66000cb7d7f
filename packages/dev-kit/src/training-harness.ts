import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, vi } from 'vitest';
import { spawnApp } from './spawn.js';

/**
 * A tiny training run's options: 2 environments × 4 steps, one epoch of 2 minibatches and no
 * final evaluation. Flags are the config fields' names in kebab-case.
 */
export const TINY_RUN: readonly string[] = [
  '--envs',
  '2',
  '--num-steps',
  '4',
  '--epochs',
  '1',
  '--num-minibatches',
  '2',
  '--eval-episodes',
  '0',
];

/** The columns of metrics.jsonl that measure time, which no two runs share. */
const TIMING_COLUMNS = [
  'wallSeconds',
  'rolloutEnvStepsPerSec',
  'rolloutActSeconds',
  'rolloutValueSeconds',
  'rolloutEnvSeconds',
  'rolloutTokensPerSec',
  'updateTokensPerSec',
];

/** A run directory's metrics.jsonl rows; `timings: false` leaves out the time columns. */
export function metricsRows(
  runDir: string,
  o: { timings?: boolean } = {},
): Record<string, number>[] {
  return readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const row = JSON.parse(line) as Record<string, number>;
      if (o.timings !== false) return row;
      for (const k of TIMING_COLUMNS) delete row[k];
      return row;
    });
}

/** What a training command printed and returned. */
export interface CommandResult {
  code: number | null;
  out: string;
}

/** One test file's training commands: a runs folder, the options of a run, and ways to run them. */
export interface TrainingHarness {
  /** The folder that holds this file's run directories (removed after its tests). */
  readonly runs: string;
  /** The run directory named `name`. */
  dir(name: string): string;
  /**
   * The options of a new run `name`: the runs folder, its name, `--max-iterations`, `--quiet`,
   * the harness's base options, then `extra`.
   */
  args(name: string, iterations: number, extra?: readonly string[]): string[];
  /** Runs a command line: in this process when the harness has `inProcess`, else as the app's child process. */
  run(argv: readonly string[]): Promise<CommandResult>;
  /** Starts the app as a child process (e.g. to signal it). */
  spawn(argv: readonly string[]): ReturnType<typeof spawnApp>;
  /** The metrics rows of run `name` (without the time columns unless `timings`). */
  rows(name: string, o?: { timings?: boolean }): Record<string, number>[];
  /** A JSON file of run `name` (e.g. `config.json`, `eval.json`), typed as the caller says. */
  json<T = Record<string, unknown>>(name: string, file: string): T;
  /** Stderr that commands run in this process wrote since the last call. */
  output(): string;
}

/** How a {@link trainingHarness} runs its commands. */
export interface TrainingHarnessOptions {
  /** The app's entry script, run as a child process as `npm run train:*` runs it. */
  app?: string;
  /** Runs a command line in this process (e.g. `(argv) => runCli(spec, argv)`), stderr captured. */
  inProcess?: (argv: readonly string[]) => Promise<number>;
  /**
   * Options every run takes after its name (e.g. a model and {@link TINY_RUN}); a function is
   * called after `setup`.
   */
  base?: readonly string[] | (() => readonly string[]);
  /** Runs before the file's tests (e.g. builds a model); the runs folder exists by then. */
  setup?: (runs: string) => Promise<void>;
  /** Runs after them, before the runs folder is removed. */
  teardown?: () => void;
}

/**
 * Registers a test file's training harness: a temporary runs folder for its runs, one way to run
 * a command line (the real app as a child process, or a spec through `runCli` in this process
 * with stderr captured), and readers of what runs wrote. Shared by the apps' smoke and GPU tests
 * and `@poad/trainer`'s CLI tests.
 */
export function trainingHarness(o: TrainingHarnessOptions): TrainingHarness {
  const runs = mkdtempSync(join(tmpdir(), 'poad-runs-'));
  const stderr: string[] = [];
  const base = () => (typeof o.base === 'function' ? o.base() : (o.base ?? []));
  const h: TrainingHarness = {
    runs,
    dir: (name) => join(runs, name),
    args: (name, iterations, extra = []) => [
      '--runs',
      runs,
      '--run-name',
      name,
      '--max-iterations',
      String(iterations),
      '--quiet',
      ...base(),
      ...extra,
    ],
    async run(argv) {
      if (o.inProcess) {
        const before = stderr.length;
        const code = await o.inProcess(argv);
        return { code, out: stderr.slice(before).join('') };
      }
      return h.spawn(argv).done;
    },
    spawn(argv) {
      if (!o.app) throw new Error('trainingHarness: spawn needs the app option (its entry script)');
      return spawnApp(o.app, argv);
    },
    rows: (name, opts = { timings: false }) => metricsRows(join(runs, name), opts),
    json: <T>(name: string, file: string) =>
      JSON.parse(readFileSync(join(runs, name, file), 'utf8')) as T,
    output: () => stderr.splice(0).join(''),
  };
  beforeAll(async () => {
    if (o.inProcess) {
      vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
        stderr.push(String(s));
        return true;
      });
    }
    await o.setup?.(runs);
  });
  afterAll(() => {
    try {
      o.teardown?.();
    } finally {
      if (o.inProcess) vi.restoreAllMocks();
      rmSync(runs, { recursive: true, force: true });
    }
  });
  return h;
}

/**
 * Runs `run` with `process.stdout.write` caught (nothing reaches the terminal meanwhile) and
 * gives its result and the text it wrote, e.g. a command's `--help`.
 */
export async function captureStdout<T>(
  run: () => Promise<T>,
): Promise<{ result: T; text: string }> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
    out.push(String(s));
    return true;
  });
  try {
    const result = await run();
    return { result, text: out.join('') };
  } finally {
    spy.mockRestore();
  }
}
