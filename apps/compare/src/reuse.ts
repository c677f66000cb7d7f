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
import { OptionError, writeJsonAtomicSync } from '@poad/run-kit';
import { resolveModelPath, type TrainingOptions } from '@poad/trainer';

/**
 * Options that name where output goes, how it is shown, or how it is computed (backend and
 * native threads: the last bits only), never what is computed (`maxNonFiniteSkips` only decides
 * when a run whose numbers went non-finite stops).
 */
const NOT_SETTINGS = new Set([
  'runs',
  'runName',
  'resume',
  'config',
  'quiet',
  'checkpointEvery',
  'evalEvery',
  'backend',
  'threads',
  'maxNonFiniteSkips',
]);

/**
 * A canonical string of the settings that decide a run's numbers. Two runs with the same key
 * train and evaluate the same way (bit for bit when they also used the same backend and thread count).
 */
export function settingsKey(o: Readonly<Record<string, unknown>>): string {
  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (NOT_SETTINGS.has(k) || v === undefined || v === null) continue;
    kept[k] = v;
  }
  // 'default' and the older 'models/default' both mean the embedded default model.
  if (typeof kept.model === 'string') kept.model = resolveModelPath(kept.model);
  // γ_w only matters for NTPO, where leaving it unset means γ_w = γ.
  if (kept.algo === 'ntpo') kept.intraGamma ??= kept.gamma;
  else delete kept.intraGamma;
  // β, τ and the reference only matter for ETPO.
  if (kept.algo !== 'etpo') for (const k of ['beta', 'tau', 'reference']) delete kept[k];
  // Runs from before --token-space used the vocabulary; twosome ignores it.
  if (kept.tokenSpace === 'vocabulary' || kept.algo === 'twosome') delete kept.tokenSpace;
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

/** Finished runs (config.json and eval.json present) in the given comparison folders. */
export function reusableRuns(dirs: readonly string[]): ReusableRun[] {
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
    for (const r of found) {
      const config = JSON.parse(readFileSync(join(r, 'config.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      runs.push({ dir: r, key: settingsKey(config) });
    }
  }
  return runs;
}

/**
 * Copies `from` into `to` (through a temporary folder, so an interrupted copy leaves nothing
 * that looks finished) with its log, and records where it came from in reused.json.
 */
export function copyRun(from: string, to: string, opts: TrainingOptions): void {
  const tmp = `${to}.reuse-tmp`;
  rmSync(tmp, { recursive: true, force: true });
  cpSync(from, tmp, { recursive: true });
  writeJsonAtomicSync(join(tmp, 'reused.json'), {
    from,
    note: 'copied by npm run compare --reuse: same training settings and seed as this setting',
    settings: opts,
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
