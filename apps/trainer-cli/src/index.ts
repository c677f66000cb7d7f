export type { Agent } from './agent.js';
export type { AppSpec } from './app.js';
export { runCli } from './cli.js';
export type { EvalResult } from './evaluate.js';
export { evaluate, evaluateAll } from './evaluate.js';
export { createLmAgent } from './lm-agent.js';
export { trainingSchema } from './options.js';
export { runPreset } from './presets.js';
export { plannedIterations, train } from './train.js';
