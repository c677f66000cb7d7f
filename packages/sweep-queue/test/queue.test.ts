// The queue against a real Redis server (started on a free port for these tests), with workers in
// this process and, for a worker that dies, in a process of its own.
import { spawn } from 'node:child_process';
import { inCI, type RedisServer, redisServerPath, startRedis } from '@poad/dev-kit';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CodeVersion,
  connectionOf,
  openSweep,
  parseQueueUrl,
  type QueueUrl,
  RedisUnreachableError,
  type SweepProgress,
  startWorker,
} from '../src/index.js';

const version: CodeVersion = { packages: { test: '1' }, commit: null };
/** Fast lock expiry and stalled checks, so a dead worker's run comes back within seconds. */
const fast = { lockMs: 2000, stalledCheckMs: 1000 };

let redis: RedisServer;
let url: QueueUrl;
let queues = 0;
/** A queue name of its own for each test. */
const freshQueue = () => `test-${process.pid}-${++queues}`;

/** Resolves with `probe()`'s first value that is not undefined, polling every 50 ms. */
async function eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  const until = Date.now() + 120_000;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`waited 120 s for ${what}, in vain`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The job `id` of `queue` with its state, read directly from Redis. */
async function jobOf(queue: string, id: string) {
  const q = new Queue(queue, { connection: connectionOf(url) });
  try {
    const job = await q.getJob(id);
    return job ? { state: await job.getState(), job } : undefined;
  } finally {
    await q.close();
  }
}

// Outside CI a machine without redis-server skips these; under CI its absence fails them.
describe.skipIf(!redisServerPath() && !inCI())('a sweep on a real Redis queue', () => {
  beforeAll(async () => {
    redis = await startRedis();
    url = parseQueueUrl(redis.url);
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('runs every submitted run on a worker and gathers each result once, with progress', async () => {
    const queue = freshQueue();
    const ran: string[] = [];
    const worker = await startWorker<{ x: number }, { y: number }>({
      url,
      version,
      queue,
      concurrency: 2,
      run: async (job) => {
        ran.push(job.name);
        return { y: job.payload.x * 10 };
      },
    });
    const sweep = await openSweep<{ x: number }, { y: number }>({ url, id: 's1', version, queue });
    const submitted = await sweep.submit([1, 2, 3].map((x) => ({ name: `r${x}`, payload: { x } })));
    expect(submitted).toEqual({ queued: ['r1', 'r2', 'r3'], found: [] });
    const got: Record<string, [number, number, string | undefined]> = {};
    const seen: SweepProgress[] = [];
    const outcome = await sweep.gather(
      {
        done: (name, r, info) => {
          got[name] = [r.y, info.attempts, info.worker];
        },
        failed: () => {},
        progress: (p) => seen.push(p),
      },
      { pollMs: 50, done: 1 },
    );
    expect(outcome).toEqual({ interrupted: false, failed: [] });
    expect(got).toEqual({
      r1: [10, 1, worker.name],
      r2: [20, 1, worker.name],
      r3: [30, 1, worker.name],
    });
    expect(ran.sort()).toEqual(['r1', 'r2', 'r3']);
    expect(seen.at(-1)).toMatchObject({ queued: 0, running: 0, done: 4, failed: 0, total: 4 });
    expect(seen.at(-1)!.etaSeconds).toBe(0);
    // Gathered runs leave the queue.
    for (const name of ['r1', 'r2', 'r3']) expect(await jobOf(queue, `s1.${name}`)).toBeUndefined();
    expect(await worker.stop()).toEqual({ reason: 'stopped' });
    await sweep.close();
  });

  it('fails a run whose training throws, once, and the worker goes on with the next', async () => {
    const queue = freshQueue();
    const tries: string[] = [];
    const worker = await startWorker<string, string>({
      url,
      version,
      queue,
      run: async (job) => {
        tries.push(job.name);
        if (job.payload === 'broken') throw new Error('model folder /nowhere: no config.json');
        return 'ok';
      },
    });
    const sweep = await openSweep<string, string>({ url, id: 's2', version, queue });
    await sweep.submit([
      { name: 'bad', payload: 'broken' },
      { name: 'good', payload: 'fine' },
    ]);
    const failures: [string, string, number][] = [];
    const done: string[] = [];
    const outcome = await sweep.gather(
      {
        done: (n, r) => {
          done.push(`${n}: ${r}`);
        },
        failed: (n, reason, info) => {
          failures.push([n, reason, info.attempts]);
        },
      },
      { pollMs: 50 },
    );
    expect(failures).toEqual([['bad', 'model folder /nowhere: no config.json', 1]]);
    expect(outcome.failed).toEqual([
      { name: 'bad', reason: 'model folder /nowhere: no config.json' },
    ]);
    expect(done).toEqual(['good: ok']);
    expect(tries.sort()).toEqual(['bad', 'good']);
    await worker.stop();
    await sweep.close();
  });

  it('a job that is not a run of a sweep fails with the reason', async () => {
    const queue = freshQueue();
    const q = new Queue(queue, { connection: connectionOf(url) });
    await q.add('stray', { hello: 1 }, { jobId: 'stray' });
    await q.close();
    const worker = await startWorker({ url, version, queue, run: async () => 'never' });
    const failed = await eventually(async () => {
      const j = await jobOf(queue, 'stray');
      return j?.state === 'failed' ? j.job.failedReason : undefined;
    }, 'the stray job to fail');
    expect(failed).toBe(
      'job stray is not a run of a sweep (it needs sweep, name, version and payload)',
    );
    await worker.stop();
  });

  it('a worker of another code version refuses: the run stays queued and the right worker trains it', async () => {
    const queue = freshQueue();
    const sweep = await openSweep<number, number>({ url, id: 's3', version, queue });
    await sweep.submit([{ name: 'only', payload: 7 }]);
    const other: CodeVersion = { packages: { test: '2' }, commit: 'f'.repeat(40) };
    const lines: string[] = [];
    let trained = 0;
    const wrong = await startWorker<number, number>({
      url,
      version: other,
      queue,
      log: (l) => lines.push(l),
      run: async () => {
        trained++;
        return 0;
      },
    });
    const end = await wrong.ended;
    expect(end.reason).toBe('refused');
    expect(end.refusal).toBe(
      `refused s3/only: another code version: it was queued from no git commit, this worker runs ${'f'.repeat(12)}; package versions differ (test 1 there, 2 here); it stays on the queue for a worker of its version`,
    );
    expect(lines).toContain(end.refusal);
    expect(trained).toBe(0);
    expect((await jobOf(queue, 's3.only'))?.state).toBe('waiting');
    const right = await startWorker<number, number>({
      url,
      version,
      queue,
      run: async (job) => job.payload + 1,
    });
    const results: number[] = [];
    await sweep.gather({ done: (_, r) => void results.push(r), failed: () => {} }, { pollMs: 50 });
    expect(results).toEqual([8]);
    await right.stop();
    await sweep.close();
  });

  it('stop() hands running runs back to the queue; the next worker takes them again', async () => {
    const queue = freshQueue();
    const sweep = await openSweep<null, string>({ url, id: 's4', version, queue });
    await sweep.submit([{ name: 'long', payload: null }]);
    let began = false;
    const first = await startWorker<null, string>({
      url,
      version,
      queue,
      run: (_, signal) =>
        new Promise((_resolve, reject) => {
          began = true;
          signal.addEventListener('abort', () => reject(new Error(`aborted: ${signal.reason}`)));
        }),
    });
    await eventually(async () => (began ? true : undefined), 'the first worker to start the run');
    expect(await first.stop()).toEqual({ reason: 'stopped' });
    expect((await jobOf(queue, 's4.long'))?.state).toBe('waiting');
    const second = await startWorker<null, string>({
      url,
      version,
      queue,
      run: async (job) => `attempt ${job.attempt}`,
    });
    const got: string[] = [];
    await sweep.gather({ done: (_, r) => void got.push(r), failed: () => {} }, { pollMs: 50 });
    expect(got).toEqual(['attempt 2']);
    await second.stop();
    await sweep.close();
  });

  it('a worker killed with SIGKILL loses its run to another worker once its lock lapses', async () => {
    const queue = freshQueue();
    const sweep = await openSweep<null, string>({ url, id: 's5', version, queue });
    await sweep.submit([{ name: 'orphan', payload: null }]);
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        new URL('./fixtures/hanging-worker.ts', import.meta.url).pathname,
        redis.url,
        queue,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
      });
      await eventually(
        async () => (out.includes('took orphan 1') ? true : undefined),
        'the child to take the run',
      );
      child.kill('SIGKILL');
      const rescuer = await startWorker<null, string>({
        url,
        version,
        queue,
        ...fast,
        run: async (job) => `attempt ${job.attempt}`,
      });
      const got: string[] = [];
      await sweep.gather({ done: (_, r) => void got.push(r), failed: () => {} }, { pollMs: 100 });
      expect(got).toEqual(['attempt 2']);
      await rescuer.stop();
    } finally {
      child.kill('SIGKILL');
      await sweep.close();
    }
  });

  it('a coordinator that stops leaves the queue as it is; submitting again attaches to it', async () => {
    const queue = freshQueue();
    const first = await openSweep<number, number>({ url, id: 's6', version, queue });
    await first.submit([
      { name: 'a', payload: 1 },
      { name: 'b', payload: 2 },
    ]);
    const stop = new AbortController();
    stop.abort();
    expect(
      await first.gather({ done: () => {}, failed: () => {} }, { signal: stop.signal }),
    ).toEqual({
      interrupted: true,
      failed: [],
    });
    await first.close();
    // Meanwhile a worker finishes both, and one fails and is queued again on the next submit.
    let tries = 0;
    const worker = await startWorker<number, number>({
      url,
      version,
      queue,
      run: async (job) => {
        if (job.payload === 2 && ++tries === 1) throw new Error('flaky');
        return job.payload * 100;
      },
    });
    await eventually(async () => {
      const [a, b] = [await jobOf(queue, 's6.a'), await jobOf(queue, 's6.b')];
      return a?.state === 'completed' && b?.state === 'failed' ? true : undefined;
    }, 'a completed and b failed');
    const again = await openSweep<number, number>({ url, id: 's6', version, queue });
    expect(
      await again.submit([
        { name: 'a', payload: 1 },
        { name: 'b', payload: 2 },
      ]),
    ).toEqual({ queued: ['b'], found: ['a'] });
    const got: Record<string, number> = {};
    await again.gather(
      {
        done: (n, r) => {
          got[n] = r;
        },
        failed: () => {},
      },
      { pollMs: 50 },
    );
    expect(got).toEqual({ a: 100, b: 200 });
    await worker.stop();
    await again.close();
  });

  it('a run removed from the queue by hand is queued again while the coordinator waits', async () => {
    const queue = freshQueue();
    const sweep = await openSweep<number, number>({ url, id: 's7', version, queue });
    await sweep.submit([{ name: 'gone', payload: 5 }]);
    const q = new Queue(queue, { connection: connectionOf(url) });
    await (await q.getJob('s7.gone'))!.remove();
    await q.close();
    const worker = await startWorker<number, number>({
      url,
      version,
      queue,
      run: async (job) => job.payload,
    });
    const got: number[] = [];
    await sweep.gather({ done: (_, r) => void got.push(r), failed: () => {} }, { pollMs: 50 });
    expect(got).toEqual([5]);
    await worker.stop();
    await sweep.close();
  });

  it('an unreachable Redis is one error naming the URL, for the coordinator and the worker', async () => {
    const gone = await startRedis();
    const dead = parseQueueUrl(`${gone.url}/3`);
    await gone.stop();
    const message = new RegExp(
      `^--queue redis://127\\.0\\.0\\.1:${dead.port}/3: cannot reach Redis there \\(.*ECONNREFUSED.*\\); start it \\(npm run redis starts one on this machine\\) or correct the URL$`,
    );
    const coordinator = openSweep({ url: dead, id: 'x', version });
    await expect(coordinator).rejects.toBeInstanceOf(RedisUnreachableError);
    await expect(coordinator).rejects.toThrow(message);
    const worker = startWorker({ url: dead, version, run: async () => null });
    await expect(worker).rejects.toThrow(message);
  });
});
