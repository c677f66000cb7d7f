// The README's example runs against the built package, on a Redis server of its own, and prints
// what its `// prints:` lines say.
import {
  inCI,
  type RedisServer,
  redisServerPath,
  runReadmeExample,
  startRedis,
} from '@poad/dev-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe.skipIf(!redisServerPath() && !inCI())('README', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('runs the example and prints what it shows', () => {
    process.env.REDIS_URL = redis.url;
    try {
      const r = runReadmeExample(new URL('..', import.meta.url).pathname, 'example.mjs');
      expect(r.shown).toEqual(['1 4 9', '0 false']);
      expect(r.out).toEqual(r.shown);
    } finally {
      delete process.env.REDIS_URL;
    }
  });
});
