// What a DataSciCoding run keeps about the programs it wrote, beside the usual run files:
//   programs.jsonl      every sampled program: iteration, env step, reward, whether it ran, body,
//                       why it failed (reason), its attempt
//   best.json           the best program so far (reward, iteration, env step, body)
//   code-evolution.html each program that raised the best reward, its reward and its diff from
//                       the previous best (the ETPO paper's code-evolution figure, as a page)
//   code-curves.svg     mean reward, best reward and share of programs that ran, per env step
// Everything is rebuilt from programs.jsonl, whose rows past the checkpoint a resumed run drops
// first, so a killed and resumed run writes the same files as an uninterrupted one.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lineChartSvg, writeFileAtomicSync, writeJsonAtomicSync } from '@poad/run-kit';

/** One sampled program. */
export interface ProgramRow {
  iteration: number;
  /** Env steps taken when this program was scored (1-based, within its iteration's batch). */
  envStep: number;
  reward: number;
  /** Whether it ran and was scored (reward above the failure reward). */
  ran: boolean;
  body: string;
  /**
   * Why a program that did not run failed (`syntax`, `exception`, `timeout`, …: the env's
   * `info.reason`); absent for a program that ran, and in rows written before runs recorded it.
   */
  reason?: string;
  /**
   * Which attempt of its episode it was (1: the episode's first prompt; 2 to 5: fix-it turns
   * after a failure), as the run recorded it from its rollouts' layout; absent in rows written
   * before runs recorded it (then {@link attemptsOf} rebuilds it).
   */
  attempt?: number;
}

/** Per-iteration figures of the programs (also the extra metrics columns of the run). */
export interface ProgramStats {
  iteration: number;
  envSteps: number;
  /** Mean reward of the iteration's programs (failures count as the failure reward). */
  meanReward: number;
  /** Share of the iteration's programs that ran. */
  programsRun: number;
  /** Best reward of any program so far. */
  bestReward: number;
}

export const PROGRAMS_FILE = 'programs.jsonl';

/** The rows of programs.jsonl ([] when absent). */
export function readPrograms(runDir: string): ProgramRow[] {
  const file = join(runDir, PROGRAMS_FILE);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ProgramRow);
}

/**
 * Which attempt of its episode each program was: 1 for the episode's first prompt, 2 to
 * `maxAttempts` for a fix-it turn after a failure. Rebuilt from the rows alone: env step s
 * (1-based) was environment (s − 1) mod `numEnvs` (programs are scored in the order t·N + n), and
 * an episode ends with a program that ran or with its `maxAttempts`-th failure. A row that
 * recorded its attempt keeps it (runs record theirs from their own layout, which for the
 * group-relative algorithms is not t·N + n). The result follows the order of `rows`.
 */
export function attemptsOf(
  rows: readonly Pick<ProgramRow, 'envStep' | 'ran' | 'attempt'>[],
  numEnvs: number,
  maxAttempts = 5,
): number[] {
  if (!Number.isInteger(numEnvs) || numEnvs < 1) {
    throw new RangeError(`attemptsOf: numEnvs must be a positive integer, got ${numEnvs}`);
  }
  const next = new Array<number>(numEnvs).fill(1);
  const attempt = new Map<number, number>();
  for (const r of [...rows].sort((a, b) => a.envStep - b.envStep)) {
    const env = (r.envStep - 1) % numEnvs;
    const a = next[env]!;
    attempt.set(r.envStep, a);
    next[env] = r.ran || a >= maxAttempts ? 1 : a + 1;
  }
  return rows.map((r) => r.attempt ?? attempt.get(r.envStep)!);
}

/** Per-iteration statistics of programs, in iteration order. */
export function programStats(rows: readonly ProgramRow[]): ProgramStats[] {
  const byIteration = new Map<number, ProgramRow[]>();
  for (const r of rows) {
    const list = byIteration.get(r.iteration) ?? [];
    list.push(r);
    byIteration.set(r.iteration, list);
  }
  let best = Number.NEGATIVE_INFINITY;
  return [...byIteration]
    .sort(([a], [b]) => a - b)
    .map(([iteration, list]) => {
      for (const r of list) best = Math.max(best, r.reward);
      return {
        iteration,
        envSteps: Math.max(...list.map((r) => r.envStep)),
        meanReward: list.reduce((s, r) => s + r.reward, 0) / list.length,
        programsRun: list.filter((r) => r.ran).length / list.length,
        bestReward: best,
      };
    });
}

/** The programs that raised the best reward, in order (the first program is the first). */
export function improvements(rows: readonly ProgramRow[]): ProgramRow[] {
  const out: ProgramRow[] = [];
  let best = Number.NEGATIVE_INFINITY;
  for (const r of rows) {
    if (r.reward > best) {
      best = r.reward;
      out.push(r);
    }
  }
  return out;
}

/** One line of a line diff. */
export interface DiffLine {
  op: ' ' | '-' | '+';
  text: string;
}

/** A line diff from `a` to `b` (longest common subsequence; removals before additions). */
export function lineDiff(a: string, b: string): DiffLine[] {
  const x = a.split('\n');
  const y = b.split('\n');
  const n = x.length;
  const m = y.length;
  // lcs[i][j]: length of the LCS of x[i..] and y[j..]
  const lcs = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] =
        x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      out.push({ op: ' ', text: x[i]! });
      i++;
      j++;
    } else if (i < n && (j >= m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push({ op: '-', text: x[i]! });
      i++;
    } else {
      out.push({ op: '+', text: y[j]! });
      j++;
    }
  }
  return out;
}

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The code-evolution page: each program that raised the best reward and its diff. */
export function codeEvolutionHtml(title: string, rows: readonly ProgramRow[]): string {
  const steps = improvements(rows);
  const sections = steps.map((r, k) => {
    const diff =
      k === 0
        ? r.body.split('\n').map((text) => ({ op: ' ' as const, text }))
        : lineDiff(steps[k - 1]!.body, r.body);
    const lines = diff
      .map(
        (d) =>
          `<div class="l ${d.op === '+' ? 'add' : d.op === '-' ? 'del' : ''}"><span class="op">${d.op}</span>${esc(d.text)}</div>`,
      )
      .join('');
    const reward = r.ran ? `reward ${r.reward.toFixed(5)}` : `failed (reward ${r.reward})`;
    const what = k === 0 ? 'first program' : `change from the previous best`;
    return `<section><h2>#${k + 1} · env step ${r.envStep} · iteration ${r.iteration} · ${reward}</h2><p>${what}</p><pre>${lines}</pre></section>`;
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem}h2{font-size:1rem;margin:1.5rem 0 .3rem}p{margin:.2rem 0;color:#666;font-size:.9rem}
pre{background:#f7f7f7;border:1px solid #ddd;padding:.5rem;overflow-x:auto;font-size:.85rem}
.l{white-space:pre}.add{background:#e6ffed}.del{background:#ffeef0}.op{color:#999;display:inline-block;width:1.2em}
</style></head><body>
<h1>${esc(title)}</h1>
<p>${rows.length} programs sampled; ${steps.length} raised the best reward. Each section shows a program that did, as a diff from the best one before it.</p>
${sections.join('\n')}
</body></html>
`;
}

/** The curves of mean reward, best reward and share of programs that ran. */
export function codeCurvesSvg(title: string, stats: readonly ProgramStats[]): string {
  return lineChartSvg({
    title,
    xLabel: 'env steps',
    yLabel: 'reward (ROC AUC; failure −1) / share',
    series: [
      { name: 'mean reward', points: stats.map((s) => [s.envSteps, s.meanReward]) },
      { name: 'best reward', points: stats.map((s) => [s.envSteps, s.bestReward]) },
      { name: 'share of programs that ran', points: stats.map((s) => [s.envSteps, s.programsRun]) },
    ],
  });
}

/**
 * Records one iteration's programs and rewrites every derived file. `failureReward` is the
 * reward of a program that did not run. Returns the iteration's statistics.
 */
export function recordPrograms(
  runDir: string,
  title: string,
  iteration: number,
  programs: readonly { reward: number; body: string; envStep: number; reason?: string }[],
  o: {
    /** The failure reward (a program above it ran). */
    failureReward?: number;
    /**
     * Environments of the rollouts' layout (sample i of an iteration is environment i mod
     * `layoutEnvs`, its episodes continuing across iterations); 1 for rollouts of whole episodes
     * one after another (the group-relative algorithms). With it each row records its attempt.
     */
    layoutEnvs?: number;
  } = {},
): ProgramStats {
  const failureReward = o.failureReward ?? -1;
  // Rows of this iteration or later were written before a kill and are written again now.
  const rows = readPrograms(runDir).filter((r) => r.iteration < iteration);
  const first = rows.length;
  for (const p of programs) {
    rows.push({
      iteration,
      envStep: p.envStep,
      reward: p.reward,
      ran: p.reward > failureReward,
      body: p.body,
      ...(p.reason !== undefined && p.reward <= failureReward ? { reason: p.reason } : {}),
    });
  }
  if (o.layoutEnvs !== undefined) {
    const attempts = attemptsOf(rows, o.layoutEnvs);
    for (let i = first; i < rows.length; i++) rows[i]!.attempt = attempts[i]!;
  }
  writeFileAtomicSync(
    join(runDir, PROGRAMS_FILE),
    rows.map((r) => `${JSON.stringify(r)}\n`).join(''),
  );
  const best = improvements(rows).at(-1);
  if (best) writeJsonAtomicSync(join(runDir, 'best.json'), best);
  writeFileAtomicSync(join(runDir, 'code-evolution.html'), codeEvolutionHtml(title, rows));
  const stats = programStats(rows);
  writeFileAtomicSync(join(runDir, 'code-curves.svg'), codeCurvesSvg(title, stats));
  return stats.at(-1)!;
}

/** The estimator a program chose (the last scikit-learn class it constructs, e.g. in a pipeline). */
export function chosenEstimator(body: string): string {
  const classes = [
    ...body.matchAll(/\b([A-Z][A-Za-z]*(?:Classifier|Regression|NB|Analysis|CV))\(/g),
  ];
  const outer = classes.find((m) =>
    /^(VotingClassifier|StackingClassifier|BaggingClassifier|CalibratedClassifierCV)$/.test(m[1]!),
  );
  return outer?.[1] ?? classes.at(-1)?.[1] ?? 'none';
}
