/**
 * The fields of a PPO checkpoint without a target critic, in the order they are written: the
 * format, which a run with every critic option at its default keeps (here and in
 * `@poad/trainer`'s run directories).
 */
export const PPO_CHECKPOINT_FIELDS: readonly string[] = [
  'format',
  'version',
  'algorithm',
  'actorWeights',
  'criticWeights',
  'actorOptimizer',
  'criticOptimizer',
  'rng',
  'counters',
];
