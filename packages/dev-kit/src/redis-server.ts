// A throwaway Redis server: Debian's redis-server on a free 127.0.0.1 port, nothing persisted, its
// folder removed when it stops. Tests of the sweep queue start one each; `npm run redis` starts
// one for trying a sweep by hand.
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** No `redis-server` on this machine. */
export class RedisServerMissingError extends Error {
  override readonly name = 'RedisServerMissingError';
}

/** A running Redis server of {@link startRedis}. */
export interface RedisServer {
  /** `redis://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  /** The server's process id. */
  readonly pid: number;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its folder. */
  stop(): Promise<void>;
}

/** The `redis-server` executable on PATH (or Debian's /usr/bin, /usr/sbin), or null. */
export function redisServerPath(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    const file = join(dir, 'redis-server');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts redis-server on `port` in `dir`; resolves once it accepts connections. */
function launch(bin: string, port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    bin,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      if (out.includes('Ready to accept connections')) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        child.stderr!.resume();
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => {
      out += d;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(
        new Error(
          `redis-server on 127.0.0.1:${port} exited (${signal ?? `code ${code}`}) before accepting connections:\n${out.trim()}`,
        ),
      ),
    );
  });
}

/**
 * Starts a Redis server on a free port of 127.0.0.1 (or `port`), with no persistence, in a
 * temporary folder. It is stopped by `stop()`, or killed when this process exits.
 * @throws RedisServerMissingError naming how to install it when there is no redis-server.
 */
export async function startRedis(o: { port?: number } = {}): Promise<RedisServer> {
  const bin = redisServerPath();
  if (!bin) {
    throw new RedisServerMissingError(
      "redis-server not found (on PATH, /usr/bin or /usr/sbin); install Debian's redis-server package (apt-get install redis-server; .ci/run installs it)",
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'poad-redis-'));
  let child: ChildProcess | undefined;
  let port = 0;
  // A free port can be taken by another process before the server binds it: try a few.
  for (let attempt = 1; !child; attempt++) {
    port = o.port ?? (await freePort());
    try {
      child = await launch(bin, port, dir);
    } catch (err) {
      if (o.port !== undefined || attempt >= 5) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
  const server = child;
  const killOnExit = () => server.kill('SIGKILL');
  process.on('exit', killOnExit);
  const exited = new Promise<void>((resolve) => {
    if (server.exitCode !== null || server.signalCode !== null) resolve();
    else server.once('exit', () => resolve());
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: server.pid!,
    async stop() {
      process.off('exit', killOnExit);
      server.kill('SIGTERM');
      const timer = setTimeout(() => server.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
