import { DataSciOptionError } from './errors.js';

/** Resource limits of one sandboxed evaluation. */
export interface SandboxLimits {
  /** Wall-clock limit for the whole run (interpreter start, imports and all five fits). */
  timeoutMs: number;
  /** Address-space limit (RLIMIT_AS) in MiB. */
  memoryMb: number;
  /**
   * CPU-time limit of the program in seconds, counted from its first line (the interpreter's
   * start and the runner's imports do not count): a profiling timer (SIGPROF) at the limit, and
   * RLIMIT_CPU (SIGXCPU, then SIGKILL a second later) less than a second after it for a program
   * that disarms the timer.
   */
  cpuSeconds: number;
  /** Largest file the program may write (RLIMIT_FSIZE), in MiB. */
  fileSizeMb: number;
  /** Processes and threads the sandbox may hold at once (RLIMIT_NPROC, namespace mode). */
  maxProcesses: number;
  /** Size of the writable tmpfs at /sandbox (namespace mode), in MiB. */
  diskMb: number;
  /** stdout + stderr beyond this many bytes stops the run. */
  maxOutputBytes: number;
  /** The result message beyond this many bytes stops the run. */
  maxResultBytes: number;
}

/** Defaults: 30 s as in the original environment, 2 GiB, 60 CPU-seconds, 16 MiB files, 64 processes. */
export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  timeoutMs: 30_000,
  memoryMb: 2048,
  cpuSeconds: 60,
  fileSizeMb: 16,
  maxProcesses: 64,
  diskMb: 128,
  maxOutputBytes: 1 << 20,
  maxResultBytes: 256 << 20,
});

/**
 * Which clock stops a program that runs too long.
 * - `wall` (default): `timeoutMs` of wall time (the original environment's 30 s), with
 *   `cpuSeconds` as a second, CPU-time limit. What it cuts depends on the machine and its load.
 * - `cpu`: `cpuSeconds` of CPU time is the limit (default 30), counted from the program's first
 *   line after the same libraries are loaded in every launch, so that it cuts the same programs
 *   on a busy machine as on an idle one; the wall-clock `timeoutMs` is only a backstop for a
 *   program that waits without computing (default 10 × `cpuSeconds`).
 */
export type TimeLimit = 'wall' | 'cpu';

/** Every {@link TimeLimit}. */
export const TIME_LIMITS: readonly TimeLimit[] = Object.freeze(['wall', 'cpu']);

/** Under `timeLimit: 'cpu'`: the CPU seconds of a program, and its backstop as a multiple of them. */
export const CPU_TIME_DEFAULT_SECONDS = 30;
export const CPU_TIME_BACKSTOP_FACTOR = 10;

/**
 * Fills defaults and checks every limit is a positive integer (a typed error otherwise). Under
 * `timeLimit: 'cpu'` the defaults are 30 CPU-seconds and a wall-clock backstop of 10 times that.
 */
export function resolveLimits(
  partial: Partial<SandboxLimits> | undefined,
  timeLimit: TimeLimit = 'wall',
): SandboxLimits {
  if (!(TIME_LIMITS as readonly string[]).includes(timeLimit)) {
    throw new DataSciOptionError(
      'timeLimit',
      `expected one of ${TIME_LIMITS.join(', ')}, got ${JSON.stringify(timeLimit)}.`,
    );
  }
  const given = partial ?? {};
  const cpuDefaults: Partial<SandboxLimits> = {};
  if (timeLimit === 'cpu') {
    const cpuSeconds = given.cpuSeconds ?? CPU_TIME_DEFAULT_SECONDS;
    cpuDefaults.cpuSeconds = cpuSeconds;
    cpuDefaults.timeoutMs = CPU_TIME_BACKSTOP_FACTOR * cpuSeconds * 1000;
  }
  const limits: SandboxLimits = { ...DEFAULT_LIMITS, ...cpuDefaults, ...given };
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || (value as number) < 1) {
      throw new DataSciOptionError(
        `limits.${key}`,
        `expected a positive integer, got ${String(value)}.`,
      );
    }
  }
  return limits;
}
