// The environments a comparison can run: the training apps' specs, from their packages' public
// exports, by environment id.
import { fileURLToPath } from 'node:url';
import { OptionError } from '@poad/config';
import { creditApp } from '@poad/train-credit';
import { dataSciApp } from '@poad/train-datascicoding';
import { overcookedApp } from '@poad/train-overcooked';
import { virtualHomeApp } from '@poad/train-virtualhome';
import type { AppSpec } from '@poad/trainer';

/** Every training app, by environment family (the first part of its environment ids). */
export const APPS: Readonly<Record<string, AppSpec>> = {
  virtualhome: virtualHomeApp,
  overcooked: overcookedApp,
  datascicoding: dataSciApp,
  credit: creditApp,
};

/** The app that trains environment `env` (e.g. `virtualhome/food-preparation`). */
export function appOf(env: string): AppSpec {
  const app = APPS[env.split('/')[0]!];
  if (!app?.tasks.some((t) => app.envId(t) === env))
    throw new OptionError(
      `unknown environment ${JSON.stringify(env)}; choose one of: ${Object.values(APPS)
        .flatMap((a) => a.tasks.map((t) => a.envId(t)))
        .join(', ')}`,
    );
  return app;
}

/** The script a child process trains one run with (`--jobs` above 1): `run-job.ts ENV ARGS…`. */
export const RUN_JOB = fileURLToPath(new URL('./run-job.ts', import.meta.url));
