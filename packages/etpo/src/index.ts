export { EtpoArgumentError } from './errors.js';
export { etpoCriticLoss, etpoPolicyLoss } from './losses.js';
export { polyakUpdate } from './polyak.js';
export type { Reference } from './reference.js';
export type { SoftStats } from './soft-values.js';
export { softStats } from './soft-values.js';
