// Token-level credit assignment with @poad/bellman, on a tiny two-action episode.
// Run from the repository root:  npm run example
import { ntpo, ntpoDiscrepancy, poad } from '@poad/bellman';

// An agent opens the fridge (3 tokens) and then takes the milk (4 tokens); the episode ends with
// reward 1. The critic's per-token values V(o_t, w_<k) come from a value head.
const words = [
  ['open', 'the', 'fridge'],
  ['take', 'the', 'cold', 'milk'],
];
const segment = {
  rewards: [0, 1],
  dones: [false, true],
  tokenCounts: [3, 4],
  values: [0.3, 0.35, 0.4, 0.6, 0.62, 0.7, 0.8],
  bootstrapValue: 0,
};
const opts = { gamma: 0.95, lambda: 0.95 };
const bad = poad(segment, opts);
const nt = ntpo(segment, opts);

console.log('Per-token advantages and critic targets (γ = 0.95, λ = 0.95)\n');
console.log('token        V(o,w<k)   POAD adv  POAD target   NTPO adv  NTPO target');
let i = 0;
for (const action of words) {
  for (const w of action) {
    const row = [
      w.padEnd(10),
      segment.values[i].toFixed(3).padStart(10),
      bad.advantages[i].toFixed(3).padStart(10),
      bad.returns[i].toFixed(3).padStart(12),
      nt.advantages[i].toFixed(3).padStart(10),
      nt.returns[i].toFixed(3).padStart(12),
    ];
    console.log(row.join(' '));
    i++;
  }
  console.log('');
}
console.log(
  'Inside an action, POAD (BAD) targets differ only through the λ-weighting (with λ = 1 they',
);
console.log(
  'are identical: the action-level return). NTPO multiplies them by γ per remaining token,',
);
console.log('so long actions look worse than they are.\n');

// The same effect on the optimal values of a one-state decision: a 5-token action worth 1.0
// against a 1-token action worth 0.9.
const mdp = {
  states: [
    {
      actions: [
        { tokens: [11, 12, 13, 14, 15], reward: 1.0, next: [] },
        { tokens: [21], reward: 0.9, next: [] },
      ],
    },
  ],
};
for (const intraGamma of [1, 0.95, 0.9, 0.8]) {
  const d = ntpoDiscrepancy(mdp, { gamma: 0.95, intraGamma });
  console.log(
    `γ_w = ${intraGamma.toFixed(2)}: value gap ${d.maxValueGap.toFixed(4)}, greedy picks ${
      d.suboptimalStates.length ? 'the WRONG (short) action' : 'the optimal (long) action'
    }, regret ${d.regret[0].toFixed(3)}`,
  );
}
