import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EnvArgumentError, EnvOutputError, NotResetError } from '../src/errors.js';
import { deriveSeed } from '../src/rng.js';
import type { TextEnv, TextStep } from '../src/types.js';
import { makeVecEnv, VecEnv } from '../src/vec-env.js';
import { GuessEnv } from './guess-env.js';

/** Records every reset seed and can hold steps until released. */
class SpyEnv implements TextEnv {
  readonly id = 'test/spy';
  readonly seeds: number[] = [];
  readonly actions: string[] = [];
  closed = 0;
  constructor(private readonly inner: TextEnv = new GuessEnv()) {}
  reset(options?: { seed?: number }): Promise<TextStep> {
    this.seeds.push(options?.seed ?? -1);
    return this.inner.reset(options);
  }
  step(action: string): Promise<TextStep> {
    this.actions.push(action);
    return this.inner.step(action);
  }
  async close(): Promise<void> {
    this.closed += 1;
  }
}

/** An endless env offering five labels, whose result at `atStep` of each episode is changed by `edit`. */
class FaultyEnv implements TextEnv {
  readonly id = 'test/faulty';
  private t = 0;
  constructor(
    private readonly atStep: number,
    private readonly edit: (s: TextStep) => Record<string, unknown>,
  ) {}
  private view(reward: number): TextStep {
    const s: TextStep = {
      observation: `step ${this.t}`,
      actions: [...'01234'].map((n) => `guess ${n}`),
      reward,
      terminated: false,
      truncated: false,
      info: {},
    };
    return (this.t === this.atStep ? this.edit(s) : s) as TextStep;
  }
  async reset(): Promise<TextStep> {
    this.t = 0;
    return this.view(0);
  }
  async step(): Promise<TextStep> {
    this.t += 1;
    return this.view(1);
  }
  async close(): Promise<void> {}
}

describe('VecEnv checks what the envs return', () => {
  const cases: [string, number, (s: TextStep) => Record<string, unknown>, string, RegExp][] = [
    ['a NaN reward', 5, (s) => ({ ...s, reward: Number.NaN }), 'reward', /reward is NaN/],
    ['an infinite reward', 2, (s) => ({ ...s, reward: -Infinity }), 'reward', /-Infinity/],
    ['a reward that is not a number', 1, (s) => ({ ...s, reward: '1' }), 'reward', /string "1"/],
    ['a non-boolean terminated', 3, (s) => ({ ...s, terminated: 1 }), 'terminated', /is 1/],
    ['a missing truncated', 1, (s) => ({ ...s, truncated: undefined }), 'truncated', /undefined/],
    ['an empty label list at reset', 0, (s) => ({ ...s, actions: [] }), 'actions', /empty/],
    ['an empty label list mid-episode', 2, (s) => ({ ...s, actions: [] }), 'actions', /empty/],
    [
      'labels turning into an open space',
      2,
      (s) => ({ ...s, actions: null }),
      'actions',
      /into null/,
    ],
    [
      'a non-string label',
      1,
      (s) => ({ ...s, actions: ['guess 0', 7] }),
      'actions',
      /label 1 is 7/,
    ],
  ];
  for (const [what, atStep, edit, field, message] of cases) {
    it(`rejects ${what}, naming the env id, index, episode and step`, async () => {
      // Env 1 is faulty, env 0 is not.
      const vec = new VecEnv([new FaultyEnv(-1, edit), new FaultyEnv(atStep, edit)], { seed: 3 });
      const run = async () => {
        let steps = await vec.reset();
        for (let t = 0; t < 6; t++) steps = await vec.step(steps.map(() => 'guess 0'));
      };
      const err = await run().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, 'the bad output was handed on').not.toBeNull();
      expect(err).toBeInstanceOf(EnvOutputError);
      const e = err as EnvOutputError;
      expect({
        envId: e.envId,
        index: e.index,
        episode: e.episode,
        step: e.step,
        field: e.field,
      }).toEqual({ envId: 'test/faulty', index: 1, episode: 1, step: atStep, field });
      expect(e.message).toMatch(message);
      expect(e.message).toContain(
        `test/faulty (env 1, episode 1, ${atStep === 0 ? 'reset' : `step ${atStep}`})`,
      );
    });
  }

  it('accepts open action spaces and an empty list on the step that ends an episode', async () => {
    const open = makeVecEnv(() => new GuessEnv({ open: true }), 2, { seed: 1 });
    let steps = await open.reset();
    for (let t = 0; t < 5; t++) steps = await open.step(steps.map(() => '1'));
    const ending = new FaultyEnv(2, (s) => ({ ...s, actions: [], truncated: true }));
    const vec = new VecEnv([ending]);
    await vec.reset();
    await vec.step(['guess 0']);
    const [done] = await vec.step(['guess 0']);
    expect(done!.truncated).toBe(true);
    expect(done!.actions).toEqual([...'01234'].map((n) => `guess ${n}`));
  });
});

describe('VecEnv', () => {
  it('derives reset seeds from the base seed, env index and episode counter', async () => {
    const spies = [new SpyEnv(), new SpyEnv(), new SpyEnv()];
    const vec = new VecEnv(spies, { seed: 42 });
    await vec.reset();
    await vec.reset();
    spies.forEach((spy, i) => {
      expect(spy.seeds).toEqual([deriveSeed(42, i, 0), deriveSeed(42, i, 1)]);
    });
    expect(vec.episodeSeed(2, 1)).toBe(deriveSeed(42, 2, 1));
    expect(new VecEnv([new SpyEnv()]).episodeSeed(0, 0)).toBe(deriveSeed(0, 0, 0));
  });

  it('auto-resets in the same step and reports the finished episode in info', async () => {
    // maxSteps 1: every step ends the episode
    const vec = makeVecEnv(() => new GuessEnv({ maxSteps: 1 }), 2, { seed: 5 });
    const first = await vec.reset();
    const out = await vec.step(['guess 0', 'guess 1']);
    // reproduce by hand: the same env, seeded like the VecEnv's first episode
    for (let i = 0; i < 2; i++) {
      const manual = new GuessEnv({ maxSteps: 1 });
      await manual.reset({ seed: deriveSeed(5, i, 0) });
      const finished = await manual.step(`guess ${i}`);
      const next = await manual.reset({ seed: deriveSeed(5, i, 1) });
      const got = out[i] as TextStep;
      expect(got.observation).toBe(next.observation);
      expect(got.actions).toEqual(next.actions);
      expect(got.reward).toBe(finished.reward);
      expect(got.terminated).toBe(finished.terminated);
      expect(got.truncated).toBe(finished.truncated);
      expect(got.info.finalObservation).toBe(finished.observation);
      expect(got.info.finalActions).toEqual(finished.actions);
      expect(got.info.finalInfo).toEqual(finished.info);
      expect(got.info.episode).toEqual({
        discountedReturn: finished.info.discountedReturn,
        length: 1,
        success: finished.reward === 1,
      });
      expect(first[i]?.observation).toBe(
        (await new GuessEnv().reset({ seed: deriveSeed(5, i, 0) })).observation,
      );
    }
  });

  it('equals stepping each env by hand with the derived seeds (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.array(fc.nat(4), { minLength: 4, maxLength: 4 }), { maxLength: 12 }),
        async (seed, n, moves) => {
          const vec = makeVecEnv(() => new GuessEnv(), n, { seed });
          await vec.reset();
          const manual = Array.from({ length: n }, () => new GuessEnv());
          const episodes = manual.map(() => 0);
          await Promise.all(
            manual.map((env, i) => env.reset({ seed: deriveSeed(seed, i, episodes[i]!++) })),
          );
          for (const move of moves) {
            const actions = move.slice(0, n).map((g) => `guess ${g}`);
            const got = await vec.step(actions);
            for (let i = 0; i < n; i++) {
              let want = await manual[i]!.step(actions[i]!);
              const rewardWanted = want.reward;
              if (want.terminated || want.truncated) {
                expect(got[i]!.info.episode).toMatchObject({ length: want.info.length });
                want = await manual[i]!.reset({ seed: deriveSeed(seed, i, episodes[i]!++) });
              }
              expect(got[i]!.observation).toBe(want.observation);
              expect(got[i]!.reward).toBe(rewardWanted);
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('steps the envs concurrently', async () => {
    let started = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    class SlowEnv extends GuessEnv {
      override async step(action: string): Promise<TextStep> {
        started += 1;
        if (started === 3) release();
        await gate; // would deadlock if the envs were stepped one after another
        return super.step(action);
      }
    }
    const vec = makeVecEnv(() => new SlowEnv(), 3);
    await vec.reset();
    const out = await vec.step(['guess 0', 'guess 0', 'guess 0']);
    expect(out).toHaveLength(3);
    expect(started).toBe(3);
  });

  it('falls back to the reward sum and step count when an env gives no episode info', async () => {
    const vec = makeVecEnv(() => new GuessEnv({ bug: 'no-return-info', maxSteps: 2 }), 1, {
      seed: 1,
    });
    await vec.reset();
    let out = await vec.step(['guess 0']);
    if (!(out[0]!.terminated || out[0]!.truncated)) out = await vec.step(['guess 0']);
    const ep = out[0]!.info.episode as { discountedReturn: number; length: number };
    expect(ep.length).toBeGreaterThanOrEqual(1);
    expect(ep.discountedReturn).toBe(out[0]!.reward);
    expect('success' in ep).toBe(false);
  });

  it('rejects wrong usage with typed errors', async () => {
    expect(() => new VecEnv([])).toThrow(EnvArgumentError);
    expect(() => makeVecEnv(() => new GuessEnv(), 0)).toThrow(/makeVecEnv\(n\)/);
    expect(() => new VecEnv([new GuessEnv()], { seed: 0.5 })).toThrow(EnvArgumentError);
    const vec = makeVecEnv(() => new GuessEnv(), 2);
    await expect(vec.step(['guess 0', 'guess 1'])).rejects.toBeInstanceOf(NotResetError);
    await vec.reset();
    await expect(vec.step(['guess 0'])).rejects.toThrow(/expected 2 actions/);
    const pending = vec.step(['guess 0', 'guess 1']);
    await expect(vec.step(['guess 0', 'guess 1'])).rejects.toThrow(/has not finished/);
    await pending;
  });

  it('closes every env once, even when close is called twice', async () => {
    const spies = [new SpyEnv(), new SpyEnv()];
    const vec = new VecEnv(spies);
    expect(vec.size).toBe(2);
    await vec.close();
    await vec.close();
    expect(spies.map((s) => s.closed)).toEqual([1, 1]);
    await expect(vec.reset()).rejects.toThrow(/closed/);
  });
});

describe('VecEnv state and restore', () => {
  const play = async (vec: VecEnv, steps: TextStep[], choices: number[]) => {
    const out: TextStep[] = [];
    let cur = steps;
    for (const c of choices) {
      const actions = cur.map(
        (s) => (s.actions as readonly string[])[c % (s.actions as readonly string[]).length]!,
      );
      cur = await vec.step(actions);
      out.push(...cur);
    }
    return out;
  };

  it('a restored VecEnv continues exactly like the original (replay of the saved actions)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 1000 }),
        fc.array(fc.nat(50), { maxLength: 25 }),
        fc.array(fc.nat(50), { minLength: 1, maxLength: 25 }),
        async (seed, before, after) => {
          const a = makeVecEnv(() => new GuessEnv(), 3, { seed });
          const start = await a.reset();
          const mid = await play(a, start, before);
          const state = JSON.parse(JSON.stringify(a.getState()));
          const current = before.length ? mid.slice(-3) : start;
          const continued = await play(a, current, after);

          const b = makeVecEnv(() => new GuessEnv(), 3, { seed });
          const restored = await b.restore(state);
          expect(restored.map((s) => s.observation)).toEqual(current.map((s) => s.observation));
          const replayed = await play(b, restored, after);
          expect(replayed.map((s) => [s.observation, s.reward, s.terminated, s.truncated])).toEqual(
            continued.map((s) => [s.observation, s.reward, s.terminated, s.truncated]),
          );
          expect(b.getState()).toEqual(a.getState());
        },
      ),
      { numRuns: 60 },
    );
  });

  it('rejects a state saved with another seed or size, and getState before reset', async () => {
    const a = makeVecEnv(() => new GuessEnv(), 2, { seed: 1 });
    expect(() => a.getState()).toThrow(NotResetError);
    await a.reset();
    const state = a.getState();
    await expect(makeVecEnv(() => new GuessEnv(), 2, { seed: 2 }).restore(state)).rejects.toThrow(
      /same number of envs and seed/,
    );
    await expect(makeVecEnv(() => new GuessEnv(), 3, { seed: 1 }).restore(state)).rejects.toThrow(
      EnvArgumentError,
    );
  });
});

describe('VecEnv group resets and partial steps', () => {
  it('resetWith gives each env the seed it is handed, stepSome steps only the named envs', async () => {
    const spies = [new SpyEnv(), new SpyEnv(), new SpyEnv(), new SpyEnv()];
    const vec = new VecEnv(spies, { seed: 3 });
    // Two groups of two envs: each group's envs start from one seed.
    const first = await vec.resetWith([11, 11, 22, 22]);
    expect(spies.map((s) => s.seeds)).toEqual([[11], [11], [22], [22]]);
    expect(first[0]!.observation).toBe(first[1]!.observation);
    const out = await vec.stepSome([null, 'guess 0', null, 'guess 1']);
    expect(out[0]).toBeNull();
    expect(out[2]).toBeNull();
    expect(out[1]).not.toBeNull();
    expect(spies.map((s) => s.actions.length)).toEqual([0, 1, 0, 1]);
    // A later plain reset takes the derived seeds again, counting the explicit reset.
    await vec.reset();
    for (const [i, spy] of spies.entries()) expect(spy.seeds.at(-1)).toBe(deriveSeed(3, i, 1));
    await expect(vec.resetWith([1, 2])).rejects.toThrow(/expected 4 integer seeds/);
    await expect(vec.stepSome(['guess 0'])).rejects.toThrow(/expected 4 entries/);
  });

  it('restore replays from the given seeds, and equals the original afterwards', async () => {
    const a = makeVecEnv(() => new GuessEnv(), 4, { seed: 9 });
    let steps = await a.resetWith([5, 5, 6, 6]);
    const pick = (s: TextStep | null) => (s ? (s.actions as readonly string[])[1]! : null);
    const partial = await a.stepSome(steps.map((s, i) => (i % 2 ? pick(s) : null)));
    steps = steps.map((s, i) => partial[i] ?? s);
    const state = JSON.parse(JSON.stringify(a.getState()));
    expect(state.seeds).toEqual([5, 5, 6, 6]);
    const b = makeVecEnv(() => new GuessEnv(), 4, { seed: 9 });
    const restored = await b.restore(state);
    expect(restored.map((s) => s.observation)).toEqual(steps.map((s) => s.observation));
    expect(b.getState()).toEqual(a.getState());
    const next = steps.map((s) => pick(s)!);
    const [x, y] = [await a.step(next), await b.step(next)];
    expect(y.map((s) => [s.observation, s.reward])).toEqual(
      x.map((s) => [s.observation, s.reward]),
    );
    await expect(
      makeVecEnv(() => new GuessEnv(), 4, { seed: 9 }).restore({ ...state, seeds: [1.5, 0, 0, 0] }),
    ).rejects.toThrow(/does not fit this VecEnv/);
  });
});
