// npm run bench:workers -w @poad/compare [-- --iterations 20 --seeds 2 --algos poad,ntpo --queue URL]
// The speed-up of a comparison on the queue from a second worker: the same comparison (tiny
// VirtualHome runs on wasm) trained by one worker, then by two, every worker at --threads 1 (so
// two workers use two cores), timed from the coordinator's start to its report. Without --queue a
// Redis server of its own is started (npm run redis) and stopped afterwards. Run it on a machine
// with two cores free.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../..', import.meta.url).pathname;
const MAIN = join(root, 'apps/compare/src/main.ts');
const REDIS = join(root, 'packages/dev-kit/src/redis-main.ts');

function option(name: string, fallback: string): string {
  const args = process.argv.slice(2);
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1]! : fallback;
}
const iterations = option('iterations', '20');
const seeds = option('seeds', '2');
const algos = option('algos', 'poad,ntpo');
for (const [name, value] of [
  ['iterations', iterations],
  ['seeds', seeds],
]) {
  if (!/^[1-9]\d*$/.test(value!)) {
    process.stderr.write(`--${name} ${value}: expected a positive integer\n`);
    process.exit(2);
  }
}

/** Starts `node --import tsx SCRIPT ARGS`; resolves with the process once `ready` is printed. */
function start(
  script: string,
  args: string[],
  ready: RegExp,
): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const look = (d: Buffer) => {
      out += d;
      const m = out.match(ready);
      if (m) resolve({ child, line: m[0] });
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    child.once('exit', (code) =>
      reject(new Error(`${script} exited (${code}) before it was ready:\n${out}`)),
    );
  });
}

/** Stops a process with SIGINT and waits for it. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGINT');
  });
}

/** Seconds one comparison takes with `workers` workers on `queue`. */
async function timed(queue: string, workers: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), `poad-bench-workers-${workers}-`));
  const started: ChildProcess[] = [];
  try {
    for (let i = 0; i < workers; i++) {
      const w = await start(
        MAIN,
        ['worker', '--queue', queue, '--threads', '1', '--out', join(dir, `worker-${i}`)],
        /worker \S+ on /,
      );
      started.push(w.child);
    }
    const t0 = performance.now();
    const coordinator = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        MAIN,
        '--env',
        'virtualhome/food-preparation',
        '--algos',
        algos,
        '--seeds',
        seeds,
        '--max-iterations',
        iterations,
        '--eval-episodes',
        '1',
        '--backend',
        'wasm',
        '--extra=--envs 2 --num-steps 4 --epochs 1 --num-minibatches 2 --threads 1',
        '--queue',
        queue,
        '--out',
        join(dir, 'comparison'),
      ],
      { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const code = await new Promise<number | null>((resolve) => coordinator.once('exit', resolve));
    if (code !== 0)
      throw new Error(`the comparison with ${workers} worker(s) exited with code ${code}`);
    return (performance.now() - t0) / 1000;
  } finally {
    for (const w of started) await stop(w);
    rmSync(dir, { recursive: true, force: true });
  }
}

const own = process.argv.includes('--queue')
  ? undefined
  : await start(REDIS, [], /redis:\/\/127\.0\.0\.1:\d+/);
const queue = own ? own.line : option('queue', '');
try {
  const one = await timed(queue, 1);
  const two = await timed(queue, 2);
  const runs = algos.split(',').length * Number(seeds);
  process.stdout.write(
    `\n${runs} run${runs === 1 ? '' : 's'} (${algos} × ${seeds} seed${seeds === '1' ? '' : 's'}, ${iterations} iteration${iterations === '1' ? '' : 's'}), every worker --threads 1:\n  1 worker:  ${one.toFixed(1)} s\n  2 workers: ${two.toFixed(1)} s\n  speed-up:  ${(one / two).toFixed(2)}×\n`,
  );
} finally {
  if (own) await stop(own.child);
}
