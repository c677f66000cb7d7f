import fc from 'fast-check';
import type { TokenAction, TokenMdp } from '../src/index.js';

/** γ for the value iterations: below 1, so every backup contracts. */
export const gammaArb = fc.double({ min: 0, max: 0.95, noNaN: true });
/** β, the temperature of the soft backups. */
export const betaArb = fc.double({ min: 0.05, max: 5, noNaN: true });

/** Removes duplicates and any sequence that is a prefix of another, keeping the order. */
export function prefixFree(seqs: number[][]): number[][] {
  const isPrefix = (a: number[], b: number[]) =>
    a.length <= b.length && a.every((x, i) => b[i] === x);
  const unique = seqs.filter((s, i) => seqs.findIndex((t) => t.join() === s.join()) === i);
  return unique.filter((s) => !unique.some((t) => t !== s && isPrefix(s, t)));
}

/** Random token MDPs: a few states, prefix-free token actions over a tiny vocabulary. */
export function tokenMdpArb(opts: { maxLen?: number; minReward?: number } = {}) {
  const { maxLen = 4, minReward = -1 } = opts;
  return fc.integer({ min: 1, max: 5 }).chain((S) =>
    fc
      .array(
        fc.array(
          fc.record({
            tokens: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: maxLen }),
            reward: fc.double({ min: minReward, max: 1, noNaN: true }),
            next: fc.array(
              fc.record({
                state: fc.integer({ min: 0, max: S - 1 }),
                w: fc.double({ min: 0.05, max: 1, noNaN: true }),
              }),
              { maxLength: 2 },
            ),
            cont: fc.double({ min: 0, max: 1, noNaN: true }),
          }),
          { minLength: 1, maxLength: 5 },
        ),
        { minLength: S, maxLength: S },
      )
      .map(
        (states): TokenMdp => ({
          states: states.map((raw, s) => {
            const keep = prefixFree(raw.map((a) => a.tokens));
            const actions: TokenAction[] = keep.map((tokens) => {
              const a = raw.find((x) => x.tokens.join() === tokens.join())!;
              const total = a.next.reduce((acc, n) => acc + n.w, 0);
              return {
                tokens,
                reward: a.reward,
                next: a.next.map((n) => ({ state: n.state, prob: (a.cont * n.w) / total })),
              };
            });
            // Make the last state terminal sometimes, so terminal states are covered.
            return { actions: s === S - 1 && S > 1 && raw.length === 1 ? [] : actions };
          }),
        }),
      ),
  );
}

/** Appends the same `extra` tokens to every action (keeps the actions prefix-free). */
export function lengthen(mdp: TokenMdp, extra: number[]): TokenMdp {
  return {
    states: mdp.states.map((st) => ({
      actions: st.actions.map((a) => ({ ...a, tokens: [...a.tokens, ...extra] })),
    })),
  };
}
