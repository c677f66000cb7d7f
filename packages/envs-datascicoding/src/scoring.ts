import { AucError, meanAndStd, splitRocAuc } from './auc.js';
import type { Dataset } from './datasets.js';
import { DataSciOptionError } from './errors.js';
import { chooseIsolation, type IsolationRequest } from './isolation.js';
import { resolveLimits, type SandboxLimits, type TimeLimit } from './limits.js';
import type { EvaluationPool } from './pool.js';
import { defaultEvaluationPool } from './pool.js';
import { assembleProgram } from './prompts.js';
import { checkPython, DEFAULT_PYTHON } from './python.js';
import { type IsolationMode, runSandboxed, type SandboxRun } from './sandbox.js';
import { isCacheable, RUNNER_PROGRAM_FAILURES, type ScoreCache, scoreKey } from './score-cache.js';
import {
  checkScoringRule,
  DEFAULT_SCORING,
  datasetDigest,
  programSeed,
  type SandboxData,
  type ScoringRule,
} from './seeding.js';

/** Constructs refused before running, as in the paper (both make evaluations too slow). */
export const DEFAULT_BANNED: readonly string[] = Object.freeze(['GridSearchCV(', 'SVC(']);

/** Why an evaluation failed. */
export type FailureReason =
  | 'banned'
  | 'syntax'
  | 'exception'
  | 'memory-limit'
  | 'exit'
  | 'no-model'
  | 'bad-probabilities'
  | 'scoring'
  | 'timeout'
  | 'cpu-limit'
  | 'output-limit'
  | 'crashed'
  | 'no-result'
  | 'sandbox'
  | 'aborted';

/** Outcome of scoring one program. */
export interface Evaluation {
  ok: boolean;
  /** Mean ROC AUC over the splits (NaN on failure). */
  auc: number;
  /** ROC AUC of each split (empty on failure). */
  aucs: number[];
  /** Population standard deviation of `aucs` (NaN on failure). */
  std: number;
  reason?: FailureReason;
  /** One-paragraph explanation of the failure (what the reflection prompt shows). */
  error?: string;
  /** The isolation the program ran under (absent when it never ran). */
  isolation?: IsolationMode;
  /** How its randomness was seeded (see {@link ScoringRule}). */
  scoring: ScoringRule;
  /** True when the evaluation came from a {@link ScoreCache} instead of a run (then `durationMs` is the original run's). */
  cached?: boolean;
  durationMs: number;
  /** The first bytes the program printed on stdout and stderr. */
  stdout: string;
  stderr: string;
}

/** Options of {@link evaluateProgram}. */
export interface EvaluateOptions {
  /** Interpreter with numpy, scikit-learn and pandas (default `/usr/bin/python3`). */
  python?: string;
  /** `auto` (default) uses namespaces when available, else the basic fallback. */
  isolation?: IsolationRequest;
  limits?: Partial<SandboxLimits>;
  /** Substrings that make a program fail without running (default `GridSearchCV(`, `SVC(`). */
  banned?: readonly string[];
  /** Parent of the per-run temporary directories (default the OS temp directory). */
  tmpDir?: string;
  /** Run a final bare `return` line as written instead of dropping it (default false). */
  keepTrailingReturn?: boolean;
  /** Bounds concurrent runs (default: a shared pool of min(4, CPUs) slots). */
  pool?: EvaluationPool;
  /**
   * Namespace isolation: fork each run from a warm interpreter that has numpy, SciPy and
   * scikit-learn imported, instead of starting Python for every program (default true; where no
   * such server can be started, runs start their own interpreter).
   */
  forkServer?: boolean;
  /**
   * How the program's randomness is seeded: `seeded-v1` (default) from its text and the data,
   * so that the same program on the same data scores the same every time; `os-seeded` from the
   * operating system, as runs recorded before the rule existed were scored.
   */
  scoring?: ScoringRule;
  /**
   * Which clock stops a long program: `wall` (default; `limits.timeoutMs` of wall time) or `cpu`
   * (`limits.cpuSeconds` of the program's CPU time, default 30, with a wall-clock backstop of
   * 10 times that): see {@link TimeLimit}.
   */
  timeLimit?: TimeLimit;
  /**
   * Where to look a score up before running the program, and keep it after (`seeded-v1`
   * outcomes the program decides only; see `score-cache.ts`). Default: none.
   */
  cache?: ScoreCache;
  signal?: AbortSignal;
}

function failure(
  reason: FailureReason,
  error: string,
  scoring: ScoringRule,
  run?: SandboxRun,
  isolation?: IsolationMode,
): Evaluation {
  return {
    ok: false,
    auc: Number.NaN,
    aucs: [],
    std: Number.NaN,
    reason,
    error,
    isolation,
    scoring,
    durationMs: run?.durationMs ?? 0,
    stdout: run?.stdout ?? '',
    stderr: run?.stderr ?? '',
  };
}

function bannedIn(body: string, options: EvaluateOptions): Evaluation | null {
  for (const banned of options.banned ?? DEFAULT_BANNED) {
    if (banned.length > 0 && body.includes(banned)) {
      return failure(
        'banned',
        `the code uses ${banned} which is not allowed here (too slow); use another model`,
        checkScoringRule(options.scoring ?? DEFAULT_SCORING),
      );
    }
  }
  return null;
}

/**
 * The module that runs `body` as `build_model` on data of `dataset`'s shape, or the failure of
 * the first banned construct `body` uses.
 */
function programFor(dataset: Dataset, body: string, options: EvaluateOptions): string | Evaluation {
  return (
    bannedIn(body, options) ??
    assembleProgram(body, dataset.n, dataset.d, options.keepTrailingReturn)
  );
}

/**
 * Scores the body of `build_model`: refuses banned constructs, runs the program in the sandbox
 * on the dataset's five splits and returns the ROC AUC of each split, or the reason it failed.
 */
export async function evaluateProgram(
  dataset: Dataset,
  body: string,
  options: EvaluateOptions = {},
): Promise<Evaluation> {
  const source = programFor(dataset, body, options);
  return typeof source === 'string' ? evaluateModule(dataset, source, options) : source;
}

/** Like {@link evaluateProgram} for a complete module that defines `build_model` (no ban check). */
export async function evaluateModule(
  dataset: Dataset,
  source: string,
  options: EvaluateOptions = {},
): Promise<Evaluation> {
  return runAndScore(dataset, dataset, source, options);
}

/**
 * The sandbox's task for held-out scoring: every reward row first, then the held-out rows, and
 * one split that trains on the former and tests on the latter. The sandbox gets the held-out
 * labels as −1 (the runner passes only the training rows' labels to `build_model`, so nothing
 * it does needs them); the true labels stay here for the AUC.
 */
const heldOutTasks = new WeakMap<Dataset, { sandbox: SandboxData; labels: SandboxData }>();

function heldOutTask(dataset: Dataset): { sandbox: SandboxData; labels: SandboxData } {
  const held = dataset.holdout;
  if (!held) {
    throw new DataSciOptionError(
      'dataset',
      `${dataset.name} has no held-out rows: give its spec a holdout ({ fraction, seed }).`,
    );
  }
  const known = heldOutTasks.get(dataset);
  if (known) return known;
  const n = dataset.n + held.n;
  const x = new Float64Array(n * dataset.d);
  x.set(dataset.x, 0);
  x.set(held.x, dataset.n * dataset.d);
  const y = new Int32Array(n);
  y.set(dataset.y, 0);
  y.set(held.y, dataset.n);
  const masked = y.slice();
  masked.fill(-1, dataset.n);
  const splits = [
    {
      train: Array.from({ length: dataset.n }, (_, i) => i),
      test: Array.from({ length: held.n }, (_, i) => dataset.n + i),
    },
  ];
  const task = {
    sandbox: { n, d: dataset.d, x, y: masked, splits },
    labels: { n, d: dataset.d, x, y, splits },
  };
  heldOutTasks.set(dataset, task);
  return task;
}

/**
 * Scores the body of `build_model` on the dataset's held-out rows (a spec with a `holdout`):
 * refuses banned constructs as {@link evaluateProgram} does, then runs the same program text in
 * the same sandbox, fitted once on all the reward rows (`dataset.x`, `dataset.y`), with
 * `predict_proba` on the held-out rows. `auc` is their ROC AUC (`aucs` holds it alone, `std` is
 * 0). Throws a DataSciOptionError when the dataset has no held-out rows.
 */
export async function evaluateHeldOut(
  dataset: Dataset,
  body: string,
  options: EvaluateOptions = {},
): Promise<Evaluation> {
  const task = heldOutTask(dataset);
  const source = programFor(dataset, body, options);
  return typeof source === 'string'
    ? runAndScore(task.sandbox, task.labels, source, options)
    : source;
}

/** Evaluations running now that a cache will keep, by key: a second request waits for the first. */
const inFlight = new Map<string, Promise<Evaluation>>();

async function runAndScore(
  sandboxData: SandboxData,
  labels: SandboxData,
  source: string,
  options: EvaluateOptions,
): Promise<Evaluation> {
  const python = options.python ?? DEFAULT_PYTHON;
  const scoring = checkScoringRule(options.scoring ?? DEFAULT_SCORING);
  const timeLimit = options.timeLimit ?? 'wall';
  const limits = resolveLimits(options.limits, timeLimit);
  const isolation = await chooseIsolation(options.isolation ?? 'auto', python, options.tmpDir);
  const digest = datasetDigest(sandboxData);
  const score = async (): Promise<Evaluation> => {
    const pool = options.pool ?? defaultEvaluationPool();
    const run = await pool.run(() =>
      runSandboxed({
        mode: isolation === 'namespaces' ? 'ns' : 'basic',
        source,
        dataset: sandboxData,
        limits,
        python,
        tmpDir: options.tmpDir,
        forkServer: options.forkServer,
        scoring,
        seed: programSeed(scoring, source, digest),
        preload: scoring === 'seeded-v1' || timeLimit === 'cpu',
        signal: options.signal,
      }),
    );
    return interpret(run, labels, limits, isolation, scoring, timeLimit);
  };
  const cache = options.cache;
  if (!cache || scoring !== 'seeded-v1') return score();
  // The key holds the labels the AUCs are computed from as well: held-out scoring hides them
  // from the sandbox (so from the seed), but a score computed with other labels is another.
  const key = scoreKey({
    scoring,
    dataDigest: labels === sandboxData ? digest : `${digest}:${datasetDigest(labels)}`,
    source,
    python: await checkPython(python),
    isolation,
    timeLimit,
    limits,
  });
  const kept = cache.get(key);
  if (kept) return { ...kept, cached: true };
  const running = inFlight.get(key);
  if (running) {
    const first = await running;
    if (isCacheable(first)) return { ...first, cached: true };
  }
  const pending = score();
  inFlight.set(key, pending);
  try {
    const evaluation = await pending;
    if (isCacheable(evaluation)) cache.set(key, evaluation);
    return evaluation;
  } finally {
    if (inFlight.get(key) === pending) inFlight.delete(key);
  }
}

/**
 * Under `seeded-v1`, an error text with the memory addresses of objects (`<… at 0x7f…>`, which
 * differ from one interpreter to the next) shows them as `0x…`, so that the fix-it prompt of a
 * failure is the same text every time.
 */
function steadyError(error: string, scoring: ScoringRule): string {
  return scoring === 'os-seeded' ? error : error.replace(/\b0x[0-9a-f]{6,16}\b/g, '0x…');
}

interface RunnerResult {
  ok?: boolean;
  reason?: string;
  error?: string;
  splits?: Array<{ cols?: unknown; proba?: unknown }>;
}

/** The reasons the Python runner may report: the program's failures, or its sandbox's. */
const RUNNER_REASONS = new Set<string>([...RUNNER_PROGRAM_FAILURES, 'sandbox']);

function interpret(
  run: SandboxRun,
  dataset: SandboxData,
  limits: SandboxLimits,
  isolation: IsolationMode,
  scoring: ScoringRule,
  timeLimit: TimeLimit,
): Evaluation {
  const fail = (reason: FailureReason, error: string) =>
    failure(reason, steadyError(error, scoring), scoring, run, isolation);
  switch (run.ending) {
    case 'timeout':
      return fail(
        'timeout',
        timeLimit === 'cpu'
          ? `the program did not finish within ${limits.timeoutMs / 1000} s of wall time (the backstop of its ${limits.cpuSeconds} s CPU-time limit; it waited without computing) and was stopped`
          : `the program did not finish within ${limits.timeoutMs / 1000} s and was stopped`,
      );
    case 'output-limit':
      return fail(
        'output-limit',
        `the program printed more than ${limits.maxOutputBytes} bytes and was stopped`,
      );
    case 'result-limit':
      return fail(
        'output-limit',
        `the program's result exceeded ${limits.maxResultBytes} bytes and was stopped`,
      );
    case 'aborted':
      return fail('aborted', 'the evaluation was cancelled');
    case 'spawn-failed':
      return fail('sandbox', `the sandbox could not be started: ${run.stderr}`);
    default:
      break;
  }
  const result = run.result as RunnerResult | null;
  if (result && result.ok === false) {
    const reason = RUNNER_REASONS.has(result.reason ?? '')
      ? (result.reason as FailureReason)
      : 'exception';
    return fail(reason, result.error ?? 'the program failed');
  }
  if (result?.ok !== true) {
    if (run.signal === 'SIGXCPU' || run.signal === 'SIGPROF') {
      return fail('cpu-limit', `the program used more than ${limits.cpuSeconds} s of CPU time`);
    }
    if (run.signal !== null) {
      const hint =
        run.signal === 'SIGSEGV'
          ? ' (for example a stack overflow from very deep recursion)'
          : run.signal === 'SIGKILL'
            ? ' (it killed itself or its parent, or reached the hard CPU-time limit)'
            : '';
      return fail('crashed', `the program was terminated by ${run.signal}${hint}`);
    }
    if (run.resultUnreadable) {
      return fail('bad-probabilities', 'the program wrote a result that could not be read');
    }
    return fail(
      'no-result',
      `the program exited with code ${run.exitCode} before build_model returned a model for every split`,
    );
  }
  const splits = result.splits;
  if (!Array.isArray(splits) || splits.length !== dataset.splits.length) {
    return fail('bad-probabilities', 'the program reported a malformed result');
  }
  const aucs: number[] = [];
  for (let i = 0; i < splits.length; i++) {
    const { cols, proba } = splits[i] as { cols?: unknown; proba?: unknown };
    const test = (dataset.splits[i] as Dataset['splits'][number]).test;
    if (
      typeof cols !== 'number' ||
      !Array.isArray(proba) ||
      proba.some((v) => typeof v !== 'number')
    ) {
      return fail('bad-probabilities', `split ${i}: the program reported malformed probabilities`);
    }
    const labels = test.map((row) => dataset.y[row] as number);
    try {
      aucs.push(splitRocAuc(labels, proba as number[], cols));
    } catch (err) {
      if (err instanceof AucError) return fail('scoring', `split ${i}: ${err.message}`);
      throw err;
    }
  }
  const { mean, std } = meanAndStd(aucs);
  return {
    ok: true,
    auc: mean,
    aucs,
    std,
    isolation,
    scoring,
    durationMs: run.durationMs,
    stdout: run.stdout,
    stderr: run.stderr,
  };
}
