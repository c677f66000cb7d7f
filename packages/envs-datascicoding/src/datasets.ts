import { execFile } from 'node:child_process';
import { homedir } from 'node:os';
import { basename, extname, join, resolve } from 'node:path';
import { DataSciOptionError, DatasetError } from './errors.js';
import { PREPARE_SOURCE } from './prepare-source.js';
import { checkPython, DEFAULT_PYTHON } from './python.js';

/** Classification datasets bundled with scikit-learn (no download needed). */
export const BUILTIN_DATASETS = ['iris', 'wine', 'breast_cancer', 'digits'] as const;

/** Name of a dataset bundled with scikit-learn. */
export type BuiltinDatasetName = (typeof BUILTIN_DATASETS)[number];

/** Rows kept after dropping incomplete ones, as in the original environment. */
export const DEFAULT_MAX_ROWS = 2000;

/** Number of random 50/50 train/test splits (seeds 0..4). */
export const SPLIT_COUNT = 5;

/**
 * Rows set apart before the reward's splits are made, for scoring programs where the reward never
 * looks ({@link HeldOutRows}, `evaluateHeldOut`).
 */
export interface HoldoutSpec {
  /** Share of each class's rows held out, in (0, 0.9]. */
  fraction: number;
  /** Seed of the draw (default 0). */
  seed?: number;
}

/** Options shared by CSV and OpenML datasets. */
interface TableOptions {
  /** Name used in the prompt and in the env id (default: derived from the source). */
  name?: string;
  /** Columns removed before anything else (e.g. an ID column). */
  drop?: readonly string[];
  /** Keep the first N complete rows (default 2000). */
  maxRows?: number;
  /**
   * Hold out a fixed, seeded, stratified share of the rows: they are removed before the five
   * reward splits are made, never reach the sandbox while rewards are scored, and are kept in
   * `Dataset.holdout` (default: none, every row is used by the reward).
   */
  holdout?: HoldoutSpec;
}

/** Any CSV file with a header row; `target` names the label column. */
export interface CsvDatasetSpec extends TableOptions {
  csv: string;
  target: string;
}

/**
 * An OpenML dataset by id, read from `cacheDir` (`openml-<id>.csv` plus `openml-<id>.json` holding
 * `{ "name", "target" }`). When those files are missing it is downloaded once, and only if
 * `allowNetwork` is true.
 */
export interface OpenMLDatasetSpec extends TableOptions {
  openml: number;
  /** Label column (default: the dataset's default target on OpenML, stored in the cache). */
  target?: string;
  /** Default `~/.cache/poad/openml`. */
  cacheDir?: string;
  /** Download when the cache is missing (default false). */
  allowNetwork?: boolean;
}

/** Where the data comes from. */
export type DatasetSpec = BuiltinDatasetName | CsvDatasetSpec | OpenMLDatasetSpec;

/** One random 50/50 split, as row indices. */
export interface DatasetSplit {
  train: readonly number[];
  test: readonly number[];
}

/**
 * The rows a {@link HoldoutSpec} set apart. Row numbers count the rows of the preprocessed table
 * (after dropping incomplete rows and keeping the first `maxRows`), before anything was held out.
 */
export interface HeldOutRows {
  fraction: number;
  seed: number;
  /** Number of held-out rows. */
  n: number;
  /** Row-major n×d features of the held-out rows. */
  x: Float64Array;
  /** Their labels 0..k-1 (the same coding as the dataset's). */
  y: Int32Array;
  /** Table row of each held-out row, ascending. */
  rows: readonly number[];
  /** Table row of each of the dataset's own (reward) rows, ascending. */
  rewardRows: readonly number[];
}

/** A dataset ready for scoring: numeric features, labels 0..k-1 and the five splits. */
export interface Dataset {
  /** Short name used in the env id. */
  name: string;
  /** Human-readable name used in the prompt. */
  title: string;
  /**
   * Rows and feature columns after preprocessing (the full dataset's shape; with a holdout, the
   * rows the reward uses).
   */
  n: number;
  d: number;
  /** Original class values, in the order of the labels 0..k-1. */
  classes: readonly string[];
  /** Row-major n×d features. */
  x: Float64Array;
  /** Labels 0..k-1. */
  y: Int32Array;
  /** The five reward splits, as indices into `x` and `y`. */
  splits: readonly DatasetSplit[];
  /** Rows held out from the reward (only with a `holdout` in the spec). */
  holdout?: HeldOutRows;
}

/** The env-id-friendly name of a dataset spec, e.g. `iris`, `heart` for `heart.csv`, `openml-31`. */
export function datasetName(spec: DatasetSpec): string {
  if (typeof spec === 'string') return spec;
  if (spec.name !== undefined) return sanitize(spec.name);
  if ('csv' in spec) return sanitize(basename(spec.csv, extname(spec.csv)));
  return `openml-${spec.openml}`;
}

function sanitize(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return cleaned.length > 0 ? cleaned : 'dataset';
}

interface NormalisedSpec {
  kind: 'builtin' | 'csv' | 'openml';
  name?: string;
  builtin?: string;
  csv?: string;
  openml?: number;
  target?: string;
  drop: string[];
  maxRows: number;
  cacheDir?: string;
  allowNetwork?: boolean;
  splits: number;
  holdout?: { fraction: number; seed: number };
}

/** Throws a typed error naming the bad field when `spec` is not a usable dataset spec. */
export function checkDatasetSpec(spec: DatasetSpec): void {
  normalise(spec);
}

/** Checks a spec and fills defaults; throws a typed error naming the bad field. */
function normalise(spec: DatasetSpec): NormalisedSpec {
  if (typeof spec === 'string') {
    if (!(BUILTIN_DATASETS as readonly string[]).includes(spec)) {
      throw new DatasetError(
        spec,
        `unknown built-in dataset; choose one of ${BUILTIN_DATASETS.join(', ')}, or pass { csv, target } or { openml: id }.`,
      );
    }
    return {
      kind: 'builtin',
      builtin: spec,
      drop: [],
      maxRows: DEFAULT_MAX_ROWS,
      splits: SPLIT_COUNT,
    };
  }
  if (spec === null || typeof spec !== 'object') {
    throw new DataSciOptionError(
      'dataset',
      `expected a built-in name, { csv, target } or { openml }, got ${String(spec)}.`,
    );
  }
  const maxRows = spec.maxRows ?? DEFAULT_MAX_ROWS;
  if (!Number.isInteger(maxRows) || maxRows < 4) {
    throw new DataSciOptionError(
      'dataset.maxRows',
      `expected an integer >= 4, got ${String(maxRows)}.`,
    );
  }
  const drop = [...(spec.drop ?? [])];
  const holdout = spec.holdout === undefined ? {} : { holdout: checkHoldout(spec.holdout) };
  const common = { name: spec.name, drop, maxRows, splits: SPLIT_COUNT, ...holdout };
  if ('csv' in spec) {
    if (typeof spec.csv !== 'string' || spec.csv.length === 0) {
      throw new DataSciOptionError('dataset.csv', 'expected the path of a CSV file.');
    }
    if (typeof spec.target !== 'string' || spec.target.length === 0) {
      throw new DataSciOptionError('dataset.target', `name the label column of ${spec.csv}.`);
    }
    return { kind: 'csv', csv: resolve(spec.csv), target: spec.target, ...common };
  }
  if ('openml' in spec) {
    if (!Number.isInteger(spec.openml) || spec.openml < 1) {
      throw new DataSciOptionError(
        'dataset.openml',
        `expected a positive integer id, got ${String(spec.openml)}.`,
      );
    }
    return {
      kind: 'openml',
      openml: spec.openml,
      target: spec.target,
      cacheDir: resolve(spec.cacheDir ?? join(homedir(), '.cache', 'poad', 'openml')),
      allowNetwork: spec.allowNetwork ?? false,
      ...common,
    };
  }
  throw new DataSciOptionError(
    'dataset',
    'expected a built-in name, { csv, target } or { openml }.',
  );
}

function checkHoldout(holdout: HoldoutSpec): { fraction: number; seed: number } {
  if (holdout === null || typeof holdout !== 'object') {
    throw new DataSciOptionError(
      'dataset.holdout',
      `expected { fraction, seed? }, got ${String(holdout)}.`,
    );
  }
  const { fraction } = holdout;
  if (typeof fraction !== 'number' || !(fraction > 0 && fraction <= 0.9)) {
    throw new DataSciOptionError(
      'dataset.holdout.fraction',
      `expected a share in (0, 0.9], got ${String(fraction)}.`,
    );
  }
  const seed = holdout.seed ?? 0;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new DataSciOptionError(
      'dataset.holdout.seed',
      `expected an integer in [0, 2^32 − 1], got ${String(seed)}.`,
    );
  }
  return { fraction, seed };
}

/**
 * Throws a DatasetError when a split of `dataset` cannot be scored: every one of the random 50/50
 * splits needs two classes in its training half (to fit a classifier) and in its test half (for
 * a ROC AUC). The environment checks this when it loads its dataset.
 */
export function assertSplittable(dataset: Dataset): void {
  for (const [i, split] of dataset.splits.entries()) {
    for (const [half, rows] of [
      ['training', split.train],
      ['test', split.test],
    ] as const) {
      const classes = new Set(rows.map((r) => dataset.y[r]));
      if (classes.size < 2) {
        throw new DatasetError(
          dataset.name,
          `too small to split: with ${dataset.n} rows, the ${half} half of random split ${i} holds a single class; every split needs two classes in both halves (use more rows, or merge or drop rare classes).`,
        );
      }
    }
  }
}

const cache = new Map<string, Promise<Dataset>>();

/**
 * Loads, preprocesses and splits a dataset with the system Python (cached per process and spec).
 * CSV and OpenML data: drop the `drop` columns, drop rows with a missing value, keep the first
 * `maxRows` rows, label-encode text and boolean feature columns, re-index the labels 0..k-1;
 * then, with a `holdout`, set the held-out rows apart (per class, in label order: a draw of
 * round(fraction × the class's rows), at least 1 and at most all but one, from one
 * `RandomState(seed)`), and make the five splits from the remaining rows only.
 */
export async function loadDataset(
  spec: DatasetSpec,
  python: string = DEFAULT_PYTHON,
): Promise<Dataset> {
  const normalised = normalise(spec);
  const key = JSON.stringify([python, normalised]);
  let pending = cache.get(key);
  if (!pending) {
    pending = prepare(normalised, datasetName(spec), python);
    cache.set(key, pending);
    pending.catch(() => cache.delete(key));
  }
  return pending;
}

interface PrepareOutput {
  ok: boolean;
  message?: string;
  name?: string | null;
  n: number;
  d: number;
  classes: string[];
  x: string;
  y: number[];
  splits: DatasetSplit[];
  holdout?: { rows: number[]; rewardRows: number[]; x: string; y: number[] };
}

function decodeFeatures(base64: string, n: number, d: number): Float64Array {
  const bytes = Buffer.from(base64, 'base64');
  const x = new Float64Array(n * d);
  new Uint8Array(x.buffer).set(bytes);
  return x;
}

async function prepare(spec: NormalisedSpec, label: string, python: string): Promise<Dataset> {
  await checkPython(python);
  const env: Record<string, string> = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' };
  for (const key of [
    'HTTP_PROXY',
    'HTTPS_PROXY',
    'NO_PROXY',
    'http_proxy',
    'https_proxy',
    'no_proxy',
  ]) {
    const value = process.env[key];
    if (spec.kind === 'openml' && value !== undefined) env[key] = value;
  }
  const stdout = await new Promise<string>((resolvePromise, reject) => {
    execFile(
      python,
      ['-I', '-c', PREPARE_SOURCE, JSON.stringify(spec)],
      { env, maxBuffer: 1 << 30, timeout: 600_000 },
      (error, out, stderr) => {
        if (error)
          reject(new DatasetError(label, `the loader failed: ${stderr.trim() || error.message}`));
        else resolvePromise(out);
      },
    );
  });
  const parsed = JSON.parse(stdout) as PrepareOutput;
  if (!parsed.ok) throw new DatasetError(label, parsed.message ?? 'the loader failed');
  const x = decodeFeatures(parsed.x, parsed.n, parsed.d);
  const held = parsed.holdout;
  return {
    name: label,
    title: (spec.name ?? parsed.name ?? label).replace(/_/g, ' '),
    n: parsed.n,
    d: parsed.d,
    classes: parsed.classes,
    x,
    y: Int32Array.from(parsed.y),
    splits: parsed.splits,
    ...(held && spec.holdout
      ? {
          holdout: {
            ...spec.holdout,
            n: held.rows.length,
            x: decodeFeatures(held.x, held.rows.length, parsed.d),
            y: Int32Array.from(held.y),
            rows: held.rows,
            rewardRows: held.rewardRows,
          },
        }
      : {}),
  };
}
