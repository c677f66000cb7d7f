import { gigpoAdvantages, grpoAdvantages, rlooAdvantages } from '@poad/bellman';
import type { GroupConfig } from './config.js';
import type { GroupEpisode } from './group-rollout.js';

/** The advantage of every step of a group rollout and how spread each group's returns were. */
export interface GroupAdvantages {
  /** One advantage per buffer sample (every token of its action takes it). */
  readonly perSample: Float64Array;
  /** Per group: the largest minus the smallest episode return. */
  readonly spread: Float64Array;
  /** The share of groups whose episodes all had the same return (no learning signal). */
  readonly zeroSpreadShare: number;
}

/**
 * Group-relative advantages (`@poad/bellman`): GRPO and RLOO give every step of an episode the
 * episode's advantage over its group, on the undiscounted return; GiGPO adds ω times a step
 * advantage over the group's steps from equal states, on returns discounted by γ.
 */
export function groupAdvantages(
  episodes: readonly GroupEpisode[],
  sampleCount: number,
  config: Pick<GroupConfig, 'estimator' | 'groups' | 'normalise' | 'gamma' | 'omega'>,
): GroupAdvantages {
  const perSample = new Float64Array(sampleCount);
  const spread = new Float64Array(config.groups);
  let zero = 0;
  for (let k = 0; k < config.groups; k++) {
    const group = episodes.filter((e) => e.group === k);
    const returns = group.map((e) => e.rewards.reduce((a, r) => a + r, 0));
    spread[k] = Math.max(...returns) - Math.min(...returns);
    if (spread[k] === 0) zero += 1;
    if (config.estimator === 'gigpo') {
      const r = gigpoAdvantages(
        group.map((e) => ({ states: e.states, rewards: e.rewards })),
        { gamma: config.gamma, omega: config.omega, normalise: config.normalise },
      );
      group.forEach((e, j) => {
        e.samples.forEach((s, t) => {
          perSample[s] = r.combined[j]![t]!;
        });
      });
      continue;
    }
    const adv =
      config.estimator === 'rloo'
        ? rlooAdvantages(returns)
        : grpoAdvantages(returns, { normalise: config.normalise });
    group.forEach((e, j) => {
      for (const s of e.samples) perSample[s] = adv[j]!;
    });
  }
  return { perSample, spread, zeroSpreadShare: config.groups > 0 ? zero / config.groups : 0 };
}
