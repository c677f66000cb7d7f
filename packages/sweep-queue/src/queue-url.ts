// The address of a sweep's queue: a Redis server, written redis://HOST:PORT[/DB].
import { OptionError } from '@poad/config';

/** A queue URL, parsed and checked. */
export interface QueueUrl {
  /** The URL for messages, its password replaced by `***`. */
  readonly display: string;
  readonly host: string;
  readonly port: number;
  /** The Redis database index (the URL's path; 0 when it has none). */
  readonly db: number;
  /** `rediss://`: the connection uses TLS. */
  readonly tls: boolean;
  readonly username?: string;
  readonly password?: string;
}

/** A queue URL that is not `redis://HOST:PORT[/DB]`. */
export class QueueUrlError extends OptionError {
  override readonly name = 'QueueUrlError';
}

const FORM =
  'redis://HOST:PORT[/DB], e.g. redis://127.0.0.1:6379/0 (rediss:// for TLS, redis://:PASSWORD@HOST:PORT with a password)';

/**
 * Parses a queue URL: `redis://` or `rediss://`, a host, an optional port (6379) and an optional
 * database index as the path (0).
 * @param flag how the message names the input, e.g. `--queue`.
 * @throws QueueUrlError naming the input and the expected form.
 */
export function parseQueueUrl(text: string, flag = '--queue'): QueueUrl {
  const fail = (why: string): never => {
    throw new QueueUrlError(`${flag} ${JSON.stringify(text)}: ${why}; write it as ${FORM}`, {
      option: 'queue',
      reason: why,
      label: flag,
    });
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('not a URL (a host with a numeric port is needed)');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    return fail(`the scheme ${url.protocol.replace(/:$/, '')}:// is not Redis's`);
  if (!url.hostname) return fail('no host');
  if (url.search || url.hash) return fail('a query or fragment is not understood');
  const path = url.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d+$/.test(path))
    return fail(`the path ${JSON.stringify(url.pathname)} is not a database index`);
  const db = path === '' ? 0 : Number(path);
  const port = url.port === '' ? 6379 : Number(url.port);
  const username = url.username ? decodeURIComponent(url.username) : undefined;
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  const auth = username || password ? `${username ?? ''}${password ? ':***' : ''}@` : '';
  return {
    display: `${url.protocol}//${auth}${url.hostname}:${port}/${db}`,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    db,
    tls: url.protocol === 'rediss:',
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
  };
}
