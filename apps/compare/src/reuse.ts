// --reuse: take finished runs from earlier comparisons instead of training them again, when
// their training settings are the same as a job's (e.g. NTPO's default γ_w = γ run of an
// algorithm comparison is the γ_w = 0.95 setting of the γ_w ablation).
import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { OptionError } from '@poad/config';
import { writeJsonAtomicSync } from '@poad/run-kit';
import {
  type AppSpec,
  flatRunConfig,
  loadRunConfig,
  type RunConfig,
  runSettings,
} from '@poad/trainer';

/**
 * A canonical string of the settings that decide a run's numbers (`runSettings` of
 * `@poad/trainer`: no output or display options, each algorithm's ignored fields dropped). Two runs
 * with the same key train and evaluate the same way (bit for bit when they also used the same
 * backend and thread count).
 */
export function settingsKey(rc: RunConfig): string {
  const kept = runSettings(rc);
  return JSON.stringify(
    Object.keys(kept)
      .sort()
      .map((k) => [k, kept[k]]),
  );
}

/** Finished: the final evaluation was written (or skipped on purpose, with eval-episodes 0). */
export const finished = (runDir: string): boolean => existsSync(join(runDir, 'eval.json'));

/** A finished run that another comparison holds. */
export interface ReusableRun {
  dir: string;
  key: string;
}

/**
 * Finished runs (config.json and eval.json present) in the given comparison folders, each with
 * the key of its own settings (config.json read as `--resume` reads it, old names mapped).
 */
export function reusableRuns(app: AppSpec, dirs: readonly string[]): ReusableRun[] {
  const runs: ReusableRun[] = [];
  for (const d of dirs) {
    const dir = resolve(d);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new OptionError(
        `--reuse ${d}: no such folder; pass comparison folders written by npm run compare`,
      );
    }
    const found = readdirSync(dir)
      .map((name) => join(dir, name))
      .filter((r) => existsSync(join(r, 'config.json')) && finished(r));
    if (found.length === 0) {
      throw new OptionError(
        `--reuse ${d}: no finished run in this folder (a run is finished once its eval.json is written)`,
      );
    }
    for (const r of found) runs.push({ dir: r, key: settingsKey(loadRunConfig(app, r)) });
  }
  return runs;
}

/**
 * Copies `from` into `to` (through a temporary folder, so an interrupted copy leaves nothing
 * that looks finished) with its log, and records where it came from in reused.json.
 */
export function copyRun(from: string, to: string, rc: RunConfig): void {
  const tmp = `${to}.reuse-tmp`;
  rmSync(tmp, { recursive: true, force: true });
  cpSync(from, tmp, { recursive: true });
  writeJsonAtomicSync(join(tmp, 'reused.json'), {
    from,
    note: 'copied by npm run compare --reuse: same training settings and seed as this setting',
    settings: flatRunConfig(rc),
  });
  rmSync(to, { recursive: true, force: true });
  renameSync(tmp, to);
  const log = `${from}.log`;
  if (existsSync(log)) cpSync(log, `${to}.log`);
}

/** Where each reused run of a comparison came from, by run name (read back for the report). */
export function reusedFrom(runDirs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of runDirs) {
    const f = join(r, 'reused.json');
    if (existsSync(f))
      out[basename(r)] = (JSON.parse(readFileSync(f, 'utf8')) as { from: string }).from;
  }
  return out;
}
