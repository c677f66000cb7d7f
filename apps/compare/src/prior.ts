// The untrained model's programs on a DataSciCoding dataset (the JSON that `npm run prior -w
// @poad/train-datascicoding` writes), as the reference level of a comparison's report.
import { basename } from 'node:path';
import { OptionError } from '@poad/config';
import { dataExists, readText } from './archive-file.js';

/** What the report shows of the prior on one dataset. */
export interface PriorReference {
  /** The prior file as given (results/ keeps a large one gzipped: `F.json.gz` is named `F.json`). */
  file: string;
  /** The dataset's name in that file (a built-in dataset, or a CSV file's name). */
  dataset: string;
  samples: number;
  /** Mean reward of the sampled programs (a failure counts −1) and its standard error. */
  meanReward: number;
  meanRewardSe: number | null;
  /** Share of the programs that ran. */
  ran: number;
  /** Best ROC AUC among them (null: none ran). */
  bestAuc: number | null;
}

interface PriorFile {
  summaries?: {
    dataset: string;
    samples: number;
    ran: number;
    meanReward: number;
    bestAuc: number | null;
  }[];
  programs?: Record<string, { ok: boolean; auc: number | null }[]>;
}

/**
 * The dataset name a comparison's runs train on, as the prior file names it: the task, or for
 * `csv` the file name of the `--csv` in the comparison's `--extra`.
 */
export function priorDatasetOf(task: string, extra: string | undefined): string {
  if (task !== 'csv') return task;
  const words = (extra ?? '').split(/\s+/).filter(Boolean);
  const i = words.findIndex((w) => w === '--csv' || w.startsWith('--csv='));
  const file =
    i < 0 ? undefined : words[i]!.startsWith('--csv=') ? words[i]!.slice(6) : words[i + 1];
  if (!file) {
    throw new OptionError(
      "--prior: this csv comparison's --extra names no --csv FILE, so its dataset is unknown",
    );
  }
  return basename(file);
}

/**
 * Reads the prior of `dataset` from `file` (or from `file.gz`, as results/ keeps a large one),
 * refusing anything that is not one.
 */
export function readPrior(file: string, dataset: string): PriorReference {
  const how = `make one with: npm run prior -w @poad/train-datascicoding -- --samples 256 --out ${file}`;
  if (!dataExists(file)) throw new OptionError(`--prior ${file}: no such file; ${how}`);
  let json: PriorFile;
  try {
    json = JSON.parse(readText(file)) as PriorFile;
  } catch {
    throw new OptionError(`--prior ${file}: not valid JSON; ${how}`);
  }
  if (!Array.isArray(json.summaries)) {
    throw new OptionError(`--prior ${file}: no "summaries" list, so not a prior file; ${how}`);
  }
  const s = json.summaries.find((x) => x.dataset === dataset);
  if (!s) {
    const have = json.summaries.map((x) => x.dataset).join(', ') || 'none';
    throw new OptionError(
      `--prior ${file}: no programs of ${dataset} in it (it has: ${have}); measure ${dataset} with npm run prior -w @poad/train-datascicoding`,
    );
  }
  // The standard error of the mean reward, from the programs when the file keeps them.
  const programs = json.programs?.[dataset];
  let se: number | null = null;
  if (programs && programs.length > 1) {
    const r = programs.map((p) => (p.ok ? (p.auc as number) : -1));
    const m = r.reduce((a, b) => a + b, 0) / r.length;
    const variance = r.reduce((a, x) => a + (x - m) ** 2, 0) / (r.length - 1);
    se = Math.sqrt(variance / r.length);
  }
  return {
    file: file.replace(/\.gz$/, ''),
    dataset,
    samples: s.samples,
    meanReward: s.meanReward,
    meanRewardSe: se,
    ran: s.ran,
    bestAuc: s.bestAuc,
  };
}
