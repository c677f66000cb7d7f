import { DataSciOptionError } from './errors.js';

/** Resource limits of one sandboxed evaluation. */
export interface SandboxLimits {
  /** Wall-clock limit for the whole run (interpreter start, imports and all five fits). */
  timeoutMs: number;
  /** Address-space limit (RLIMIT_AS) in MiB. */
  memoryMb: number;
  /** CPU-time limit (RLIMIT_CPU) in seconds; SIGXCPU at the limit, SIGKILL one second later. */
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

/** Fills defaults and checks every limit is a positive integer (a typed error otherwise). */
export function resolveLimits(partial: Partial<SandboxLimits> | undefined): SandboxLimits {
  const limits: SandboxLimits = { ...DEFAULT_LIMITS, ...(partial ?? {}) };
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
