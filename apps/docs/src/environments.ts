import { creditApp } from '@poad/train-credit';
import { dataSciApp } from '@poad/train-datascicoding';
import { overcookedApp } from '@poad/train-overcooked';
import { virtualHomeApp } from '@poad/train-virtualhome';
import type { AppSpec } from '@poad/trainer';

/**
 * The training commands whose presets the algorithm pages list, in the order of their columns:
 * the apps' specs (`npm run train:<name>`), each with its environment's presets. A new training
 * app is added here (docs/adding-an-env.md).
 */
export const DOCUMENTED_APPS: readonly AppSpec[] = [
  virtualHomeApp,
  overcookedApp,
  dataSciApp,
  creditApp,
];

/** The environment family of an app, the first part of its environment ids (`virtualhome`). */
export function familyOf(app: AppSpec): string {
  return app.envId(app.defaultTask).split('/')[0]!;
}
