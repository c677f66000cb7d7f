import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import { folderProgress, spawnApp, waitUntil, withProgress } from '@poad/dev-kit';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { archiveComparison } from '../src/archive.js';
import { openArchive } from '../src/archive-file.js';
import { compare } from '../src/main.js';
import {
  type GroupSummary,
  groupCurve,
  markdown,
  pairwiseDifferences,
  smoothed,
  summarise,
  summariseRun,
} from '../src/report.js';

const out = mkdtempSync(join(tmpdir(), 'poad-compare-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Collects what the comparison writes to stderr (restored after each test). */
function captureStderr(): string[] {
  const msgs: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((m) => {
    msgs.push(String(m));
    return true;
  });
  return msgs;
}

/**
 * Runs a comparison in this process. On a loaded machine a comparison may take long, so no cap
 * is put on the whole of it: it fails when nothing under `folder` changes (no config, metrics row,
 * checkpoint, log line or report written) for 3 minutes, i.e. when one of its steps stalls.
 */
const comparing = (argv: string[], folder: string) =>
  withProgress(compare(argv), () => folderProgress(folder), {
    what: `compare ${argv.join(' ')}`,
    stallMs: 180_000,
  });

/**
 * The training options of a tiny run: 2 envs × 2 steps, one epoch of one minibatch, and the model's
 * perplexity measured on its first 2 held-out lines (every run writes perplexity.json all the same;
 * all 200 lines would take longer than the rest of the run).
 */
const TINY_EXTRA = '--envs 2 --num-steps 2 --epochs 1 --num-minibatches 1 --perplexity-lines 2';

/** Tiny runs (one iteration unless said, one evaluation episode); the last entry is --extra. */
const tiny = (env: string, seeds = 1, iterations = 1) => [
  '--env',
  env,
  '--seeds',
  String(seeds),
  '--model',
  DEFAULT_MODEL,
  '--max-iterations',
  String(iterations),
  '--eval-episodes',
  '1',
  `--extra=${TINY_EXTRA}`,
];

/**
 * The environment of the comparisons trained here, whose tests are about how a comparison runs
 * its runs (algorithms × seeds, child processes, signals, resume, reuse), not about an
 * environment: the credit task delayed, whose evaluation episodes end within a few steps (an
 * untrained policy plays VirtualHome's 50-step limit out, which takes longer than the rest of a
 * tiny run). queue.test.ts's comparisons train on VirtualHome.
 */
const QUICK_ENV = 'credit/delayed';

/** POAD and NTPO on QUICK_ENV, one seed, as two child processes (--jobs 2). */
const poadNtpoInChildren = (base: string, iterations = 1) => [
  ...tiny(QUICK_ENV, 1, iterations),
  '--algos',
  'poad,ntpo',
  '--jobs',
  '2',
  '--out',
  base,
];

describe('report maths', () => {
  it('smooths over iterations with finished episodes and finds steps to 90% of the optimum', () => {
    const dir = join(out, 'fake');
    mkdirSync(dir, { recursive: true });
    const rows = [
      { envSteps: 100, episodeReturn: 0.1, successRate: 0 },
      { envSteps: 200, episodeReturn: null, successRate: null },
      { envSteps: 300, episodeReturn: 0.9, successRate: 1 },
      { envSteps: 400, episodeReturn: 0.95, successRate: 1 },
    ];
    writeFileSync(join(dir, 'metrics.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
    expect(smoothed(rows, 'episodeReturn', 2)).toEqual([0.1, 0.1, 0.5, 0.925]);
    writeFileSync(
      join(dir, 'eval.json'),
      JSON.stringify({
        results: {
          'a/greedy': { meanReturn: 0.7, successRate: 0.9 },
          'b/greedy': { meanReturn: 0.2, successRate: 0.25 },
        },
      }),
    );
    const s = summarise({ label: 'x', runDirs: [dir] }, 'a', 1);
    expect(s.stepsTo90).toEqual([null]); // running mean over 5 never reaches 0.9
    expect(summarise({ label: 'x', runDirs: [dir] }, 'a', 0.5).stepsTo90).toEqual([300]);
    expect(s.finalSuccess[0]).toBeCloseTo(0.9);
    expect(s.generalisation).toEqual({ a: 0.9, b: 0.25 });
    expect(markdown('T', 'cmd', [s], 1)).toContain(
      '| x | 1 | 0.700 ± 0.000 | 90.0% ± 0.0% | not reached (0/1) |',
    );
    // The legend counts seeds in words a reader expects.
    expect(groupCurve({ label: 'x', runDirs: [dir] }, 'successRate').name).toBe('x (1 seed)');
    const two = groupCurve({ label: 'x', runDirs: [dir, dir] }, 'episodeReturn');
    expect(two.name).toBe('x (2 seeds)');
    // running means over 5 iterations: .1 .1 .5 .65
    expect(two.points.map(([, y]) => Math.round(y * 1e6) / 1e6)).toEqual([0.1, 0.1, 0.5, 0.65]);
    expect(two.spread).toEqual([0, 0, 0, 0]);
    // The curve starts once half the seeds have a value: not on the one seed done soonest.
    const late = join(out, 'summary-late');
    mkdirSync(late, { recursive: true });
    writeFileSync(
      join(late, 'metrics.jsonl'),
      [null, null, 0, 0]
        .map((v, i) => JSON.stringify({ envSteps: 100 * (i + 1), successRate: v }))
        .join('\n'),
    );
    const three = groupCurve({ label: 'x', runDirs: [dir, late, late] }, 'successRate');
    expect(three.points.map(([x]) => x)).toEqual([300, 400]);
    expect(three.points[0]![1]).toBeCloseTo(0.5 / 3);
  });

  it('summarises each run: sampled-success thresholds, final running means, greedy result', () => {
    const dir = join(out, 'per-run');
    mkdirSync(dir, { recursive: true });
    const rows = [1, 0, 0.4, null, 0.8, 1, 1].map((successRate, i) => ({
      envSteps: 128 * (i + 1),
      wallSeconds: 2.5 * (i + 1),
      successRate,
      episodeReturn: successRate === null ? null : successRate / 2,
      episodeLength: successRate === null ? null : 50 - 40 * successRate,
      labelMass: 0.9 - 0.1 * i,
    }));
    writeFileSync(join(dir, 'metrics.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
    const r = summariseRun(dir, 'a');
    // Running means over the last 5 iterations with episodes: 1, .5, .47, .47, .55, .64, .64;
    // the thresholds count from the first full window (the 6th row), not the lucky first one.
    expect(r.sampledSuccessAt).toEqual([768, null]);
    expect(r.finalSampled!.successRate).toBeCloseTo(0.64);
    expect(r.finalSampled!.episodeReturn).toBeCloseTo(0.32);
    expect(r.finalSampled!.episodeLength).toBeCloseTo(24.4);
    expect(r.greedy).toBeNull();
    expect(r.finalLabelMass).toBeCloseTo(0.5); // mean of .7 .6 .5 .4 .3
    expect(r.perplexity).toBeNull();
    expect([r.envSteps, r.wallSeconds, r.name]).toEqual([896, 17.5, 'per-run']);
    writeFileSync(join(dir, 'perplexity.json'), JSON.stringify({ before: 2.126, after: 4.5 }));
    writeFileSync(
      join(dir, 'eval.json'),
      JSON.stringify({ results: { 'a/greedy': { meanReturn: 0.774, successRate: 1 } } }),
    );
    const s = summarise({ label: 'y', runDirs: [dir] }, 'a', 1);
    expect(s.runs[0]!.greedy).toEqual({ successRate: 1, meanReturn: 0.774 });
    expect(markdown('T', 'cmd', [s], 1)).toContain(
      '| per-run | 768 / – | 64.0%, 0.320, 24.4 | 100.0%, 0.774 | 0.500 | 2.13 → 4.50 | 896 | 18 |',
    );
  });
});

describe('pairwise differences in the report', () => {
  /** A group of runs with the given greedy returns (success = return > 0) and steps to 90%. */
  const group = (
    label: string,
    returns: number[],
    stepsTo90: (number | null)[],
    credit?: number[],
  ): GroupSummary => ({
    label,
    seeds: returns.length,
    finalReturn: [0, 0],
    finalSuccess: [0, 0],
    stepsTo90: [],
    generalisation: {},
    creditAccuracy: credit ? [credit.reduce((a, b) => a + b, 0) / credit.length, 0] : null,
    runs: returns.map((r, i) => ({
      name: `${label}-s${i + 1}`,
      sampledSuccessAt: [null, stepsTo90[i]!],
      finalSampled: null,
      greedy: { successRate: r > 0 ? 1 : 0, meanReturn: r },
      finalLabelMass: null,
      perplexity: null,
      programs: null,
      creditAccuracy: credit ? credit[i]! : null,
      envSteps: 1000,
      wallSeconds: 1,
    })),
  });

  it('gives each pair an interval and p-value per metric and names the non-significant ones', () => {
    const a = group('a', [1, 1, 1], [100, 200, 300]);
    const b = group('b', [0, 0, 0], [null, null, 600]);
    const [d] = pairwiseDifferences([a, b]);
    expect(d!.a).toBe('a');
    // Hand-computed: returns 1,1,1 against 0,0,0: diff 1, interval [1, 1], p = 2/20.
    expect(d!.metrics.greedyReturn).toEqual({ diff: 1, low: 1, high: 1, p: 0.1, exact: true });
    // Steps: never-reached runs count as their 1000 env steps: 200 − 866.67.
    expect(d!.metrics.stepsTo90Sampled!.diff).toBeCloseTo(200 - 2600 / 3, 9);
    const md = markdown('T', 'cmd', [a, b], 1);
    expect(md).toContain('## Differences between settings');
    // Each p-value says how it was computed, with its Holm value over the table's four tests
    // (four equal p = 0.1: each becomes min(1, 4 × 0.1) = 0.4).
    expect(md).toContain('| a − b | 1.000 [1.000, 1.000], p = 0.100 (exact; Holm 0.400) (n.s.) |');
    expect(d!.holm.greedyReturn).toBeCloseTo(0.4, 12);
    // Seeds solved greedily (success ≥ 90%): 3 of 3 against 0 of 3, Fisher p = 2/20.
    expect(d!.solved).toEqual({
      a: { successes: 3, of: 3 },
      b: { successes: 0, of: 3 },
      p: expect.closeTo(0.1, 12),
      holm: expect.closeTo(0.4, 12),
    });
    expect(md).toContain('| 3/3 vs 0/3, p = 0.100 (Fisher; Holm 0.400) (n.s.) |');
    expect(md).toMatch(
      /Not significant at the 5% level after Holm's adjustment: a − b: final greedy return; a − b: final greedy success; a − b: env steps to 90% sampled success; a − b: seeds solved greedily\./,
    );
    expect(md).toContain(
      "Power: with 3 seeds per setting, no difference in solve rate reaches 80% power with Fisher's exact test at the 5% level (unadjusted), and its power for 0.3 against 0.7 is 0%.",
    );
    // Six seeds each separate the same values significantly (p = 2/924), and stay so after Holm
    // (the smallest of four p-values times 4).
    const sixGroups = [
      group('a', [1, 1, 1, 1, 1, 1], Array(6).fill(100)),
      group('b', [0, 0, 0, 0, 0, 0], Array(6).fill(null)),
    ];
    const six = pairwiseDifferences(sixGroups)[0]!;
    expect(six.metrics.greedyReturn!.p).toBeCloseTo(2 / 924, 12);
    expect(six.holm.greedyReturn).toBeCloseTo(4 * (2 / 924), 12);
    expect(markdown('T', 'cmd', sixGroups, 1)).toMatch(
      /\| 6\/6 vs 0\/6, p = 0\.002 \(Fisher; Holm 0\.009\) \|/,
    );
    // Eight each: p = 2/12,870, Holm 4 × that, both printed as below 0.001, not as 0.000.
    const eightGroups = [
      group('a', Array(8).fill(1), Array(8).fill(100)),
      group('b', Array(8).fill(0), Array(8).fill(null)),
    ];
    expect(pairwiseDifferences(eightGroups)[0]!.solved!.p).toBeCloseTo(2 / 12_870, 12);
    expect(markdown('T', 'cmd', eightGroups, 1)).toMatch(
      /\| 8\/8 vs 0\/8, p < 0\.001 \(Fisher; Holm < 0\.001\) \|/,
    );
    // No credit accuracy logged: not compared.
    expect(six.metrics.creditAccuracy).toBeUndefined();
  });

  it('compares credit accuracy when every run logged it (credit tasks), with a column', () => {
    const a = group('a', [1, 1, 1], [100, 200, 300], [0.5, 0.6, 0.7]);
    const b = group('b', [1, 1, 1], [100, 200, 300], [0.1, 0.2, 0.3]);
    const [d] = pairwiseDifferences([a, b]);
    // Hand-computed: 0.6 − 0.2 = 0.4; every split of {.5,.6,.7} vs {.1,.2,.3}: p = 2/20.
    expect(d!.metrics.creditAccuracy!.diff).toBeCloseTo(0.4, 12);
    expect(d!.metrics.creditAccuracy!.p).toBeCloseTo(0.1, 12);
    const md = markdown('T', 'cmd', [a, b], 1);
    expect(md).toMatch(/\| env steps to 90% of optimum \(1\.0000\) \| credit accuracy \|/);
    expect(md).toContain(
      '| a | 3 | 0.000 ± 0.000 | 0.0% ± 0.0% | not reached (0/3) | 0.600 ± 0.000 |',
    );
    expect(md).toContain('0.400 [');
    // Runs made before the deciding-token measure: no such column or test.
    expect(md).not.toContain('deciding token');
    expect(d!.metrics.creditAccuracyDeciding).toBeUndefined();
  });

  it('compares the credit accuracy at the deciding token where runs logged it', () => {
    const deciding = (g: GroupSummary, xs: number[]): GroupSummary => ({
      ...g,
      creditAccuracyDeciding: [xs.reduce((a, b) => a + b, 0) / xs.length, 0],
      runs: g.runs.map((r, i) => ({ ...r, creditAccuracyDeciding: xs[i]! })),
    });
    const a = deciding(group('a', [1, 1, 1], [100, 200, 300], [0.5, 0.6, 0.7]), [0.9, 0.8, 0.7]);
    const b = deciding(group('b', [1, 1, 1], [100, 200, 300], [0.1, 0.2, 0.3]), [0.1, 0.2, 0.3]);
    const [d] = pairwiseDifferences([a, b]);
    // 0.8 − 0.2 = 0.6, the same split as above: p = 2/20; five tests in the pair's Holm family.
    expect(d!.metrics.creditAccuracyDeciding!.diff).toBeCloseTo(0.6, 12);
    expect(d!.metrics.creditAccuracyDeciding!.p).toBeCloseTo(0.1, 12);
    expect(Object.keys(d!.holm)).toContain('creditAccuracyDeciding');
    const md = markdown('T', 'cmd', [a, b], 1);
    expect(md).toMatch(/\| credit accuracy \| at the deciding token \|/);
    expect(md).toContain(
      '| a | 3 | 0.000 ± 0.000 | 0.0% ± 0.0% | not reached (0/3) | 0.600 ± 0.000 | 0.800 ± 0.000 |',
    );
    expect(md).toContain('credit accuracy at the deciding token');
  });
});

describe('npm run compare', () => {
  // Tests mute or collect stderr; whatever they spied on is restored even when they fail.
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('runs every algorithm × seed and writes report, summary and curves', async () => {
    captureStderr();
    const code = await comparing(
      [...tiny(QUICK_ENV, 2), '--algos', 'poad,twosome,etpo', '--backend', 'wasm', '--out', out],
      out,
    );
    expect(code).toBe(0);
    const dir = join(out, readdirSync(out).find((d) => d.startsWith('compare-'))!);
    // --backend reaches every run.
    for (const run of ['poad-s1', 'twosome-s2']) {
      expect(JSON.parse(readFileSync(join(dir, run, 'config.json'), 'utf8')).backend).toBe('wasm');
      expect(JSON.parse(readFileSync(join(dir, run, 'environment.json'), 'utf8')).backend).toMatch(
        /^wasm/,
      );
    }
    for (const f of ['report.md', 'summary.json', 'curves.svg', 'curves.png', 'success.svg'])
      expect(existsSync(join(dir, f))).toBe(true);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
    expect(
      summary.summaries.map((s: { label: string; seeds: number }) => [s.label, s.seeds]),
    ).toEqual([
      ['poad', 2],
      ['twosome', 2],
      ['etpo', 2],
    ]);
    expect(readFileSync(join(dir, 'report.md'), 'utf8')).toMatch(/\| poad \| 2 \|/);
    expect(readFileSync(join(dir, 'report.md'), 'utf8')).toMatch(/\| etpo \| 2 \|/);
    // ETPO runs train with their own trainer: soft Q critic adapters in the checkpoint, β/τ recorded.
    const etpo = join(dir, 'etpo-s2');
    expect(JSON.parse(readFileSync(join(etpo, 'config.json'), 'utf8'))).toMatchObject({
      algo: 'etpo',
      beta: 0.1,
      tau: 0.005,
      reference: 'base',
    });
    const ck = join(etpo, 'checkpoints', readdirSync(join(etpo, 'checkpoints'))[0]!, 'model');
    for (const sub of ['critic', 'target'])
      expect(existsSync(join(ck, sub, 'adapter_model.safetensors'))).toBe(true);
    expect(readFileSync(join(etpo, 'metrics.jsonl'), 'utf8')).toMatch(/"klToReference":/);
  }, 0);

  it('reads --config FILE: its options are checked like the command line', async () => {
    const file = join(out, 'compare-config.yaml');
    writeFileSync(file, 'algos: [poad]\nseedz: 2\n');
    await expect(compare(['--config', file])).rejects.toThrow(
      /config file .*compare-config\.yaml: unknown option "seedz"/,
    );
    writeFileSync(file, 'algos: [poad, nope]\n');
    await expect(compare(['--config', file])).rejects.toThrow(/nope/);
  });

  it('an --extra option one of the algorithms does not take stops it before anything trains', async () => {
    const base = join(out, 'extra-refused');
    await expect(
      compare([
        '--env',
        'virtualhome/food-preparation',
        '--algos',
        'poad,etpo',
        '--extra=--clip 0.1',
        '--out',
        base,
      ]),
    ).rejects.toThrow(
      /etpo, seed 1: command line --clip: not an option of --algo etpo; it is one of poad, ntpo, twosome, archer, grpo, rloo, gigpo's/,
    );
    expect(existsSync(base)).toBe(false);
  });

  it('--prior is checked before anything trains: a dataset the file lacks is refused', async () => {
    const base = join(out, 'prior-refused');
    mkdirSync(base);
    const prior = join(base, 'prior.json');
    writeFileSync(prior, JSON.stringify({ summaries: [{ dataset: 'wine', samples: 1 }] }));
    const dsc = ['--env', 'datascicoding/digits', '--algos', 'poad', '--out', join(base, 'runs')];
    await expect(compare([...dsc, '--prior', prior])).rejects.toThrow(
      /--prior .*prior\.json: no programs of digits in it \(it has: wine\)/,
    );
    const vh = ['--env', 'virtualhome/food-preparation', '--out', join(base, 'runs')];
    await expect(compare([...vh, '--prior', prior])).rejects.toThrow(/only DataSciCoding/);
    expect(existsSync(join(base, 'runs'))).toBe(false);
  });

  it('--first-seed 7 --seeds 1 trains seed 7 only (tuning seeds apart from evaluation seeds)', async () => {
    const base = join(out, 'first-seed');
    captureStderr();
    const code = await comparing(
      [...tiny(QUICK_ENV, 1), '--algos', 'poad', '--first-seed', '7', '--out', base],
      base,
    );
    expect(code).toBe(0);
    const dir = join(base, readdirSync(base)[0]!);
    expect(readdirSync(dir).filter((d) => d.startsWith('poad-'))).toEqual(['poad-s7']);
    expect(JSON.parse(readFileSync(join(dir, 'poad-s7', 'config.json'), 'utf8')).seed).toBe(7);
  }, 0);

  it("without --model each run takes its training command's default model (the code model on DataSciCoding)", async () => {
    const base = join(out, 'datascicoding');
    captureStderr();
    const code = await comparing(
      [
        '--env',
        'datascicoding/iris',
        '--algos',
        'poad',
        '--seeds',
        '1',
        '--max-iterations',
        '1',
        '--eval-episodes',
        '1',
        '--extra=--envs 2 --num-steps 1 --epochs 1 --num-minibatches 1 --perplexity-lines 2',
        '--out',
        base,
      ],
      base,
    );
    expect(code).toBe(0);
    const dir = join(base, readdirSync(base)[0]!);
    expect(JSON.parse(readFileSync(join(dir, 'poad-s1', 'config.json'), 'utf8')).model).toBe(
      'default-code',
    );
    // The code model writes programs; the report's programs table counts them.
    const programs = readFileSync(join(dir, 'poad-s1', 'programs.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(programs).toHaveLength(2);
    expect(JSON.parse(programs[0]!).body).toMatch(/sklearn/);
  }, 0);

  it('--jobs 2 runs in child processes; --resume keeps finished runs and continues cut-off ones', async () => {
    const base = join(out, 'jobs');
    mkdirSync(base);
    const msgs = captureStderr();
    const code = await comparing(poadNtpoInChildren(base), base);
    expect(code).toBe(0);
    const dir = join(base, readdirSync(base)[0]!);
    for (const run of ['poad-s1', 'ntpo-s1']) {
      expect(existsSync(join(dir, run, 'eval.json'))).toBe(true);
      expect(readFileSync(join(dir, `${run}.log`), 'utf8')).toContain('run directory');
    }
    // Cut one run short of its final evaluation; the resumed comparison redoes only that part.
    rmSync(join(dir, 'ntpo-s1', 'eval.json'));
    msgs.length = 0;
    expect(await comparing(['--resume', dir], base)).toBe(0);
    expect(msgs.join('')).toContain('1 of 2 runs already finished');
    expect(existsSync(join(dir, 'ntpo-s1', 'eval.json'))).toBe(true);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
    expect(summary.command).toContain('--jobs 2');
    expect(summary.command).toContain('(then --resume');
    expect(summary.summaries.map((x: { label: string }) => x.label)).toEqual(['poad', 'ntpo']);
    await expect(compare(['--resume', join(base, 'nope')])).rejects.toThrow(/compare\.json/);
    // --report-only: a report of the finished runs, nothing started.
    rmSync(join(dir, 'ntpo-s1', 'eval.json'));
    expect(await compare(['--resume', dir, '--report-only'])).toBe(0);
    expect(existsSync(join(dir, 'ntpo-s1', 'eval.json'))).toBe(false);
    const partial = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
    expect(partial.summaries.map((x: { label: string }) => x.label)).toEqual(['poad']);
    expect(partial.command).toContain('--report-only');
    await expect(compare(['--report-only'])).rejects.toThrow(/needs --resume/);
    // A run cut off before its first checkpoint starts again from nothing.
    rmSync(join(dir, 'ntpo-s1', 'checkpoints'), { recursive: true });
    msgs.length = 0;
    expect(await comparing(['--resume', dir], base)).toBe(0);
    expect(msgs.join('')).toContain('starting ntpo, seed 1 (ntpo-s1) again: it had no checkpoint');
    expect(existsSync(join(dir, 'ntpo-s1', 'eval.json'))).toBe(true);
  }, 0);

  it('SIGTERM stops a --jobs 2 comparison cleanly: runs checkpoint, exit 130, --resume finishes', async () => {
    const base = join(out, 'signal');
    mkdirSync(base);
    // The runs' length: the signal comes once both have a checkpoint (after iteration 1; both
    // then stop after iteration 2 or so), and leaves them iterations to resume.
    const iterations = 8;
    const { child, done } = spawnApp(
      'apps/compare/src/main.ts',
      poadNtpoInChildren(base, iterations),
    );
    const progress = () => folderProgress(base);
    try {
      // Signal once both runs have written a checkpoint (however long that takes, as long as the
      // runs keep writing).
      const checkpointed = () => {
        const dir = readdirSync(base)[0];
        return (
          dir !== undefined &&
          ['poad-s1', 'ntpo-s1'].every((run) =>
            existsSync(join(base, dir, run, 'checkpoints', 'latest.json')),
          )
        );
      };
      await withProgress(
        waitUntil(checkpointed, 'a checkpoint of both runs', { timeoutMs: Infinity }),
        progress,
        { what: 'the comparison before SIGTERM', stallMs: 180_000 },
      );
      child.kill('SIGTERM');
      const { code, out: err } = await withProgress(done, progress, {
        what: 'the comparison after SIGTERM',
        stallMs: 180_000,
      });
      const dir = join(base, readdirSync(base)[0]!);
      expect(code, err).toBe(130);
      expect(err).toContain(`continue with: npm run compare -- --resume ${dir}`);
      for (const run of ['poad-s1', 'ntpo-s1']) {
        // Each run got the signal, saved and stopped before the end; no report was written.
        expect(readFileSync(join(dir, `${run}.log`), 'utf8')).toMatch(
          new RegExp(`stopped after iteration \\d+/${iterations}`),
        );
        expect(existsSync(join(dir, run, 'eval.json'))).toBe(false);
      }
      expect(existsSync(join(dir, 'report.md'))).toBe(false);
      // Moved elsewhere with its unfinished runs' latest checkpoints (as to another machine), the
      // comparison continues there; the folder it came from is left as it was.
      // (An archive is one zip file: X.zip for a destination X.)
      const finishedOnly = join(base, 'finished-only');
      expect(archiveComparison(dir, finishedOnly)).toEqual({
        file: `${finishedOnly}.zip`,
        finished: [],
        unfinished: [],
        kept: [],
      });
      const archived = archiveComparison(dir, join(out, 'signal-moved'), { unfinished: true });
      expect(archived.finished).toEqual([]);
      expect(archived.unfinished.sort()).toEqual(['ntpo-s1', 'poad-s1']);
      const members = openArchive(archived.file).names();
      for (const run of ['poad-s1', 'ntpo-s1']) {
        const { name } = JSON.parse(
          readFileSync(join(dir, run, 'checkpoints', 'latest.json'), 'utf8'),
        );
        const inCheckpoints = members
          .filter((m) => m.startsWith(`${run}/checkpoints/`))
          .map((m) => m.slice(`${run}/checkpoints/`.length).split('/')[0]!);
        expect([...new Set(inCheckpoints)].sort()).toEqual([name, 'latest.json']);
        expect(members).not.toContain(`${run}/run.lock`);
      }
      // The archive continues in a folder of its name under --out.
      const movedOut = join(out, 'signal-moved-out');
      const moved = join(movedOut, 'signal-moved');
      const msgs = captureStderr();
      expect(await comparing(['--resume', archived.file, '--out', movedOut], movedOut)).toBe(0);
      for (const run of ['poad-s1', 'ntpo-s1']) {
        expect(existsSync(join(dir, run, 'eval.json'))).toBe(false);
        // It went on from the checkpoint that came with it, not from the start.
        expect(readFileSync(join(moved, `${run}.log`), 'utf8')).toMatch(
          new RegExp(`resuming ${join(moved, run)} after iteration [1-9]`),
        );
        const rows = readFileSync(join(moved, run, 'metrics.jsonl'), 'utf8')
          .trim()
          .split('\n');
        expect(rows.map((l) => JSON.parse(l).iteration)).toEqual(
          Array.from({ length: iterations }, (_, i) => i + 1),
        );
      }
      expect(existsSync(join(moved, 'report.md'))).toBe(true);
      expect(existsSync(join(dir, 'report.md'))).toBe(false);
      expect(msgs.join('')).toContain('finished poad, seed 1');
    } finally {
      // A failed check must not leave the comparison (and its runs) going.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    }
  }, 0);

  it('--reuse copies in finished runs with the same settings and seed, and trains the rest', async () => {
    const base = join(out, 'reuse');
    mkdirSync(base);
    const msgs = captureStderr();
    const common = tiny(QUICK_ENV);
    // An algorithm comparison: NTPO with γ_w unset, i.e. γ_w = γ = 0.95.
    expect(await comparing([...common, '--algos', 'ntpo', '--out', join(base, 'a')], base)).toBe(0);
    const a = join(base, 'a', readdirSync(join(base, 'a'))[0]!);
    // Its archive (finished runs without checkpoints, one zip file) is what the ablation reuses,
    // read as it is.
    const arch = join(base, 'a-archive.zip');
    expect(archiveComparison(a, arch)).toEqual({
      file: arch,
      finished: ['ntpo-s1'],
      unfinished: [],
      kept: [],
    });
    expect(existsSync(join(a, 'ntpo-s1', 'checkpoints'))).toBe(true);
    const members = openArchive(arch).names();
    expect(members).toContain('compare.json');
    expect(members).toContain('ntpo-s1/metrics.jsonl');
    expect(members.some((m) => m.includes('checkpoints'))).toBe(false);
    expect(() => archiveComparison(join(a, 'ntpo-s1'), join(base, 'x'))).toThrow(
      /not a comparison folder/,
    );
    // The γ_w ablation takes γ_w = 0.95 from it and trains only γ_w = 0.9.
    msgs.length = 0;
    const args = [
      ...common,
      '--intra-gammas',
      '0.95,0.9',
      '--reuse',
      arch,
      '--out',
      join(base, 'b'),
    ];
    expect(await comparing(args, base)).toBe(0);
    const b = join(base, 'b', readdirSync(join(base, 'b'))[0]!);
    expect(msgs.join('')).toContain(`reused ntpo γw=0.95, seed 1 (ntpo-w-0.95-s1) from ${arch}`);
    expect(msgs.join('')).not.toContain('reused ntpo γw=0.9,');
    const metrics = (d: string) => readFileSync(join(d, 'metrics.jsonl'), 'utf8');
    expect(metrics(join(b, 'ntpo-w-0.95-s1'))).toBe(metrics(join(a, 'ntpo-s1')));
    expect(metrics(join(b, 'ntpo-w-0.9-s1'))).not.toBe(metrics(join(a, 'ntpo-s1')));
    expect(JSON.parse(readFileSync(join(b, 'ntpo-w-0.9-s1', 'config.json'), 'utf8'))).toMatchObject(
      {
        intraGamma: 0.9,
        runName: 'ntpo-w-0.9-s1',
      },
    );
    const summary = JSON.parse(readFileSync(join(b, 'summary.json'), 'utf8'));
    expect(summary.reused).toEqual({ 'ntpo-w-0.95-s1': join(arch, 'ntpo-s1') });
    expect(readFileSync(join(b, 'report.md'), 'utf8')).toContain(
      `- ntpo-w-0.95-s1 ← ${join(arch, 'ntpo-s1')}`,
    );
    // Another seed or learning rate is another run: nothing to reuse.
    msgs.length = 0;
    const other = [...common.slice(0, -1), `--extra=${TINY_EXTRA} --lr 1e-4`];
    expect(
      await comparing([...other, '--algos', 'ntpo', '--reuse', a, '--out', join(base, 'c')], base),
    ).toBe(0);
    expect(msgs.join('')).not.toContain('reused');
    await expect(
      compare([...common, '--algos', 'ntpo', '--reuse', join(base, 'nope'), '--out', base]),
    ).rejects.toThrow(/--reuse .*nope: no such folder/);

    // --combine: one report over comparisons run separately (here two learning rates), each
    // setting labelled with its folder's --extra; a second folder of the same setting (the
    // archive) is told apart by its folder name. Nothing is trained.
    const c = join(base, 'c', readdirSync(join(base, 'c'))[0]!);
    const d = join(base, 'd');
    expect(await compare(['--combine', `${a},${c},${arch}`, '--out', d])).toBe(0);
    const [combined] = readdirSync(d);
    expect(combined).toMatch(/^combined-credit-delayed-/);
    const cd = join(d, combined!);
    expect(readdirSync(cd).sort()).toEqual([
      'combine.json',
      'curves.png',
      'curves.svg',
      'report.md',
      'success.png',
      'success.svg',
      'summary.json',
    ]);
    const both = JSON.parse(readFileSync(join(cd, 'summary.json'), 'utf8'));
    const extra = TINY_EXTRA;
    expect(both.summaries.map((x: GroupSummary) => x.label)).toEqual([
      `ntpo ${extra}`,
      `ntpo ${extra} --lr 1e-4`,
      `ntpo ${extra} (a-archive)`,
    ]);
    expect(both.differences).toHaveLength(3);
    expect(both.command).toBe(`npm run compare -- --combine ${a},${c},${arch} --out ${d}`);
    const report = readFileSync(join(cd, 'report.md'), 'utf8');
    expect(report).toContain(`| ntpo ${extra} − ntpo ${extra} --lr 1e-4 |`);
    // Each folder has an ntpo-s1: the per-run rows name their setting.
    expect(report).toContain(`| ntpo ${extra} --lr 1e-4: ntpo-s1 |`);
    expect(report).toContain(`| ntpo ${extra} (a-archive): ntpo-s1 |`);
    // Folders that are not comparisons, of another environment, or --resume are refused.
    await expect(compare(['--combine', `${a},${base}`, '--out', d])).rejects.toThrow(
      /--combine .*reuse: no compare\.json there/,
    );
    const otherEnv = join(base, 'other-env');
    mkdirSync(otherEnv);
    writeFileSync(
      join(otherEnv, 'compare.json'),
      JSON.stringify({ argv: ['--env', 'virtualhome/food-preparation'] }),
    );
    await expect(compare(['--combine', `${a},${otherEnv}`, '--out', d])).rejects.toThrow(
      /other-env compares on virtualhome\/food-preparation, the first folder on credit\/delayed/,
    );
    await expect(compare(['--combine', a, '--resume', a])).rejects.toThrow(
      /cannot be used with --resume/,
    );
    // A prior of programs belongs to DataSciCoding only.
    const prior = join(base, 'prior.json');
    writeFileSync(prior, JSON.stringify({ summaries: [{ dataset: 'wine', samples: 1 }] }));
    await expect(compare(['--combine', a, '--prior', prior, '--out', d])).rejects.toThrow(
      /--prior: only DataSciCoding comparisons .* on credit\/delayed/,
    );
    expect(readdirSync(d)).toHaveLength(1);
  }, 0);
});
