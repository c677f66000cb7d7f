// Former home of the Agent interface; it lives in agent/ now.
export type { Agent } from './agent/agent.js';
