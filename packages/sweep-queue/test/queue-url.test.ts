import { describe, expect, it } from 'vitest';
import { parseQueueUrl, QueueUrlError } from '../src/index.js';

describe('parseQueueUrl', () => {
  it('reads host, port, database, TLS and credentials; the display hides the password', () => {
    expect(parseQueueUrl('redis://127.0.0.1:6380/2')).toEqual({
      display: 'redis://127.0.0.1:6380/2',
      host: '127.0.0.1',
      port: 6380,
      db: 2,
      tls: false,
    });
    expect(parseQueueUrl('redis://queue.lab')).toMatchObject({ port: 6379, db: 0 });
    expect(parseQueueUrl('redis://h:1/')).toMatchObject({ db: 0 });
    const secret = parseQueueUrl('rediss://lab:p%40ss@queue.lab:6390/1');
    expect(secret).toMatchObject({ tls: true, username: 'lab', password: 'p@ss', db: 1 });
    expect(secret.display).toBe('rediss://lab:***@queue.lab:6390/1');
    expect(parseQueueUrl('redis://:pw@[::1]:7000').host).toBe('::1');
  });

  it.each([
    ['127.0.0.1:6379', /not a URL/],
    ['redis://host:port', /not a URL/],
    ['http://127.0.0.1:6379', /the scheme http:\/\/ is not Redis's/],
    ['redis://127.0.0.1:6379/zero', /the path "\/zero" is not a database index/],
    ['redis://127.0.0.1:6379/0?timeout=1', /a query or fragment is not understood/],
    ['redis://', /no host|not a URL/],
  ])('refuses %s with a typed error naming the input and the form', (text, why) => {
    let err: unknown;
    try {
      parseQueueUrl(text, '--queue');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(QueueUrlError);
    const message = (err as Error).message;
    expect(message).toMatch(why);
    expect(message.startsWith(`--queue ${JSON.stringify(text)}: `)).toBe(true);
    expect(message).toContain('redis://HOST:PORT[/DB]');
    expect((err as QueueUrlError).option).toBe('queue');
  });
});
