import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { nextTokenSets, SeededRng, selectActions, type TokenPolicy } from '../src/index.js';
import { useCpu } from './backend.js';
import { KeyTokenVecEnv, keyTokenTask } from './key-token-env.js';
import { TinyPolicy } from './tiny-policy.js';
import { disposedAfterEach } from './trainer-setup.js';

beforeAll(useCpu);
const task = keyTokenTask(4);
const live = disposedAfterEach();

/** Async tokenisation plus a scoreCandidates fast path built from scoreTokens, counting calls. */
function asyncWithFastPath(inner: TinyPolicy): TokenPolicy & { fastCalls: number } {
  const wrapped = {
    fastCalls: 0,
    encodePrompt: async (o: string) => inner.encodePrompt(o),
    encodeContinuations: async (o: string, c: readonly string[]) => inner.encodeContinuations(o, c),
    scoreTokens: (b: Parameters<TokenPolicy['scoreTokens']>[0]) => inner.scoreTokens(b),
    tokenValues: (b: Parameters<TokenPolicy['tokenValues']>[0]) => inner.tokenValues(b),
    promptValues: (p: readonly Int32Array[]) => inner.promptValues(p),
    async scoreCandidates(
      prompts: readonly Int32Array[],
      cands: readonly (readonly Int32Array[])[],
    ) {
      wrapped.fastCalls++;
      return Promise.all(
        prompts.map(async (p, j) => {
          const ids = cands[j]!;
          const width = Math.max(...ids.map((x) => x.length));
          const t = tf.tidy(() => {
            const lp = inner.scoreTokens({
              prompts: ids.map(() => p),
              actions: ids,
              width,
            }).logProbs;
            return lp;
          });
          const data = (await t.data()) as Float32Array;
          t.dispose();
          return ids.map((x, c) => data.slice(c * width, c * width + x.length));
        }),
      );
    },
    actorVariables: inner.actorVariables,
    criticVariables: inner.criticVariables,
  };
  return wrapped;
}

describe('selectActions', () => {
  const opts = (greedy: boolean, seed = 5) => ({
    greedy,
    candidateNormalisation: 'words' as const,
    maxNewTokens: 8,
    temperature: 1,
    topK: 0,
    rng: new SeededRng(seed),
  });

  it('gives the same choices through the scoreCandidates fast path and async tokenisation', async () => {
    const inner = new TinyPolicy({ words: task.words, seed: 3 });
    live.push(inner);
    const env = new KeyTokenVecEnv(task, 4);
    const steps = await env.reset();
    const fast = asyncWithFastPath(inner);
    const a = await selectActions(inner, steps, opts(false));
    const b = await selectActions(fast, steps, opts(false));
    expect(fast.fastCalls).toBe(1);
    expect(b.labels).toEqual(a.labels);
    expect(b.actionIds.map((x) => Array.from(x))).toEqual(a.actionIds.map((x) => Array.from(x)));
    b.logProbs.forEach((lp, i) => {
      Array.from(lp).forEach((v, k) => {
        expect(v).toBeCloseTo(a.logProbs[i]![k]!, 5);
      });
    });
  });

  it('greedy picks the highest normalised candidate score and is repeatable', async () => {
    const inner = new TinyPolicy({ words: task.words, seed: 4 });
    live.push(inner);
    const steps = await new KeyTokenVecEnv(task, 2).reset();
    const a = await selectActions(inner, steps, opts(true, 1));
    const b = await selectActions(inner, steps, opts(true, 99));
    expect(b.labels).toEqual(a.labels);
    for (const c of a.candidates) {
      const probs = c!.normalisers.length;
      expect(probs).toBe(task.candidates.length);
      expect(c!.actionLogProb).toBeLessThanOrEqual(0);
    }
    // actionProbs: a distribution over the labels whose arg-max is the greedy choice.
    a.actionProbs.forEach((p, i) => {
      expect(p!.length).toBe(steps[i]!.actions!.length);
      expect(p!.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 10);
      const best = p!.indexOf(Math.max(...p!));
      expect(a.labels[i]).toBe(steps[i]!.actions![best]);
      expect(Math.log(p![best]!)).toBeCloseTo(a.candidates[i]!.actionLogProb, 5);
    });
  });

  it('labelMass is the next-token probability summed over the distinct first tokens of the labels', async () => {
    const inner = new TinyPolicy({ words: task.words, seed: 6 });
    live.push(inner);
    const steps = await new KeyTokenVecEnv(task, 3).reset();
    const a = await selectActions(inner, steps, opts(false, 2));
    for (let i = 0; i < steps.length; i++) {
      const labels = steps[i]!.actions!;
      const ids = await inner.encodeContinuations(steps[i]!.observation, labels);
      const first = [...new Set(ids.map((x) => x[0]!))];
      // Independently: one teacher-forced pass per distinct first token.
      const t = tf.tidy(
        () =>
          inner.scoreTokens({
            prompts: first.map(() => a.prompts[i]!),
            actions: first.map((id) => Int32Array.of(id)),
            width: 1,
          }).logProbs,
      );
      const lp = (await t.data()) as Float32Array;
      t.dispose();
      const expected = Array.from(lp).reduce((s, l) => s + Math.exp(l), 0);
      expect(a.labelMass[i]).toBeCloseTo(expected, 5);
      expect(a.labelMass[i]!).toBeGreaterThan(0);
      expect(a.labelMass[i]!).toBeLessThanOrEqual(1 + 1e-6);
      // Shared first tokens count once: the sum is not over labels.
      if (first.length < labels.length) {
        const perLabel = ids.reduce((s, x) => {
          const k = first.indexOf(x[0]!);
          return s + Math.exp(lp[k]!);
        }, 0);
        expect(perLabel).toBeGreaterThan(a.labelMass[i]!);
      }
    }
  });

  it("tokenSpace 'labels': samples from the product of restricted token probabilities, which scoreTokens with allowed reproduces", async () => {
    const inner = new TinyPolicy({ words: task.words, seed: 8 });
    live.push(inner);
    const steps = await new KeyTokenVecEnv(task, 3).reset();
    const a = await selectActions(inner, steps, { ...opts(false, 4), tokenSpace: 'labels' });
    const v = await selectActions(inner, steps, opts(false, 4));
    const keyPos = task.keyPos;
    for (let i = 0; i < steps.length; i++) {
      const probs = a.actionProbs[i]!;
      expect(probs.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 10);
      // The candidates differ only in the key word: every other token is forced (log-prob 0).
      const lp = Array.from(a.logProbs[i]!);
      lp.forEach((x, k) => {
        if (k !== keyPos) expect(x).toBe(0);
      });
      expect(Math.exp(lp[keyPos]!)).toBeCloseTo(probs[a.candidates[i]!.chosen]!, 5);
      // Restricted and full-vocabulary scores differ (the LM leaks mass off the labels).
      expect(lp[keyPos]!).toBeGreaterThan(Array.from(v.logProbs[i]!)[keyPos]!);
      // The update's recomputation: scoreTokens with the label tree's next-token sets.
      const cands = a.candidates[i]!.ids;
      const t = tf.tidy(
        () =>
          inner.scoreTokens({
            prompts: [a.prompts[i]!],
            actions: [a.actionIds[i]!],
            width: a.actionIds[i]!.length,
            allowed: [nextTokenSets(cands)[a.candidates[i]!.chosen]!],
          }).logProbs,
      );
      const again = Array.from((await t.data()) as Float32Array);
      t.dispose();
      again.forEach((x, k) => {
        expect(x).toBeCloseTo(lp[k]!, 5);
      });
    }
    // Sampling follows those probabilities: 400 draws against the first step's distribution.
    const counts = new Array(task.candidates.length).fill(0);
    const rng = new SeededRng(11);
    const one = [steps[0]!];
    for (let n = 0; n < 400; n++) {
      const s = await selectActions(inner, one, { ...opts(false), rng, tokenSpace: 'labels' });
      counts[s.candidates[0]!.chosen] += 1;
    }
    a.actionProbs[0]!.forEach((p, c) => {
      expect(Math.abs(counts[c] / 400 - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / 400) + 0.01);
    });
  });
});
