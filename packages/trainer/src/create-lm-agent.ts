// Former home of createLmAgent; it lives in agent/ now.
export type { LmAgentOptions } from './agent/create-lm-agent.js';
export { createLmAgent } from './agent/create-lm-agent.js';
