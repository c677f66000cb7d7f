import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  allowedTokenSets,
  nextTokenSets,
  resolveConfig,
  type TokenBatch,
  type TokenPolicy,
} from '../src/index.js';
import { useCpu } from './backend.js';
import { KeyTokenVecEnv, keyTokenTask } from './key-token-env.js';
import { TinyPolicy } from './tiny-policy.js';
import { disposedAfterEach, rolloutFromReset } from './trainer-setup.js';

beforeAll(useCpu);
const live = disposedAfterEach();

/** Candidates that differ from their first token on, so that the first-token set has several ids. */
const task = (() => {
  const t = keyTokenTask(3);
  // 'f0 kX f2' → 'kX f0 f2': the key word first.
  const candidates = t.candidates.map((c) => {
    const w = c.split(' ');
    return [w[1], w[0], ...w.slice(2)].join(' ');
  });
  return { ...t, candidates };
})();

/** Records the `allowed` sets the collector hands to the critic. */
function recording(inner: TinyPolicy) {
  const seen = { token: [] as TokenBatch[], prompt: [] as (readonly Int32Array[] | undefined)[] };
  const policy: TokenPolicy = {
    encodePrompt: (o) => inner.encodePrompt(o),
    encodeContinuations: (o, c) => inner.encodeContinuations(o, c),
    scoreTokens: (b) => inner.scoreTokens(b),
    tokenValues: (b) => {
      seen.token.push(b);
      return inner.tokenValues(b);
    },
    promptValues: (p, allowed) => {
      seen.prompt.push(allowed);
      return inner.promptValues(p);
    },
    actorVariables: inner.actorVariables,
    criticVariables: inner.criticVariables,
  };
  return { policy, seen };
}

describe("the critic's token space in collectRollout", () => {
  for (const tokenSpace of ['labels', 'vocabulary'] as const) {
    it(`${tokenSpace}: ${tokenSpace === 'labels' ? 'passes each position’s label-tree set and the next labels’ first tokens' : 'passes no allowed sets'}`, async () => {
      const inner = new TinyPolicy({ words: task.words, seed: 3 });
      live.push(inner);
      const { policy, seen } = recording(inner);
      const env = new KeyTokenVecEnv(task, 3);
      const config = resolveConfig({ algorithm: 'poad', numSteps: 2, tokenSpace, seed: 1 });
      const before = tf.memory().numTensors;
      const { buffer } = await rolloutFromReset({ policy, env, config }, 1);
      expect(tf.memory().numTensors).toBe(before);
      expect(seen.token).toHaveLength(2);
      expect(seen.prompt).toHaveLength(1);
      if (tokenSpace === 'vocabulary') {
        expect(seen.token.every((b) => b.allowed === undefined)).toBe(true);
        expect(seen.prompt[0]).toBeUndefined();
        return;
      }
      const cands = await inner.encodeContinuations(task.prompt, task.candidates);
      const firsts = new Set(cands.map((c) => c[0]));
      expect(firsts.size).toBeGreaterThan(1);
      // Step t's batch: the chosen label's continuation sets, as the actor's update sees them.
      seen.token.forEach((b, t) => {
        const rows = Array.from({ length: 3 }, (_, i) => t * 3 + i);
        expect(b.allowed).toEqual(allowedTokenSets(buffer, rows));
        b.allowed!.forEach((sets, i) => {
          const chosen = cands.findIndex((c) => c.join() === b.actions[i]!.join());
          expect(sets).toEqual(nextTokenSets(cands)[chosen]);
        });
      });
      // Bootstrap: the first tokens of the next observation's labels.
      for (const set of seen.prompt[0]!) expect(new Set(set)).toEqual(firsts);
    });
  }
});
