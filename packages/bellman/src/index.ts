// Advantages and returns over token trajectories.

export { actionGae } from './actionGae.js';
export type { BatchGaeResult } from './batchTokenGae.js';
export { batchTokenGae } from './batchTokenGae.js';
// A critic's error against exact values (RMSE, bias, Spearman's ρ).
export type { CriticError, CriticErrorOptions } from './criticError.js';
export { averageRanks, criticError, spearmanCorrelation } from './criticError.js';
// Group-relative advantages of episodes from the same start (no critic).
export { gigpoAdvantages } from './gigpoAdvantages.js';
export { grpoAdvantages } from './grpoAdvantages.js';
// Exact values at every token prefix of a label, from the label-level policy and Q.
export * from './prefixValues.js';
export type { PresetOptions } from './presets.js';
export { archer, makeTokenGae, ntpo, poad } from './presets.js';
export { rlooAdvantages } from './rlooAdvantages.js';
export { softBad } from './softBad.js';
export type { ActionQTable } from './tabular/actionQIteration.js';
// Tabular backups on small token MDPs (the paper's theory, exactly).
export { actionQIteration } from './tabular/actionQIteration.js';
export { greedyTokenDecode } from './tabular/greedyTokenDecode.js';
export type { NtpoDiscrepancy } from './tabular/ntpoDiscrepancy.js';
export { ntpoDiscrepancy } from './tabular/ntpoDiscrepancy.js';
export type { IterationOptions, IterationReport } from './tabular/options.js';
export type { ActionPolicy, SoftEvaluationOptions } from './tabular/softPolicyEvaluation.js';
export { softPolicyEvaluation } from './tabular/softPolicyEvaluation.js';
export * from './tabular/softQIteration.js';
export type { TokenAction, TokenMdp, TokenMdpState, TokenTrie } from './tabular/tokenMdp.js';
export { buildTokenTrie, TokenMdpError } from './tabular/tokenMdp.js';
export * from './tabular/tokenQIteration.js';
export { tokenGae } from './tokenGae.js';
export * from './types.js';
