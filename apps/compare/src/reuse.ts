// --reuse: take finished runs from earlier comparisons instead of training them again, when
// their training settings are the same as a job's (e.g. NTPO's default γ_w = γ run of an
// algorithm comparison is the γ_w = 0.95 setting of the γ_w ablation).
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
import {
  ARCHIVE_EXT,
  copyDataFolder,
  dataExists,
  isDataFolder,
  listData,
  locate,
  readData,
  readJson,
} from './archive-file.js';

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

/**
 * Finished: the final evaluation was written (or skipped on purpose, with eval-episodes 0). The
 * run folder may be one of an archive (see archive-file.ts).
 */
export const finished = (runDir: string): boolean => dataExists(join(runDir, 'eval.json'));

/** A finished run that another comparison holds. */
export interface ReusableRun {
  dir: string;
  key: string;
}

/**
 * A run's settings as `--resume` reads them (config.json, old names mapped). The trainer reads a
 * run folder on disk, so the config.json of a run in an archive is read from a copy of it alone,
 * and an error names the run in the archive.
 */
function runConfigOfRun(app: AppSpec, runDir: string): RunConfig {
  if (locate(runDir) === null) return loadRunConfig(app, runDir);
  const tmp = mkdtempSync(join(tmpdir(), 'poad-reuse-'));
  try {
    const copy = join(tmp, basename(runDir));
    mkdirSync(copy);
    writeFileSync(join(copy, 'config.json'), readData(join(runDir, 'config.json')));
    try {
      return loadRunConfig(app, copy);
    } catch (err) {
      if (err instanceof OptionError) throw new OptionError(err.message.split(copy).join(runDir));
      throw err;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * The folder or archive `--reuse` names: `d` itself, or the archive `d.zip` when `d` is not there
 * (a comparison named as it was before it was archived).
 */
function reuseSource(d: string): string {
  const dir = resolve(d);
  if (isDataFolder(dir)) return dir;
  if (isDataFolder(`${dir}${ARCHIVE_EXT}`)) return `${dir}${ARCHIVE_EXT}`;
  throw new OptionError(
    `--reuse ${d}: no such folder or archive; pass comparison folders written by npm run compare, or their archives (npm run archive -w @poad/compare)`,
  );
}

/**
 * Finished runs (config.json and eval.json present) in the given comparison folders or archives,
 * each with the key of its own settings (config.json read as `--resume` reads it, old names
 * mapped).
 */
export function reusableRuns(app: AppSpec, dirs: readonly string[]): ReusableRun[] {
  const runs: ReusableRun[] = [];
  for (const d of dirs) {
    const dir = reuseSource(d);
    const found = listData(dir)
      .map((name) => join(dir, name))
      .filter((r) => dataExists(join(r, 'config.json')) && finished(r));
    if (found.length === 0) {
      throw new OptionError(
        `--reuse ${d}: no finished run in this folder (a run is finished once its eval.json is written)`,
      );
    }
    for (const r of found) runs.push({ dir: r, key: settingsKey(runConfigOfRun(app, r)) });
  }
  return runs;
}

/**
 * Copies `from` (a run folder, or one of an archive) into `to` (through a temporary folder, so an
 * interrupted copy leaves nothing that looks finished) with its log, and records where it came
 * from in reused.json.
 */
export function copyRun(from: string, to: string, rc: RunConfig): void {
  const tmp = `${to}.reuse-tmp`;
  rmSync(tmp, { recursive: true, force: true });
  copyDataFolder(from, tmp);
  writeJsonAtomicSync(join(tmp, 'reused.json'), {
    from,
    note: 'copied by npm run compare --reuse: same training settings and seed as this setting',
    settings: flatRunConfig(rc),
  });
  rmSync(to, { recursive: true, force: true });
  renameSync(tmp, to);
  const log = `${from}.log`;
  if (dataExists(log)) writeFileSync(`${to}.log`, readData(log));
}

/** Where each reused run of a comparison came from, by run name (read back for the report). */
export function reusedFrom(runDirs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of runDirs) {
    const f = join(r, 'reused.json');
    if (dataExists(f)) out[basename(r)] = readJson<{ from: string }>(f).from;
  }
  return out;
}
