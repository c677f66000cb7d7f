// Former home of the language-model policy; it lives in policy/ now.
export { LmPolicy } from './policy/lm-policy.js';
export type { PromptFormat } from './policy/prompt-encoding.js';
