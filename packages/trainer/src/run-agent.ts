// Former home of createRunAgent; it lives in agent/ now.
export { createRunAgent } from './agent/run-agent.js';
