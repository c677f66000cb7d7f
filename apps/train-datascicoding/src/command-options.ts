// What `npm run prior` and `npm run heldout` share: the dataset as the training command takes it
// (--dataset, and for csv --csv FILE --target COLUMN [--holdout F [--holdout-seed S]]
// [--max-rows N]), the checks that a run, a prior file and a command mean the same data, and the
// score cache kept on disk between commands.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { OptionError } from '@poad/config';
import {
  type CsvDatasetSpec,
  type Dataset,
  type DatasetSpec,
  DiskScoreCache,
  datasetDigest,
  defaultScoreCacheDir,
  type ScoreCache,
  type ScoringRule,
} from '@poad/envs-datascicoding';
import { checkDatasetOptions, datasetOf, userPath } from './spec.js';

/** A run directory's config.json, or an OptionError naming `option` and the directory. */
export function readRunConfig(dir: string, option: string): Record<string, unknown> {
  const file = join(dir, 'config.json');
  if (!existsSync(file)) throw new OptionError(`${option} ${dir}: no config.json there`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new OptionError(
      `${option} ${dir}: config.json is not valid JSON (${(err as Error).message})`,
    );
  }
}

/**
 * The spec of `task` with the command's CSV options, as the training command builds it (a
 * relative `--csv` from where the command was typed); the option errors the training command
 * gives, as OptionErrors.
 */
export function commandDatasetSpec(
  task: string,
  o: Readonly<Record<string, unknown>>,
): DatasetSpec {
  checkDatasetOptions(task, o);
  try {
    return datasetOf(task, typeof o.csv === 'string' ? { ...o, csv: userPath(o.csv) } : o);
  } catch (err) {
    throw new OptionError((err as Error).message);
  }
}

/** Why a run's dataset is not `spec` (null when it is): its config.json's task and CSV options. */
export function runDatasetMismatch(
  config: Record<string, unknown>,
  task: string,
  spec: DatasetSpec,
): string | null {
  if (config.task !== task) return `it trained on --dataset ${String(config.task)}, not ${task}`;
  if (task !== 'csv') return null;
  const own = datasetOf('csv', config) as CsvDatasetSpec;
  const differs = csvDifferences(own, spec as CsvDatasetSpec);
  return differs.length ? `it trained with ${differs.join(', ')}` : null;
}

/** The CSV options of `own` that `want` does not share, as flags of `own`. */
function csvDifferences(own: CsvDatasetSpec, want: CsvDatasetSpec): string[] {
  const differs: string[] = [];
  if (basename(own.csv) !== basename(want.csv)) differs.push(`--csv ${own.csv}`);
  if (own.target !== want.target) differs.push(`--target ${own.target}`);
  if (JSON.stringify(own.holdout ?? null) !== JSON.stringify(want.holdout ?? null)) {
    differs.push(
      own.holdout
        ? `--holdout ${own.holdout.fraction} --holdout-seed ${own.holdout.seed ?? 0}`
        : 'no --holdout (its rewards used every row)',
    );
  }
  if ((own.maxRows ?? null) !== (want.maxRows ?? null)) {
    differs.push(own.maxRows === undefined ? 'no --max-rows' : `--max-rows ${own.maxRows}`);
  }
  return differs;
}

/** The name the prior file gives a dataset (npm run prior): the task, or the CSV's file name. */
export function priorKeyOf(task: string, spec: DatasetSpec): string {
  if (task !== 'csv') return task;
  return basename((spec as CsvDatasetSpec).csv);
}

/** What a prior file records of each dataset it sampled on, to check it against later. */
export interface PriorDatasetRecord {
  /** `--dataset` of the training command (`csv` for a user's table). */
  task: string;
  /** A CSV's options as the spec had them (the bundled table and named datasets too). */
  csv?: string;
  target?: string;
  holdout?: { fraction: number; seed: number } | null;
  maxRows?: number | null;
  /** The rows and columns the prompt and the reward see. */
  rewardRows: number;
  columns: number;
  /** Held-out rows (null: none). */
  heldOutRows: number | null;
  /** `datasetDigest` of the reward rows and splits: equal digests, equal data. */
  dataDigest: string;
}

/** The record of `data`, loaded from `spec` for `task`. */
export function priorDatasetRecord(
  task: string,
  spec: DatasetSpec,
  data: Dataset,
): PriorDatasetRecord {
  const csv =
    typeof spec === 'object' && 'csv' in spec
      ? {
          csv: spec.csv,
          target: spec.target,
          holdout: spec.holdout
            ? { fraction: spec.holdout.fraction, seed: spec.holdout.seed ?? 0 }
            : null,
          maxRows: spec.maxRows ?? null,
        }
      : {};
  return {
    task,
    ...csv,
    rewardRows: data.n,
    columns: data.d,
    heldOutRows: data.holdout?.n ?? null,
    dataDigest: datasetDigest(data),
  };
}

/**
 * Why a prior file's programs of a dataset were not sampled on `data` (null when they were, or
 * when the file is older than its records): the options that differ, or else only the data.
 */
export function priorDatasetMismatch(
  record: PriorDatasetRecord | undefined,
  task: string,
  spec: DatasetSpec,
  data: Dataset,
): string | null {
  if (!record) return null;
  if (record.task !== task) return `they were sampled for --dataset ${record.task}, not ${task}`;
  if (record.dataDigest === datasetDigest(data)) return null;
  if (task === 'csv' && record.csv !== undefined && record.target !== undefined) {
    const own: CsvDatasetSpec = {
      csv: record.csv,
      target: record.target,
      ...(record.holdout ? { holdout: record.holdout } : {}),
      ...(typeof record.maxRows === 'number' ? { maxRows: record.maxRows } : {}),
    };
    const differs = csvDifferences(own, spec as CsvDatasetSpec);
    if (differs.length) return `they were sampled with ${differs.join(', ')}`;
  }
  return `they were sampled on other data (${record.rewardRows} reward rows × ${record.columns} columns there, ${data.n} × ${data.d} here, or the same shape with other values: the file changed since)`;
}

/** `--score-cache`: a folder of scores kept between commands, or `off`. */
export const SCORE_CACHE_OPTION = {
  type: 'string',
  optional: true,
  placeholder: 'dir|off',
  description:
    'Folder of scores kept between commands: a program scored before on the same data under the same rule, clock and limits (and the same Python and library versions) is not run again; seeded-v1 only (default ~/.cache/poad/datascicoding-scores, or $POAD_CACHE_DIR/datascicoding-scores when that is set); off scores every program',
} as const;

/**
 * The cache of `--score-cache` (a folder, relative to where the command was typed; default
 * {@link defaultScoreCacheDir}); none for `off`, and none under `os-seeded`, whose scores are
 * draws that are not kept. An unusable folder is an OptionError naming it.
 */
export function scoreCacheOf(option: unknown, scoring: ScoringRule): ScoreCache | undefined {
  if (option === 'off' || scoring !== 'seeded-v1') return undefined;
  try {
    return new DiskScoreCache(
      typeof option === 'string' ? userPath(option) : defaultScoreCacheDir(),
    );
  } catch (err) {
    throw new OptionError(`--score-cache: ${(err as Error).message}`);
  }
}
