// Former home of ETPO's language-model policy; it lives in policy/ now.
export type { EtpoLmPolicyOptions } from './policy/etpo-lm-policy.js';
export { EtpoLmPolicy } from './policy/etpo-lm-policy.js';
