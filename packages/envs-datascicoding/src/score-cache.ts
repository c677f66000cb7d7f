import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DataSciOptionError } from './errors.js';
import type { SandboxLimits, TimeLimit } from './limits.js';
import type { PythonInfo } from './python.js';
import type { IsolationMode } from './sandbox.js';
import type { Evaluation, FailureReason } from './scoring.js';
import type { ScoringRule } from './seeding.js';

/*
 * Scores kept so that a program is not scored twice on the same data under the same rule.
 * Only `seeded-v1` scorings are kept (an `os-seeded` score is one random draw among many), and
 * only outcomes the program decides: a score, or a failure such as a syntax error or an
 * exception. Outcomes the machine decides (a timeout, the CPU-time limit, a kill, a cancelled
 * run, a broken sandbox) are scored again next time.
 */

/** Where scores are kept: {@link MemoryScoreCache} or {@link DiskScoreCache}, or your own. */
export interface ScoreCache {
  /** The evaluation stored under `key`, or undefined. */
  get(key: string): Evaluation | undefined;
  /** Stores `evaluation` under `key`. */
  set(key: string, evaluation: Evaluation): void;
}

/** Everything that decides an evaluation's outcome besides the program (see {@link scoreKey}). */
export interface ScoreKeyParts {
  scoring: ScoringRule;
  /**
   * `datasetDigest` of the data the sandbox reads, and where the AUCs are computed from labels
   * the sandbox does not see (held-out scoring), of those too.
   */
  dataDigest: string;
  /** The complete module text. */
  source: string;
  /** The interpreter and its libraries' versions. */
  python: PythonInfo;
  isolation: IsolationMode;
  timeLimit: TimeLimit;
  limits: SandboxLimits;
}

/** Version of the key layout; a change makes every stored score unreachable. */
const KEY_VERSION = 'poad-dsc-score-v1';

/** The cache key of an evaluation: SHA-256 (hex) of everything in `parts`. */
export function scoreKey(parts: ScoreKeyParts): string {
  const { source, ...rest } = parts;
  const limits = Object.fromEntries(
    Object.entries(rest.limits).sort(([a], [b]) => a.localeCompare(b)),
  );
  const python = Object.fromEntries(
    Object.entries(rest.python).sort(([a], [b]) => a.localeCompare(b)),
  );
  return createHash('sha256')
    .update(
      JSON.stringify([
        KEY_VERSION,
        rest.scoring,
        rest.dataDigest,
        python,
        rest.isolation,
        rest.timeLimit,
        limits,
      ]),
    )
    .update('\0')
    .update(source)
    .digest('hex');
}

/**
 * The failures the Python runner reports that the program itself decides: the same program on
 * the same data fails the same way again.
 */
export const RUNNER_PROGRAM_FAILURES: readonly FailureReason[] = [
  'syntax',
  'exception',
  'memory-limit',
  'exit',
  'no-model',
  'bad-probabilities',
];

/** Failures the program decides (the same again on the same data under `seeded-v1`). */
const PROGRAM_FAILURES = new Set<FailureReason>([
  ...RUNNER_PROGRAM_FAILURES,
  'scoring',
  'output-limit',
  'no-result',
]);

/** Whether `evaluation` may be kept: a `seeded-v1` score, or a failure the program decided. */
export function isCacheable(evaluation: Evaluation): boolean {
  if (evaluation.scoring !== 'seeded-v1') return false;
  if (evaluation.ok) return true;
  if (evaluation.reason === 'crashed') {
    // A crash by SIGSEGV and the like is the program's; SIGKILL may be the hard CPU-time limit.
    return !/SIGKILL/.test(evaluation.error ?? '');
  }
  return evaluation.reason !== undefined && PROGRAM_FAILURES.has(evaluation.reason);
}

function sizeOf(evaluation: Evaluation): number {
  return (
    256 +
    2 * (evaluation.stdout.length + evaluation.stderr.length + (evaluation.error?.length ?? 0)) +
    8 * evaluation.aucs.length
  );
}

/**
 * Scores kept in memory, the least recently used dropped beyond `maxBytes` (about 2 bytes per
 * character of output kept; default 64 MiB). One per process is shared by every environment
 * that is not given its own ({@link defaultScoreCache}): a program a policy writes again (often,
 * for a small model), or several environments write at once, runs once. It lives as long as the
 * process, so it needs no invalidation.
 */
export class MemoryScoreCache implements ScoreCache {
  private readonly entries = new Map<string, { evaluation: Evaluation; bytes: number }>();
  private bytes = 0;

  constructor(readonly maxBytes = 64 << 20) {
    if (!Number.isInteger(maxBytes) || maxBytes < 1) {
      throw new DataSciOptionError(
        'maxBytes',
        `expected a positive integer, got ${String(maxBytes)}.`,
      );
    }
  }

  /** Scores kept now. */
  get size(): number {
    return this.entries.size;
  }

  get(key: string): Evaluation | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.evaluation;
  }

  set(key: string, evaluation: Evaluation): void {
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.bytes;
      this.entries.delete(key);
    }
    const bytes = sizeOf(evaluation);
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { evaluation, bytes });
    this.bytes += bytes;
    for (const [k, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= entry.bytes;
    }
  }
}

let shared: MemoryScoreCache | undefined;
let written = 0;

/** The in-memory cache environments use unless given another (or `cache: false`). */
export function defaultScoreCache(): MemoryScoreCache {
  shared ??= new MemoryScoreCache();
  return shared;
}

/** The default folder of {@link DiskScoreCache}: `$POAD_CACHE_DIR`, else `~/.cache/poad`, + `datascicoding-scores`. */
export function defaultScoreCacheDir(): string {
  const base = process.env.POAD_CACHE_DIR || join(homedir(), '.cache', 'poad');
  return join(base, 'datascicoding-scores');
}

/**
 * Scores kept on disk, one small JSON file per key (`<dir>/<first 2 hex digits>/<key>.json`,
 * written to a temporary name and renamed, so concurrent writers and a kill leave whole files
 * only). For commands that score the same programs again across invocations (`npm run prior`,
 * `npm run heldout`); the key holds the interpreter's and libraries' versions, so an upgrade
 * scores again. A file that cannot be read counts as absent.
 */
export class DiskScoreCache implements ScoreCache {
  constructor(readonly dir: string = defaultScoreCacheDir()) {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new DataSciOptionError(
        'cache',
        `cannot create the score cache folder ${dir}: ${(err as Error).message}. Pass a writable folder.`,
      );
    }
  }

  private file(key: string): string {
    if (!/^[0-9a-f]{64}$/.test(key)) {
      throw new DataSciOptionError('key', `expected 64 hex digits (scoreKey), got ${key}.`);
    }
    return join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  get(key: string): Evaluation | undefined {
    const file = this.file(key);
    try {
      const stored = JSON.parse(readFileSync(file, 'utf8')) as Evaluation & {
        auc: number | null;
        std: number | null;
      };
      // JSON has no NaN: a failure's auc and std are stored as null.
      return { ...stored, auc: stored.auc ?? Number.NaN, std: stored.std ?? Number.NaN };
    } catch {
      return undefined;
    }
  }

  set(key: string, evaluation: Evaluation): void {
    const file = this.file(key);
    const tmp = `${file}.${process.pid}.${++written}.tmp`;
    try {
      mkdirSync(join(this.dir, key.slice(0, 2)), { recursive: true });
      writeFileSync(tmp, JSON.stringify(evaluation));
      renameSync(tmp, file);
    } catch {
      // A full or read-only disk costs a scoring next time, nothing else.
      rmSync(tmp, { force: true });
    }
  }
}
