import { listEnvs, makeEnv, UnknownEnvError } from '@poad/envs-core';
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

describe('registerVirtualHomeEnvs', () => {
  it('registers nothing on import, then all eight ids, idempotently', async () => {
    expect(typeof api.createVirtualHomeEnv).toBe('function');
    expect(listEnvs().filter((id) => id.startsWith('virtualhome/'))).toEqual([]);
    expect(() => makeEnv('virtualhome/entertainment')).toThrow(UnknownEnvError);
    const ids = api.registerVirtualHomeEnvs();
    expect(ids).toEqual(api.VIRTUALHOME_TASKS.map((t) => `virtualhome/${t}`));
    expect(api.registerVirtualHomeEnvs()).toEqual(ids);
    expect(listEnvs()).toEqual(expect.arrayContaining(ids));
    const env = makeEnv('virtualhome/food-preparation/pizza', { maxSteps: 2 });
    expect(env.id).toBe('virtualhome/food-preparation/pizza');
    await env.reset();
    await env.step('walk to the bathroom');
    const second = await env.step('walk to the living room');
    expect(second.truncated).toBe(true);
  });
});
