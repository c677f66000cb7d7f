// Rebuilds every figure of docs/ whose data is kept in results/, from that data alone (each
// comparison's summary.json, and each run's metrics.jsonl), with the charts of `npm run compare`:
//   npm run figures -w @poad/compare                  writes them into docs/img/
//   npm run figures -w @poad/compare -- --check       rebuilds them and compares them with
//                                                     docs/img/ byte for byte (exit 1 if one differs)
//   npm run figures -w @poad/compare -- --out DIR     writes them into DIR instead
//   … -- --results DIR                                reads the comparisons from DIR, not results/
// Each comparison is read from its folder or, as results/ keeps it, from its archive
// (src/archive-file.ts); a held-out report FILE.json from FILE.json.gz too.
// The output depends on the data only: the same files give the same bytes.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lineChartSvg, type Series, svgToPng, writeFileAtomicSync } from '@poad/run-kit';
import { type Comparison, dataExists, openComparison, readJson } from '../src/archive-file.js';
import type { PriorReference } from '../src/prior.js';
import { type Group, groupCurve, mean, std } from '../src/report.js';
import { type HeldOutSource, heldOutArms } from './settle-tables.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** A path as printed: from the repository root when it is inside it. */
const display = (path: string): string => {
  const r = relative(ROOT, path);
  return r.startsWith('..') || isAbsolute(r) ? path : r;
};

/** What a figure shows: one chart of a comparison's report. */
type Chart = 'successRate' | 'meanReward';

/** A figure of docs/: its file under docs/img/ and what it draws from results/. */
type Figure = ComparisonFigure | BestOfKFigure;

/** A chart of a comparison (under results/) as its report draws it. */
interface ComparisonFigure {
  file: string;
  comparison: string;
  chart: Chart;
  /**
   * A combined comparison made from folders outside results/ (its combine.json names those): the
   * copies results/ keeps of them, in combine.json's order.
   */
  folders?: readonly string[];
}

/**
 * The best-of-k curves of one held-out dataset: its `npm run heldout` reports under results/, one
 * per prior seed, each scoring the same POAD runs.
 */
interface BestOfKFigure {
  file: string;
  chart: 'bestOfK';
  reports: readonly string[];
}

/** Every figure docs/ shows whose data results/ keeps (the others have no data there). */
export const FIGURES: readonly Figure[] = [
  {
    file: 'settle-poad-twosome-30-success.png',
    comparison: 'settle/poad-twosome-30',
    chart: 'successRate',
  },
  {
    file: 'settle-etpo-arms-success.png',
    comparison: 'settle/etpo/combined/combined-virtualhome-food-preparation-20261205-180855',
    chart: 'successRate',
    folders: ['A', 'B', 'C', 'D', 'E'].map((arm) => `settle/etpo/${arm}`),
  },
  {
    file: 'settle-heldout-kiln_batches-best-of-k.png',
    chart: 'bestOfK',
    reports: [21, 22, 23, 24, 25].map((s) => `settle/heldout/heldout-kiln_batches-${s}.json`),
  },
  {
    file: 'settle-heldout-ferry_crossings-best-of-k.png',
    chart: 'bestOfK',
    reports: [21, 22, 23, 24, 25].map((s) => `settle/heldout/heldout-ferry_crossings-${s}.json`),
  },
  {
    file: 'compare-food-preparation-secondary-success.png',
    comparison:
      'food-preparation-eval/secondary-combined/combined-virtualhome-food-preparation-20261127-171446',
    chart: 'successRate',
  },
  {
    file: 'datascicoding-eval-breast_cancer-mean-reward.png',
    comparison:
      'datascicoding-eval/breast_cancer/compare-datascicoding-breast_cancer-20261126-032318',
    chart: 'meanReward',
  },
  {
    file: 'datascicoding-eval-wine-mean-reward.png',
    comparison: 'datascicoding-eval/wine/compare-datascicoding-wine-20261126-032318',
    chart: 'meanReward',
  },
  {
    file: 'datascicoding-eval-csv-mean-reward.png',
    comparison: 'datascicoding-eval/csv/compare-datascicoding-csv-20261126-071646',
    chart: 'meanReward',
  },
  {
    file: 'datascicoding-eval-digits-mean-reward.png',
    comparison: 'datascicoding-eval/digits/combined-datascicoding-digits-20261127-014105',
    chart: 'meanReward',
  },
];

/** The part of a comparison's summary.json the figures read. */
interface Summary {
  env: string;
  summaries: { label: string; runs: { name: string }[] }[];
  prior?: PriorReference;
}

/** The comparison at `dir` (its folder, or its archive) and its summary.json. */
function readSummary(dir: string): { comparison: Comparison; summary: Summary } {
  const comparison = openComparison(dir, 'figures:');
  const file = join(comparison.root, 'summary.json');
  if (!dataExists(file)) throw new Error(`${dir}: no summary.json (not a comparison folder)`);
  return { comparison, summary: readJson<Summary>(file) };
}

/**
 * A folder a `--combine` report names (as given on its command line, from the repository
 * root): its place under `results`, so that a copy of results/ elsewhere is read too.
 */
function combinedFolder(folder: string, results: string): string {
  const inRepo = relative(join(ROOT, 'results'), resolve(ROOT, folder));
  if (inRepo.startsWith('..') || isAbsolute(inRepo)) {
    throw new Error(`combine.json names ${folder}, which is not under results/`);
  }
  return join(results, inRepo);
}

/**
 * The settings of a comparison folder as curve groups: its summary.json's labels and runs, in the
 * report's order. A `--combine` report's runs are in the folders its combine.json names: they
 * hold its settings in the same order, each labelled there without the folder's `--extra`.
 */
export function groupsOf(dir: string, results: string, kept?: readonly string[]): Group[] {
  const { comparison, summary } = readSummary(dir);
  const combine = join(comparison.root, 'combine.json');
  if (!dataExists(combine)) {
    return summary.summaries.map((s) => ({
      label: s.label,
      runDirs: s.runs.map((r) => join(comparison.root, r.name)),
    }));
  }
  const { folders } = readJson<{ folders: string[] }>(combine);
  if (kept && kept.length !== folders.length) {
    throw new Error(
      `${dir}: combine.json names ${folders.length} folders, the figure ${kept.length}`,
    );
  }
  const groups: Group[] = [];
  for (const [i, folder] of folders.entries()) {
    const { comparison: theirs, summary: their } = readSummary(
      kept ? join(results, kept[i]!) : combinedFolder(folder, results),
    );
    for (const own of their.summaries) {
      const shown = summary.summaries[groups.length];
      const names = (s: { runs: { name: string }[] }) => s.runs.map((r) => r.name).join(',');
      const sameLabel = shown?.label === own.label || shown?.label.startsWith(`${own.label} `);
      if (!shown || !sameLabel || names(shown) !== names(own)) {
        throw new Error(
          `${dir}: setting ${groups.length + 1} of summary.json is not ${own.label} (${names(own)}) of ${folder}`,
        );
      }
      groups.push({ label: shown.label, runDirs: own.runs.map((r) => join(theirs.root, r.name)) });
    }
  }
  if (groups.length !== summary.summaries.length) {
    throw new Error(`${dir}: summary.json has settings the folders of combine.json do not hold`);
  }
  return groups;
}

/**
 * The best-of-k curves of one dataset's held-out reports, POAD's and the prior's: at each k the
 * mean ± std over the arm's seeds of the expected largest held-out ROC AUC among k programs, drawn
 * against log₂ k (up to the shortest curve of the arm).
 */
export function bestOfKSeries(files: readonly string[]): { dataset: string; series: Series[] } {
  const { dataset, runs, priors } = heldOutArms(files);
  const arm = (name: string, sources: readonly HeldOutSource[]): Series => {
    const len = Math.min(...sources.map((s) => s.bestOfK.length));
    const points: [number, number][] = [];
    const spread: number[] = [];
    for (let k = 1; k <= len; k++) {
      const at = sources.map((s) => s.bestOfK[k - 1]!);
      points.push([Math.log2(k), mean(at)]);
      spread.push(std(at));
    }
    const n = sources.length;
    return { name: `${name} (${n} seed${n === 1 ? '' : 's'})`, points, spread };
  };
  return {
    dataset,
    series: [arm('poad', runs), { ...arm('prior', priors), color: '#555555', dashed: true }],
  };
}

/** The chart of one figure as SVG text, drawn as `npm run compare` draws its report's. */
export function figureSvg(figure: Figure, results: string): string {
  if (figure.chart === 'bestOfK') {
    const { dataset, series } = bestOfKSeries(figure.reports.map((r) => join(results, r)));
    return lineChartSvg({
      title: `${dataset}: expected best held-out ROC AUC among k programs (mean ± std over seeds)`,
      xLabel: 'log₂ k',
      yLabel: 'held-out ROC AUC',
      series,
    });
  }
  const dir = join(results, figure.comparison);
  const { env, prior } = readSummary(dir).summary;
  const series: Series[] = groupsOf(dir, results, figure.folders).map((g) =>
    groupCurve(g, figure.chart),
  );
  if (figure.chart === 'successRate') {
    return lineChartSvg({
      title: `${env}: success rate (mean ± std over seeds)`,
      xLabel: 'environment steps',
      yLabel: 'success rate',
      series,
    });
  }
  if (prior) {
    // The untrained model's programs: a dashed level across the runs' steps.
    const xs = series.flatMap((s) => s.points.map(([x]) => x));
    series.push({
      name: `prior (${prior.samples} programs)`,
      points: [
        [Math.min(...xs), prior.meanReward],
        [Math.max(...xs), prior.meanReward],
      ],
      color: '#555555',
      dashed: true,
    });
  }
  return lineChartSvg({
    title: `${env}: mean reward of the sampled programs (failure −1) (mean ± std over seeds)`,
    xLabel: 'environment steps',
    yLabel: 'reward',
    series,
  });
}

interface Options {
  out: string;
  results: string;
  check: boolean;
}

function parse(argv: readonly string[]): Options {
  // npm run -w starts this in apps/compare; paths on the command line are the caller's.
  const cwd = process.env.INIT_CWD ?? process.cwd();
  const o: Options = {
    out: join(ROOT, 'docs', 'img'),
    results: join(ROOT, 'results'),
    check: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--check') o.check = true;
    else if (a === '--out' || a === '--results') {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a folder`);
      o[a === '--out' ? 'out' : 'results'] = resolve(cwd, v);
    } else throw new Error(`unknown argument ${a} (expected --out DIR, --results DIR or --check)`);
  }
  return o;
}

async function main(argv: readonly string[]): Promise<number> {
  const o = parse(argv);
  let differ = 0;
  if (!o.check) mkdirSync(o.out, { recursive: true });
  for (const figure of FIGURES) {
    const png = await svgToPng(figureSvg(figure, o.results));
    const target = join(o.out, figure.file);
    if (o.check) {
      const same = existsSync(target) && Buffer.from(png).equals(readFileSync(target));
      if (!same) differ++;
      process.stdout.write(`${same ? 'same' : 'DIFFERS'}  ${display(target)}\n`);
    } else {
      writeFileAtomicSync(target, png);
      process.stdout.write(`wrote ${display(target)}\n`);
    }
  }
  if (differ > 0) {
    process.stderr.write(
      `${differ} of ${FIGURES.length} figures differ from their rebuild; run npm run figures -w @poad/compare\n`,
    );
    return 1;
  }
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exitCode = 2;
  }
}
