// @poad/grpo: critic-free, group-relative trainers (GRPO, Dr. GRPO, RLOO, GiGPO).

export type { GroupConfig } from './config.js';
export { groupConfigSchema, resolveGroupConfig } from './config.js';
export { GroupConfigError } from './errors.js';
export type { GroupAdvantages } from './group-advantages.js';
export { groupAdvantages } from './group-advantages.js';
export type { GroupEnvLike, GroupEpisode, GroupRollout } from './group-rollout.js';
export { collectGroupRollout } from './group-rollout.js';
export type { GroupUpdateDiagnostics } from './group-update.js';
export { groupUpdate, referenceLogProbs } from './group-update.js';
export type { GroupPolicy } from './policy.js';
export type { GroupCheckpoint, GroupIterationReport, GroupTrainerOptions } from './trainer.js';
export { GroupTrainer } from './trainer.js';
