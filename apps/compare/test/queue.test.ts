// `npm run compare -- … --queue` and `npm run compare -- worker` as users run them: a real Redis
// server on 127.0.0.1, the coordinator and the workers as processes of their own, tiny runs.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import {
  folderProgress,
  inCI,
  type RedisServer,
  redisServerPath,
  startRedis,
  waitUntil,
  withProgress,
} from '@poad/dev-kit';
import {
  connectionOf,
  parseQueueUrl,
  QueueUrlError,
  RedisUnreachableError,
} from '@poad/sweep-queue';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { archiveComparison } from '../src/archive.js';
import { openArchive } from '../src/archive-file.js';
import { localCodeVersion } from '../src/code-version.js';
import { compare } from '../src/main.js';

const root = new URL('../../..', import.meta.url).pathname;
const MAIN = join(root, 'apps/compare/src/main.ts');
const out = mkdtempSync(join(tmpdir(), 'poad-compare-queue-'));

/** A compare command in a process of its own, its output readable while it runs. */
interface Proc {
  child: ChildProcess;
  output(): string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>;
}
const procs: Proc[] = [];

function start(args: readonly string[], env: Record<string, string> = {}): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0', ...env },
  });
  let text = '';
  child.stdout!.on('data', (d) => {
    text += d;
  });
  child.stderr!.on('data', (d) => {
    text += d;
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>(
    (resolve) => child.on('close', (code, signal) => resolve({ code, signal, out: text })),
  );
  const p = { child, output: () => text, done };
  procs.push(p);
  return p;
}

/** Kills what a test left going (a failed check must not leave a coordinator or worker on). */
function killAll(): void {
  for (const p of procs)
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
}
afterEach(killAll);
afterAll(() => {
  killAll();
  rmSync(out, { recursive: true, force: true });
});

/** Everything the processes print and write: it changes while any of them makes progress. */
const progress = () => `${procs.map((p) => p.output().length).join(',')}\n${folderProgress(out)}`;

/** Waits for `condition` for as long as the processes make progress (3 minutes without fails). */
const until = (condition: () => boolean, what: string) =>
  withProgress(waitUntil(condition, what, { timeoutMs: Number.POSITIVE_INFINITY }), progress, {
    what,
    stallMs: 180_000,
  });
const ended = (p: Proc, what: string) => withProgress(p.done, progress, { what, stallMs: 180_000 });

/** 2 algorithms × 2 seeds of a few iterations, one evaluation episode, one thread, wasm. */
const tiny = (iterations: number) => [
  '--env',
  'virtualhome/food-preparation',
  '--model',
  DEFAULT_MODEL,
  '--max-iterations',
  String(iterations),
  '--eval-episodes',
  '1',
  '--backend',
  'wasm',
  '--extra=--envs 2 --num-steps 4 --epochs 1 --num-minibatches 2 --threads 1',
];

const comparisonIn = (base: string) => join(base, readdirSync(base)[0]!);
const json = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
/** Metrics rows without their timings (wall time, seconds per phase, rates). */
const metrics = (runDir: string) =>
  readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) =>
      Object.fromEntries(
        Object.entries(JSON.parse(l)).filter(([k]) => !/Seconds$|PerSec$/.test(k)),
      ),
    );
/** summary.json's summaries and differences without wall times. */
const results = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'), (k, v) =>
    k === 'wallSeconds' ? undefined : v,
  ) as { summaries: unknown; differences: unknown };

async function withQueue<T>(url: string, f: (q: Queue) => Promise<T>): Promise<T> {
  const q = new Queue('poad-sweeps', { connection: connectionOf(parseQueueUrl(url)) });
  try {
    return await f(q);
  } finally {
    await q.close();
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// Outside CI a machine without redis-server skips these; under CI its absence fails them.
describe.skipIf(!redisServerPath() && !inCI())('compare on a Redis queue', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('coordinator and workers in processes: the report equals a local comparison; a worker killed, one stopped and one of another code version lose nothing', async () => {
    // The same comparison trained here, the reference.
    const local = join(out, 'local');
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const code = await withProgress(
        compare([...tiny(12), '--algos', 'poad,ntpo', '--seeds', '2', '--out', local]),
        () => folderProgress(local),
        {
          what: 'the local comparison',
          stallMs: 180_000,
        },
      );
      expect(code).toBe(0);
    } finally {
      vi.restoreAllMocks();
    }
    const reference = comparisonIn(local);

    // The coordinator queues the runs; Ctrl-C leaves them on the queue.
    const queued = join(out, 'queued');
    const args = [
      ...tiny(12),
      '--algos',
      'poad,ntpo',
      '--seeds',
      '2',
      '--queue',
      redis.url,
      '--out',
      queued,
    ];
    const first = start(args);
    await until(() => first.output().includes('4 runs queued'), 'the runs on the queue');
    first.child.kill('SIGINT');
    const stopped = await ended(first, 'the coordinator after SIGINT');
    const dir = comparisonIn(queued);
    expect(stopped.code, stopped.out).toBe(130);
    expect(stopped.out).toContain(`reattach with: npm run compare -- --resume ${dir}`);
    expect(existsSync(join(dir, 'report.md'))).toBe(false);
    const sweep = json(join(dir, 'compare.json')).sweep as string;
    const names = ['poad-s1', 'poad-s2', 'ntpo-s1', 'ntpo-s2'];
    const states = () =>
      withQueue(redis.url, (q) => Promise.all(names.map((n) => q.getJobState(`${sweep}.${n}`))));
    expect(await states()).toEqual(['waiting', 'waiting', 'waiting', 'waiting']);

    // A worker of another code version refuses, says why, and leaves the runs queued.
    const commit = localCodeVersion().commit;
    const stranger = start(['worker', '--queue', redis.url, '--out', join(out, 'stranger')], {
      POAD_TEST_CODE_COMMIT: '0'.repeat(40),
    });
    const refused = await ended(stranger, 'the worker of another code version');
    expect(refused.code, refused.out).toBe(2);
    expect(refused.out).toMatch(
      new RegExp(
        `error: refused ${sweep}/\\S+: another code version: it was queued from ${commit ? commit.slice(0, 12) : 'no git commit'}, this worker runs 000000000000; it stays on the queue for a worker of its version\\n`,
      ),
    );
    expect(await states()).toEqual(['waiting', 'waiting', 'waiting', 'waiting']);

    // Two workers sharing a runs folder, and the coordinator reattached.
    const shared = join(out, 'shared');
    const worker = (name: string) =>
      start([
        'worker',
        '--queue',
        redis.url,
        '--threads',
        '1',
        '--shared-runs',
        shared,
        '--out',
        join(out, name),
      ]);
    const a = worker('a');
    const b = worker('b');
    const coordinator = start(['--resume', dir]);
    /** The run a worker started last. */
    const runOf = (w: Proc) =>
      [...w.output().matchAll(new RegExp(`started ${sweep}/(\\S+) \\(attempt \\d+\\)`, 'g'))].at(
        -1,
      )?.[1];
    /** Under way: it has a checkpoint and no final evaluation yet. */
    const checkpointed = (run: string | undefined) =>
      run !== undefined &&
      existsSync(join(shared, sweep, run, 'checkpoints', 'latest.json')) &&
      !existsSync(join(shared, sweep, run, 'eval.json'));

    // Worker a is killed with SIGKILL mid-run, after a checkpoint; its training goes with it.
    await until(() => checkpointed(runOf(a)), 'a checkpoint of a run of worker a');
    const killedRun = runOf(a)!;
    // How many times a worker had taken it (a refusal counts too).
    const taken = Number(
      a.output().match(new RegExp(`started ${sweep}/${killedRun} \\(attempt (\\d+)\\)`))![1],
    );
    const trainer = json(join(shared, sweep, killedRun, 'run.lock')).pid as number;
    a.child.kill('SIGKILL');
    await until(() => !alive(trainer), `the training of ${killedRun} to end with its worker`);

    // Worker b is stopped with Ctrl-C mid-run: it checkpoints and hands the run back.
    await until(() => checkpointed(runOf(b)), 'a checkpoint of a run of worker b');
    const stoppedRun = runOf(b)!;
    b.child.kill('SIGINT');
    const bEnd = await ended(b, 'worker b after SIGINT');
    expect(bEnd.code, bEnd.out).toBe(130);
    expect(bEnd.out).toContain(`returned ${sweep}/${stoppedRun} to the queue`);
    expect(readFileSync(join(shared, sweep, `${stoppedRun}.log`), 'utf8')).toMatch(
      /stopped after iteration \d+\/12/,
    );

    // A third worker resumes both runs from their checkpoints and trains the rest.
    const c = worker('c');
    const done = await ended(coordinator, 'the reattached coordinator');
    expect(done.code, done.out).toBe(0);
    expect(done.out).toMatch(/queue: 0 queued, 0 running, 4 done, 0 failed of 4/);
    // Both runs were taken again (the killed one by b or c) and resumed from their checkpoints.
    expect(`${b.output()}${c.output()}`).toContain(
      `started ${sweep}/${killedRun} (attempt ${taken + 1})`,
    );
    expect(c.output()).toMatch(new RegExp(`started ${sweep}/${stoppedRun} \\(attempt [2-9]\\)`));
    for (const run of [killedRun, stoppedRun]) {
      expect(readFileSync(join(shared, sweep, `${run}.log`), 'utf8')).toMatch(
        new RegExp(`resuming \\S+/${run} after iteration [1-9]`),
      );
    }

    // Each run as the archive keeps it, and the same numbers as the local comparison's.
    const members = openArchive(
      archiveComparison(reference, join(out, 'local-archive')).file,
    ).names();
    for (const run of names) {
      const kept = members
        .filter((m) => m.startsWith(`${run}/`))
        .map((m) => m.slice(run.length + 1).split('/')[0]!);
      // The archive leaves the pictures out (its commands draw them again from the data).
      const files = readdirSync(join(dir, run)).sort();
      expect(files.filter((f) => !/\.(png|svg)$/.test(f))).toEqual([...new Set(kept)].sort());
      expect(metrics(join(dir, run))).toEqual(metrics(join(reference, run)));
      expect(metrics(join(dir, run))).toHaveLength(12);
      for (const f of ['eval.json', 'perplexity.json'])
        expect(json(join(dir, run, f))).toEqual(json(join(reference, run, f)));
    }
    expect(results(dir).summaries).toEqual(results(reference).summaries);
    expect(results(dir).differences).toEqual(results(reference).differences);
    const report = readFileSync(join(dir, 'report.md'), 'utf8');
    expect(report).toMatch(/\| poad \| 2 \|/);
    expect(report).not.toContain('Failed runs');

    c.child.kill('SIGINT');
    expect((await ended(c, 'worker c after SIGINT')).code).toBe(130);
    expect(await states()).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
  }, 0);

  it('bad input: a malformed or unreachable queue writes nothing; a run whose configuration does not parse or whose model cannot be built fails alone, named in the report', async () => {
    const base = join(out, 'bad');
    const args = [...tiny(1), '--algos', 'poad', '--out', base];
    // A malformed URL, and an unreachable Redis: one line naming it, and nothing written.
    await expect(compare([...args, '--queue', 'http://127.0.0.1:6379'])).rejects.toBeInstanceOf(
      QueueUrlError,
    );
    const gone = await startRedis();
    await gone.stop();
    const dead = `${gone.url}/0`;
    await expect(compare([...args, '--queue', dead])).rejects.toBeInstanceOf(RedisUnreachableError);
    const unreachable = start([...args, '--queue', dead]);
    const coordinatorSaid = await ended(unreachable, 'the coordinator on an unreachable Redis');
    expect(coordinatorSaid.code).toBe(2);
    expect(coordinatorSaid.out).toMatch(
      new RegExp(
        `^error: --queue ${dead}: cannot reach Redis there \\([^\\n]*\\); start it \\(npm run redis starts one on this machine\\) or correct the URL\\n$`,
      ),
    );
    const workerSaid = await ended(
      start(['worker', '--queue', dead, '--out', join(out, 'never')]),
      'a worker on an unreachable Redis',
    );
    expect(workerSaid.code).toBe(2);
    expect(workerSaid.out).toMatch(new RegExp(`^error: --queue ${dead}: cannot reach Redis there`));
    const malformed = await ended(
      start(['worker', '--queue', 'redis://:6379']),
      'a worker on a malformed URL',
    );
    expect(malformed.code).toBe(2);
    expect(malformed.out).toMatch(
      /^error: --queue "redis:\/\/:6379": .*; write it as redis:\/\/HOST:PORT\[\/DB\]/,
    );
    expect(existsSync(base)).toBe(false);
    expect(existsSync(join(out, 'never'))).toBe(false);

    // Three seeds queued; then one's configuration is spoiled and another's model is broken.
    const coordinator = start([
      ...tiny(1),
      '--algos',
      'poad',
      '--seeds',
      '3',
      '--out',
      base,
      '--queue',
      redis.url,
    ]);
    await until(() => coordinator.output().includes('3 runs queued'), 'the runs on the queue');
    const dir = comparisonIn(base);
    const sweep = json(join(dir, 'compare.json')).sweep as string;
    const broken = join(out, 'broken-model');
    mkdirSync(broken);
    writeFileSync(join(broken, 'config.json'), '{"model_type": "llama"');
    await withQueue(redis.url, async (q) => {
      for (const [run, change] of [
        ['poad-s2', { lr: 'fast' }],
        ['poad-s3', { model: broken }],
      ] as const) {
        const job = (await q.getJob(`${sweep}.${run}`))!;
        const data = job.data;
        await job.updateData({
          ...data,
          payload: { ...data.payload, config: { ...data.payload.config, ...change } },
        });
      }
    });
    const w = start([
      'worker',
      '--queue',
      redis.url,
      '--threads',
      '1',
      '--out',
      join(out, 'bad-worker'),
    ]);
    const done = await ended(coordinator, 'the coordinator of the spoiled sweep');
    expect(done.code, done.out).toBe(1);
    expect(done.out).toContain(
      `2 of 3 runs failed (named in the report); fix the cause and queue them again with: npm run compare -- --resume ${dir}`,
    );
    const report = readFileSync(join(dir, 'report.md'), 'utf8');
    expect(report).toContain('## Failed runs');
    expect(report).toMatch(
      /- poad, seed 2 \(poad-s2\): its configuration does not parse: config file \S+: .*lr/,
    );
    expect(report).toContain(
      `- poad, seed 3 (poad-s3): training exited with code 2: ${join(broken, 'config.json')}: model config is not valid JSON`,
    );
    expect(report).toMatch(/\| poad \| 1 \|/);
    const summary = json(join(dir, 'summary.json'));
    expect(summary.failed.map((f: { name: string }) => f.name).sort()).toEqual([
      'poad-s2',
      'poad-s3',
    ]);
    expect(existsSync(join(dir, 'poad-s1', 'eval.json'))).toBe(true);
    // Each failing run was tried once, and the worker went on with the others.
    for (const run of ['poad-s2', 'poad-s3']) {
      expect(w.output().split(`started ${sweep}/${run} `)).toHaveLength(2);
      expect(w.output()).toContain(`failed ${sweep}/${run}: `);
    }
    expect(w.output()).toContain(`finished ${sweep}/poad-s1`);
    w.child.kill('SIGINT');
    expect((await ended(w, 'the worker after SIGINT')).code).toBe(130);
    // --report-only reports on the finished run without the queue.
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await compare(['--resume', dir, '--report-only'])).toBe(0);
    } finally {
      vi.restoreAllMocks();
    }
    expect(json(join(dir, 'summary.json')).summaries[0].seeds).toBe(1);
  }, 0);
});
