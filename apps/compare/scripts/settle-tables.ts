// The tables of "Settling the open results" (docs/results.md), each computed as its protocol
// says, from the archived comparisons:
//   poad-twosome DIR   the confirmatory comparison: Fisher's exact test on seeds solved greedily
//                      (the primary), the greedy-return permutation test with its Holm value over
//                      the two, the power, and the generalisation table with its exploratory test;
//   etpo DIR...        the ETPO arms (one comparison folder each, labelled by its --extra): per seed
//                      the token entropy at iterations 1, 20 and the end, 90% sampled success,
//                      greedy success and return, perplexity; and the two predictions, held or not;
//   heldout FILE...    the held-out classifiers: the `npm run heldout` reports of one dataset (one
//                      per prior seed, each with the same POAD runs): per seed the mean held-out
//                      ROC AUC of the programs that ran, POAD − prior with its interval and
//                      p-value, the pass criterion, and the best-of-k curves;
//   heldout-exploratory FILE...
//                      beyond that protocol, from the same reports: POAD − prior on the share of
//                      programs that ran, on best of 1 (a failure counting as 0) and on best of
//                      256, with the same statistics (not pre-registered).
// A comparison is its folder or its archive (results/settle/poad-twosome-30 names
// results/settle/poad-twosome-30.zip once archived), and a report FILE.json is read from FILE.json.gz
// too. From the repository root:
//   node --import tsx apps/compare/scripts/settle-tables.ts poad-twosome results/settle/poad-twosome-30
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Comparison, dataExists, openComparison, readJson } from '../src/archive-file.js';
import {
  differenceText,
  fixed,
  type GroupSummary,
  readRows,
  SOLVED_AT,
  solvedSeeds,
} from '../src/report.js';
import {
  compareGroups,
  detectableDifference,
  fisherExact,
  fisherPower,
  holm,
} from '../src/stats.js';

const SEED = 12_345;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

interface Summary {
  summaries: GroupSummary[];
}

function summaryOf(c: Comparison): Summary {
  const file = join(c.root, 'summary.json');
  if (!dataExists(file))
    throw new Error(
      `${file} is missing: run npm run compare -- --resume ${c.root} --report-only first`,
    );
  return readJson<Summary>(file);
}

function group(s: Summary, label: string): GroupSummary {
  const g = s.summaries.find((x) => x.label === label);
  if (!g) throw new Error(`no setting labelled ${label} (have ${s.summaries.map((x) => x.label)})`);
  return g;
}

/** Greedy success per evaluated task of one run (eval.json's `task/greedy` entries). */
function greedyByTask(runDir: string): Record<string, number> {
  const file = join(runDir, 'eval.json');
  if (!dataExists(file)) return {};
  const e = readJson<{ results: Record<string, { successRate: number }> }>(file);
  return Object.fromEntries(
    Object.entries(e.results)
      .filter(([k]) => k.endsWith('/greedy'))
      .map(([k, v]) => [k.slice(0, -'/greedy'.length), v.successRate]),
  );
}

export function poadTwosome(dir: string): string[] {
  const c = openComparison(dir, 'poad-twosome');
  const s = summaryOf(c);
  const [poad, twosome] = [group(s, 'poad'), group(s, 'twosome')];
  const [a, b] = [solvedSeeds(poad)!, solvedSeeds(twosome)!];
  const fisher = fisherExact(a, b);
  const ret = compareGroups(
    poad.runs.map((r) => r.greedy!.meanReturn),
    twosome.runs.map((r) => r.greedy!.meanReturn),
    { seed: SEED },
  );
  const [hFisher, hReturn] = holm([fisher, ret.p]);
  const out = [
    `Seeds solved greedily (final greedy success ≥ ${100 * SOLVED_AT}%): POAD ${a.successes}/${a.of}, TWOSOME ${b.successes}/${b.of}; Fisher's exact test p = ${fixed(fisher, 4)} (Holm over the two tests ${fixed(hFisher!, 4)}) — primary, ${fisher < 0.05 ? 'significant' : 'not significant'} at 5%.`,
    `Final greedy return, POAD − TWOSOME: ${differenceText(ret, 3)}, p = ${fixed(ret.p, 4)} (${ret.exact ? 'exact' : 'Monte Carlo'}; Holm ${fixed(hReturn!, 4)}) — secondary.`,
    `Power of the primary test at these sizes: ${fixed(100 * fisherPower(a.of, b.of, 0.3, 0.7), 0)}% for 0.3 against 0.7; 80% power for a difference of ${fixed(detectableDifference(a.of, b.of) ?? Number.NaN, 2)} around 0.5.`,
  ];
  // Generalisation: per seed, the mean greedy success over the variants it was not trained on.
  const train = 'food-preparation';
  const unseen = (g: GroupSummary) =>
    g.runs.map((r) => {
      const tasks = Object.entries(greedyByTask(join(c.root, r.name))).filter(([t]) => t !== train);
      return tasks.length ? mean(tasks.map(([, v]) => v)) : Number.NaN;
    });
  const [ua, ub] = [unseen(poad), unseen(twosome)];
  if (ua.every(Number.isFinite) && ub.every(Number.isFinite)) {
    const g = compareGroups(ua, ub, { seed: SEED });
    out.push(
      `Mean greedy success over the unseen variants, per seed: POAD ${fixed(100 * mean(ua), 1)}%, TWOSOME ${fixed(100 * mean(ub), 1)}%; POAD − TWOSOME ${differenceText(g, 3)}, p = ${fixed(g.p, 4)} (${g.exact ? 'exact' : 'Monte Carlo'}; exploratory).`,
    );
    const tasks = Object.keys(poad.generalisation);
    out.push(
      '',
      `| algorithm | ${tasks.join(' | ')} |`,
      `|---|${tasks.map(() => '---').join('|')}|`,
      ...[poad, twosome].map(
        (x) =>
          `| ${x.label} | ${tasks.map((t) => `${fixed(100 * (x.generalisation[t] ?? Number.NaN), 0)}%`).join(' | ')} |`,
      ),
    );
  }
  return out;
}

/** The metrics rows' value of `key` at iteration `i` (1-based), or the last row's. */
function at(rows: readonly Record<string, unknown>[], key: string, i: number | 'last'): number {
  const row = i === 'last' ? rows.at(-1) : rows[i - 1];
  const v = row?.[key];
  return typeof v === 'number' ? v : Number.NaN;
}

export function etpoArms(dirs: readonly string[]): string[] {
  const out = [
    '| arm | seed | entropy at iterations 1 / 20 / end | 90% sampled success at (env steps) | greedy success, return | perplexity before → after |',
    '|---|---|---|---|---|---|',
  ];
  const arms: {
    name: string;
    entropy20: number[];
    reached: number;
    /** Seeds with entropy ≥ 0.3 at iteration 20 that reached 90% sampled success too. */
    both: number;
    greedyReturn: number[];
  }[] = [];
  for (const dir of dirs) {
    const c = openComparison(dir, 'etpo');
    const s = summaryOf(c);
    const compare = readJson<{ argv?: string[] }>(join(c.root, 'compare.json'));
    const extra = (compare.argv ?? []).find((a) => a.startsWith('--extra='))?.slice(8) ?? '';
    // The arm's letter: its archive (results/settle/etpo/A.zip), archived folder
    // (results/settle/etpo/A) or run folder (…/A/etpo-A).
    const letter = c.name.replace(/^etpo-/, '');
    const name = `${letter}${extra ? ` (${extra})` : ''}`;
    const g = group(s, 'etpo');
    const arm = {
      name,
      entropy20: [] as number[],
      reached: 0,
      both: 0,
      greedyReturn: [] as number[],
    };
    for (const r of g.runs) {
      const rows = readRows(join(c.root, r.name)) as unknown as Record<string, unknown>[];
      const e = [at(rows, 'entropy', 1), at(rows, 'entropy', 20), at(rows, 'entropy', 'last')];
      arm.entropy20.push(e[1]!);
      if (r.sampledSuccessAt[1] !== null) {
        arm.reached++;
        if (e[1]! >= 0.3) arm.both++;
      }
      arm.greedyReturn.push(r.greedy?.meanReturn ?? Number.NaN);
      out.push(
        `| ${name} | ${r.name} | ${e.map((x) => fixed(x, 3)).join(' / ')} | ${r.sampledSuccessAt[1] ?? '–'} | ${r.greedy ? `${fixed(100 * r.greedy.successRate, 0)}%, ${fixed(r.greedy.meanReturn, 3)}` : '–'} | ${r.perplexity ? `${fixed(r.perplexity[0], 2)} → ${fixed(r.perplexity[1], 2)}` : '–'} |`,
      );
    }
    arms.push(arm);
  }
  const preset = arms[0];
  if (preset) {
    const held = preset.entropy20.every((e) => e < 0.05);
    out.push(
      '',
      `Prediction 1 (the first folder, the preset arm: entropy below 0.05 at iteration 20 in every seed): ${held ? 'holds' : 'does not hold'} (${preset.entropy20.map((e) => fixed(e, 3)).join(', ')}).`,
    );
  }
  // Both conditions in the same seed, in at least 2 of the 3.
  const learners = arms.filter((a) => a.both >= 2);
  out.push(
    `Prediction 2 (an arm with entropy ≥ 0.3 at iteration 20 and 90% sampled success, both in each of at least 2 of its 3 seeds): ${learners.length ? `holds for ${learners.map((a) => a.name).join('; ')}` : 'does not hold'}.`,
  );
  const learnt = arms.filter((a) => a.reached >= 2);
  if (learnt.length) {
    const best = [...learnt].sort(
      (x, y) => mean(y.greedyReturn) - mean(x.greedyReturn) || y.reached - x.reached,
    )[0]!;
    out.push(
      `Arms with 90% sampled success in at least 2 of 3 seeds: ${learnt.map((a) => a.name).join('; ')}; the best by mean final greedy return (the new preset, by the protocol): ${best.name} (${fixed(mean(best.greedyReturn), 3)}).`,
    );
  } else out.push('No arm reached 90% sampled success in 2 of 3 seeds: the preset stays.');
  return out;
}

/** One source's figures in an `npm run heldout` report (a POAD run or a prior seed). */
export interface HeldOutSource {
  source: string;
  ran: number;
  meanAuc: number;
  bestOfK: number[];
}

interface HeldOutReport {
  dataset: string;
  summaries: HeldOutSource[];
}

/**
 * The two arms of one dataset's `npm run heldout` reports (one per prior seed): the POAD runs,
 * which every report scores alike (taken from the first), and each report's prior seed.
 */
export function heldOutArms(files: readonly string[]): {
  dataset: string;
  runs: HeldOutSource[];
  priors: HeldOutSource[];
} {
  if (files.length === 0) throw new Error('heldout: no report given');
  const reports = files.map((f) => readJson<HeldOutReport>(f));
  const dataset = reports[0]!.dataset;
  if (reports.some((r) => r.dataset !== dataset))
    throw new Error('heldout: the reports are of different datasets');
  const isPrior = (s: { source: string }) => s.source.startsWith('prior');
  const runs = reports[0]!.summaries.filter((s) => !isPrior(s));
  const priors = reports.map((r, i) => {
    const p = r.summaries.find(isPrior);
    if (!p) throw new Error(`heldout: ${files[i]} has no prior (run npm run heldout with --prior)`);
    return p;
  });
  return { dataset, runs, priors };
}

/** A report's name as it was written (results/ keeps it gzipped: FILE.json.gz names FILE.json). */
const reportName = (file: string): string => basename(file).replace(/\.gz$/, '');

export function heldOut(files: readonly string[]): string[] {
  const { dataset, runs, priors } = heldOutArms(files);
  const d = compareGroups(
    runs.map((r) => r.meanAuc),
    priors.map((p) => p.meanAuc),
    { seed: SEED },
  );
  const pass = d.diff >= 0.01 && d.low > 0;
  const ks = [1, 4, 16, 64, 256];
  const curve = (s: { bestOfK: number[] }) =>
    ks.map((k) => (s.bestOfK[k - 1] === undefined ? '–' : fixed(s.bestOfK[k - 1]!, 3)));
  return [
    `${dataset}: mean held-out ROC AUC of the programs that ran, POAD ${fixed(mean(runs.map((r) => r.meanAuc)), 4)} (${runs.length} seeds), prior ${fixed(mean(priors.map((p) => p.meanAuc)), 4)} (${priors.length} seeds); POAD − prior ${differenceText(d, 4)}, p = ${fixed(d.p, 4)} (${d.exact ? 'exact' : 'Monte Carlo'}). Pass (≥ 0.01 with the interval above 0): ${pass ? 'yes' : 'no'}.`,
    '',
    `| source | ran | mean held-out AUC (ran) | ${ks.map((k) => `best of ${k}`).join(' | ')} |`,
    `|---|---|---|${ks.map(() => '---').join('|')}|`,
    ...[...runs, ...priors].map(
      (s, i) =>
        `| ${i < runs.length ? s.source : `prior (${reportName(files[i - runs.length]!)})`} | ${fixed(100 * s.ran, 0)}% | ${fixed(s.meanAuc, 4)} | ${curve(s).join(' | ')} |`,
    ),
  ];
}

/**
 * Exploratory measures of one dataset's held-out reports, not in the protocol: POAD − prior on the
 * share of programs that ran and on the expected best held-out AUC among 1 and among 256 programs
 * (a failure counting as 0), with the primary's statistics.
 */
export function heldOutExploratory(files: readonly string[]): string[] {
  const { dataset, runs, priors } = heldOutArms(files);
  const measures: [string, (s: HeldOutSource) => number][] = [
    ['share that ran', (s) => s.ran],
    ['best of 1 (expected AUC, failure 0)', (s) => s.bestOfK[0]!],
    ['best of 256', (s) => s.bestOfK[255]!],
  ];
  return [
    '| dataset | measure | POAD | prior | POAD − prior [95% bootstrap] | p |',
    '|---|---|---|---|---|---|',
    ...measures.map(([name, of]) => {
      const d = compareGroups(runs.map(of), priors.map(of), { seed: SEED });
      return `| ${dataset} | ${name} | ${fixed(mean(runs.map(of)), 3)} | ${fixed(mean(priors.map(of)), 3)} | ${differenceText(d, 3)} | ${fixed(d.p, 3)} (${d.exact ? 'exact' : 'Monte Carlo'}) |`;
    }),
  ];
}

// Run as a script (not when a test imports the tables).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [what, ...rest] = process.argv.slice(2);
  const tables: Record<string, (args: string[]) => string[]> = {
    'poad-twosome': (a) => poadTwosome(a[0]!),
    etpo: etpoArms,
    heldout: heldOut,
    'heldout-exploratory': heldOutExploratory,
  };
  if (!what || !(what in tables) || rest.length === 0) {
    process.stderr.write(
      'usage: settle-tables.ts poad-twosome DIR | etpo DIR... | heldout REPORT.json... | heldout-exploratory REPORT.json...\n',
    );
    process.exit(2);
  }
  process.stdout.write(`${tables[what]!(rest).join('\n')}\n`);
}
