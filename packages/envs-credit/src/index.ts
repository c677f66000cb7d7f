export type { CreditAccuracy, CreditedStep } from './accuracy.js';
export { creditAccuracy } from './accuracy.js';
export { decidingToken } from './deciding-token.js';
export type { CreditEnvOptions, CreditStepInfo } from './env.js';
export { CreditEnv, createCreditEnv } from './env.js';
export { CreditArgumentError } from './errors.js';
export type { CreditAction, CreditMdp, CreditOutcome, CreditState } from './mdp.js';
export type { OptimalValues, OptimalValuesOptions } from './optimal.js';
export { optimalReturn, optimalValues } from './optimal.js';
export type { OutcomeCredit } from './outcome-credit.js';
export { outcomeCredit } from './outcome-credit.js';
export type { PolicyAdvantagesOptions, PolicyValues } from './policy.js';
export { advantageOf, policyAdvantages } from './policy.js';
export type { LabelPolicy } from './policy-input.js';
export { uniformPolicy } from './policy-input.js';
export type {
  LabelTokenIds,
  LabelTokenReference,
  PrefixValueKind,
  SoftTokenPrefixOptions,
  TokenPrefixOptions,
  TokenPrefixValues,
} from './prefix-values.js';
export {
  optimalTokenPrefixValues,
  prefixValueOf,
  prefixValuesOf,
  softTokenPrefixValues,
  tokenPrefixValues,
} from './prefix-values.js';
export { CREDIT_PRESETS } from './presets.js';
export { registerCreditEnvs } from './register.js';
export { spearman } from './spearman.js';
export type { CreditTask } from './tasks.js';
export { CREDIT_TASKS, creditMdp, isCreditTask } from './tasks.js';
export type { CreditTokenMdp } from './token-mdp.js';
export { creditTokenMdp } from './token-mdp.js';
export type { LabelValues, StateValues } from './values.js';
