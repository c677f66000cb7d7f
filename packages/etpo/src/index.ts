export type { EtpoConfig } from './config.js';
export { etpoConfigSchema, resolveEtpoConfig } from './config.js';
export { EtpoArgumentError } from './errors.js';
export type { LionOptions, LionState } from './lion.js';
export { Lion } from './lion.js';
export { etpoCriticLoss, etpoPolicyLoss, etpoReleasedPolicyLoss } from './losses.js';
export type { EtpoPolicy, VocabularyScores } from './policy.js';
export { polyakUpdate } from './polyak.js';
export type { Reference } from './reference.js';
export { flatAllowed, restrictScores } from './restrict.js';
export type { SoftStats } from './soft-values.js';
export { softStats } from './soft-values.js';
export { softBadTargets } from './targets.js';
export type {
  EtpoCheckpoint,
  EtpoIterationReport,
  EtpoTrainerOptions,
  EtpoUpdateDiagnostics,
} from './trainer.js';
export { EtpoTrainer } from './trainer.js';
