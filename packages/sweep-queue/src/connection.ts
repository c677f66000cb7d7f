// Connecting to a queue's Redis: the options BullMQ gets, and a check that the server answers
// before anything is written or enqueued.
import { OptionError } from '@poad/config';
import type { RedisOptions } from 'bullmq';
import { Redis } from 'ioredis';
import type { QueueUrl } from './queue-url.js';

/** A Redis server that does not answer (or refuses the credentials). */
export class RedisUnreachableError extends OptionError {
  override readonly name = 'RedisUnreachableError';
}

/** The connection options of `url` for BullMQ's queues and workers. */
export function connectionOf(url: QueueUrl): RedisOptions {
  return {
    host: url.host,
    port: url.port,
    db: url.db,
    ...(url.username ? { username: url.username } : {}),
    ...(url.password ? { password: url.password } : {}),
    ...(url.tls ? { tls: {} } : {}),
    // Workers block on Redis; BullMQ needs commands to wait for a reconnection, not fail.
    maxRetriesPerRequest: null,
  };
}

/**
 * Connects to `url` once and sends PING; resolves when the server answers.
 * @throws RedisUnreachableError, one line naming the URL, the cause and the fix.
 */
export async function checkRedis(
  url: QueueUrl,
  o: { timeoutMs?: number; flag?: string } = {},
): Promise<void> {
  const client = new Redis({
    ...connectionOf(url),
    lazyConnect: true,
    connectTimeout: o.timeoutMs ?? 5000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let last: Error | undefined;
  client.on('error', (err: Error) => {
    last = err;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    const cause = (last ?? (err as Error)).message.replace(/\s+/g, ' ').trim();
    const auth = /NOAUTH|WRONGPASS|invalid password|invalid username/i.test(cause);
    throw new RedisUnreachableError(
      `${o.flag ?? '--queue'} ${url.display}: ${
        auth
          ? `Redis refused the credentials (${cause}); put the right user and password in the URL`
          : `cannot reach Redis there (${cause}); start it (npm run redis starts one on this machine) or correct the URL`
      }`,
      { option: 'queue', label: o.flag ?? '--queue', reason: cause },
    );
  } finally {
    client.disconnect();
  }
}
