// `npm run compare -- worker --queue redis://HOST:PORT[/DB]`: takes the runs of comparisons on
// that queue and trains each in a process of its own with the training command of its app (the
// same run-job.ts as `compare --jobs N`), from the configuration the job carries.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { formatHelp, OptionError, type OptionsSchema, resolveOptions } from '@poad/config';
import { parseArgsWithConfig, writeJsonAtomicSync } from '@poad/run-kit';
import { parseQueueUrl, startWorker, type WorkerJob } from '@poad/sweep-queue';
import { runConfigOf } from '@poad/trainer';
import { appOf, RUN_JOB } from './apps.js';
import { localCodeVersion } from './code-version.js';
import type { RunPayload, RunResult } from './queue-coordinator.js';
import { packRun } from './run-transfer.js';

const schema = {
  queue: {
    type: 'string',
    placeholder: 'redis://host:port[/db]',
    description: 'The Redis queue the coordinator (npm run compare -- … --queue URL) fills',
  },
  jobs: {
    type: 'integer',
    default: 1,
    min: 1,
    max: 64,
    description: 'Runs at once, each a process of its own',
  },
  backend: {
    type: 'enum',
    choices: ['auto', 'webgpu', 'tensorflow', 'wasm', 'cpu'],
    optional: true,
    description: "TF.js backend of this machine's runs (unset: the one the comparison asked for)",
  },
  threads: {
    type: 'integer',
    optional: true,
    min: 1,
    description:
      "Native-kernel threads per run, unless the comparison fixed them (unset: this machine's cores / --jobs)",
  },
  sharedRuns: {
    type: 'string',
    optional: true,
    placeholder: 'dir',
    description:
      'A folder every worker sees (e.g. on NFS): runs train there, so that a run whose worker died resumes from its last checkpoint on another',
  },
  out: {
    type: 'string',
    default: 'runs/worker',
    placeholder: 'dir',
    description: "Where this worker's runs train without --shared-runs (one folder per sweep)",
  },
} satisfies OptionsSchema;

/** Exit code of a worker stopped by Ctrl-C or SIGTERM (as the training commands'). */
const INTERRUPTED = 130;

/** The last line of a run's log that says what went wrong. */
function lastError(logFile: string): string {
  const lines = existsSync(logFile)
    ? readFileSync(logFile, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
    : [];
  const error = [...lines].reverse().find((l) => l.startsWith('error:'));
  return error?.replace(/^error: /, '') ?? lines.at(-1) ?? 'no output';
}

/** The job's payload, checked: an environment id and a configuration object. */
function payloadOf(job: WorkerJob<unknown>): RunPayload {
  const p = job.payload as Partial<RunPayload> | null;
  if (!p || typeof p !== 'object' || typeof p.env !== 'string')
    throw new Error('its configuration does not parse: the job names no environment');
  if (!p.config || typeof p.config !== 'object' || Array.isArray(p.config))
    throw new Error('its configuration does not parse: the job carries no run configuration');
  return { env: p.env, config: p.config };
}

/**
 * A run directory whose lock was left by a process on another host is taken over: the queue
 * gave this worker the run because the worker holding it lost it (died, or lost its lock and
 * stopped its training). The lock's own check covers processes on this host.
 */
function takeOverForeignLock(runDir: string, log: (line: string) => void): void {
  const file = join(runDir, 'run.lock');
  if (!existsSync(file)) return;
  try {
    const holder = JSON.parse(readFileSync(file, 'utf8')) as { host?: string; pid?: number };
    if (holder.host === undefined || holder.host === hostname()) return;
    log(
      `taking over ${runDir} from process ${holder.pid} on ${holder.host}, whose worker lost the run`,
    );
  } catch {
    // An unreadable lock is stale for the trainer too.
  }
  rmSync(file, { force: true });
}

/** Runs the training command of `env` on `args` in a child process, logging to `logFile`. */
function train(
  env: string,
  args: string[],
  logFile: string,
  threads: number,
  signal: AbortSignal,
): Promise<void> {
  if (signal.aborted) return Promise.reject(new Error(`stopped (${signal.reason})`));
  const log = createWriteStream(logFile, { flags: 'a' });
  return new Promise((ok, fail) => {
    // An IPC channel: run-job.ts stops at once when it closes (this worker died).
    const child: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', RUN_JOB, env, ...args],
      {
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        env: { ...process.env, POAD_NATIVE_THREADS: String(threads) },
      },
    );
    const onAbort = () => child.kill(signal.reason === 'lost' ? 'SIGKILL' : 'SIGINT');
    signal.addEventListener('abort', onAbort, { once: true });
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    child.on('error', fail);
    child.on('close', (code, sig) => {
      signal.removeEventListener('abort', onAbort);
      log.end(() => {
        if (code === 0) ok();
        else if (signal.aborted) fail(new Error(`stopped (${signal.reason})`));
        else
          fail(
            new Error(
              `training exited with ${sig ?? `code ${code}`}: ${lastError(logFile)} (log: ${hostname()}:${logFile})`,
            ),
          );
      });
    });
  });
}

export async function worker(argv: readonly string[]): Promise<number> {
  const parsed = await parseArgsWithConfig(argv, schema);
  if (parsed.help) {
    process.stdout.write(
      formatHelp(schema, {
        usage: 'npm run compare -- worker --queue redis://host:port[/db] [options]',
        summary:
          'Train the runs of comparisons queued with npm run compare -- … --queue URL, on this machine, until Ctrl-C (which lets each run finish its iteration, save a checkpoint and go back to the queue). Runs queued from another code version (package versions, git commit) are refused: the worker then stops with the reason.\n\nExit codes: 130 stopped by Ctrl-C or SIGTERM; 2 bad options, Redis unreachable, or a run of another code version refused.',
      }),
    );
    return 0;
  }
  const o = resolveOptions(schema, parsed.explicit, { sources: parsed.sources });
  const url = parseQueueUrl(o.queue);
  const threads = o.threads ?? Math.max(1, Math.floor(availableParallelism() / o.jobs));
  const base = resolve(o.sharedRuns ?? o.out);
  const log = (line: string) => process.stderr.write(`${line}\n`);

  const run = async (job: WorkerJob<unknown>, signal: AbortSignal): Promise<RunResult> => {
    const { env, config } = payloadOf(job);
    const dir = join(base, job.sweep);
    const runDir = join(dir, job.name);
    let app: ReturnType<typeof appOf>;
    try {
      app = appOf(env);
    } catch (err) {
      throw new Error(`its configuration does not parse: ${(err as Error).message}`);
    }
    mkdirSync(dir, { recursive: true });
    const backend = o.backend ? ['--backend', o.backend] : [];
    let args: string[];
    if (existsSync(join(runDir, 'config.json'))) {
      // Begun before (by this worker, or by one that stopped or died): continue it exactly.
      takeOverForeignLock(runDir, log);
      args = ['--resume', runDir, '--quiet', ...backend];
    } else {
      // A folder without config.json is a start cut before it wrote anything.
      rmSync(runDir, { recursive: true, force: true });
      const { task, runs: _r, runName: _n, resume: _s, quiet: _q, ...rest } = config;
      const file = join(dir, `.${job.name}.config.json`);
      writeJsonAtomicSync(file, { [app.taskOption ?? 'task']: task, ...rest });
      args = ['--config', file, '--runs', dir, '--run-name', job.name, '--quiet', ...backend];
    }
    // Checked here as the training command checks it, so that a bad one fails with its reason.
    try {
      await runConfigOf(app, args);
    } catch (err) {
      if (err instanceof Error && /Error$/.test(err.name))
        throw new Error(`its configuration does not parse: ${err.message}`);
      throw err;
    }
    await train(env, args, `${runDir}.log`, threads, signal);
    return { files: packRun(runDir) };
  };

  const w = await startWorker<unknown, RunResult>({
    url,
    version: localCodeVersion(),
    concurrency: o.jobs,
    run,
    log,
  });
  log(
    `worker ${w.name} on ${url.display}: ${o.jobs} run${o.jobs > 1 ? 's' : ''} at once, backend ${o.backend ?? "the comparison's"}, ${threads} thread${threads > 1 ? 's' : ''} per run; runs in ${base}`,
  );
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      log(
        `\n${signal}: the running trainings finish their iteration, save a checkpoint and go back to the queue (press again to leave at once; the runs then come back when their locks lapse)`,
      );
      void w.stop();
    } else process.exit(INTERRUPTED);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const end = await w.ended;
    if (end.reason === 'refused') throw new OptionError(end.refusal!);
    log(`worker ${w.name} stopped`);
    return INTERRUPTED;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
