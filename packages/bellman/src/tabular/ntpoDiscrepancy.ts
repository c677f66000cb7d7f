import { actionQIteration } from './actionQIteration.js';
import { greedyTokenDecode } from './greedyTokenDecode.js';
import { type IterationOptions, iterationLimits } from './options.js';
import { expectedNext, type TokenMdp } from './tokenMdp.js';
import { ntpoQIteration } from './tokenQIteration.js';

/** How far NTPO's token-level optimum is from the action-level one. */
export interface NtpoDiscrepancy {
  /** max_s |V_NTPO(o_s) − V*(o_s)|. */
  maxValueGap: number;
  /** max_{s,a} |Q_NTPO at the last token of a − Q*(s, a)|. */
  maxLastTokenGap: number;
  /** States where greedy NTPO decoding picks an action that is not action-level optimal. */
  suboptimalStates: number[];
  /** V*(s) − V^π(s) for the action-level policy π that greedy NTPO decoding induces. */
  regret: Float64Array;
}

/**
 * Compares NTPO (γ_w = `intraGamma`, default γ) with the action-level optimum on a token MDP.
 * With γ_w = 1 all gaps are zero up to the iteration tolerance; with γ_w < 1 they grow with the
 * length of the actions (paper eq. 11–12).
 */
export function ntpoDiscrepancy(
  mdp: TokenMdp,
  options: { gamma: number; intraGamma?: number; optimalityTolerance?: number } & IterationOptions,
): NtpoDiscrepancy {
  const { tolerance, maxIterations } = iterationLimits(options);
  const tol = options.optimalityTolerance ?? 1e-9;
  const star = actionQIteration(mdp, options);
  const ntpo = ntpoQIteration(mdp, options);
  const S = mdp.states.length;
  let maxValueGap = 0;
  let maxLastTokenGap = 0;
  const policy = new Int32Array(S).fill(-1);
  const suboptimalStates: number[] = [];
  for (let s = 0; s < S; s++) {
    maxValueGap = Math.max(maxValueGap, Math.abs(ntpo.v[s]![0]! - star.v[s]!));
    const trie = ntpo.tries[s]!;
    for (let a = 0; a < trie.actionNode.length; a++) {
      const gap = Math.abs(ntpo.q[s]![trie.actionNode[a]!]! - star.q[s]![a]!);
      maxLastTokenGap = Math.max(maxLastTokenGap, gap);
    }
    if (trie.actionNode.length === 0) continue;
    const { action } = greedyTokenDecode(ntpo, s);
    policy[s] = action;
    if (star.q[s]![action]! < star.v[s]! - tol) suboptimalStates.push(s);
  }
  // Evaluate the induced deterministic policy at the action level.
  let v = new Float64Array(S);
  let next = new Float64Array(S);
  for (let it = 0; it < maxIterations; it++) {
    let residual = 0;
    for (let s = 0; s < S; s++) {
      const a = policy[s]!;
      next[s] =
        a < 0
          ? 0
          : mdp.states[s]!.actions[a]!.reward +
            options.gamma * expectedNext(mdp.states[s]!.actions[a]!, v);
      residual = Math.max(residual, Math.abs(next[s]! - v[s]!));
    }
    [v, next] = [next, v];
    if (residual <= tolerance) break;
  }
  const regret = Float64Array.from(star.v, (x, s) => x - v[s]!);
  return { maxValueGap, maxLastTokenGap, suboptimalStates, regret };
}
