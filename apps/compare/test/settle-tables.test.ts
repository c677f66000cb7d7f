import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { etpoArms, heldOut, heldOutExploratory } from '../scripts/settle-tables.js';
import { archiveComparison } from '../src/archive.js';

const base = mkdtempSync(join(tmpdir(), 'poad-settle-tables-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

interface Seed {
  /** Entropy at iterations 1…20 (the rest of the rows repeat the last). */
  entropy20: number;
  /** Env steps at which 90% sampled success was reached, or null. */
  at90: number | null;
  greedyReturn: number;
}

/**
 * One arm's comparison folder, as `compare` writes it: compare.json, summary.json, run rows; laid
 * out as the archive keeps it (…/etpo/A) or as the runs write it (…/A/etpo-A).
 */
function arm(name: string, extra: string, seeds: Seed[], layout: 'archive' | 'runs'): string {
  const dir = layout === 'archive' ? join(base, 'etpo', name) : join(base, name, `etpo-${name}`);
  const runs = seeds.map((s, i) => {
    const run = `etpo-s${i + 1}`;
    mkdirSync(join(dir, run), { recursive: true });
    const rows = Array.from({ length: 30 }, (_, j) => ({
      iteration: j + 1,
      entropy: j === 0 ? 0.9 : j < 20 ? s.entropy20 : s.entropy20 / 2,
    }));
    writeFileSync(join(dir, run, 'metrics.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
    return {
      name: run,
      sampledSuccessAt: [s.at90, s.at90],
      greedy: { successRate: s.greedyReturn > 0 ? 1 : 0, meanReturn: s.greedyReturn },
      perplexity: [2.13, 2.2],
    };
  });
  writeFileSync(
    join(dir, 'compare.json'),
    JSON.stringify({ argv: ['--algos', 'etpo', ...(extra ? [`--extra=${extra}`] : [])] }),
  );
  writeFileSync(
    join(dir, 'summary.json'),
    JSON.stringify({ summaries: [{ label: 'etpo', runs }] }),
  );
  return dir;
}

const collapsed: Seed = { entropy20: 0.01, at90: null, greedyReturn: 0 };

describe('etpoArms (the pre-registered ETPO predictions)', () => {
  it('prints every seed, and prediction 1 holds only when every preset seed is below 0.05', () => {
    const a = arm('A', '', [collapsed, collapsed, { ...collapsed, entropy20: 0.049 }], 'archive');
    const lines = etpoArms([a]);
    expect(lines.filter((l) => l.startsWith('| A | etpo-s'))).toHaveLength(3);
    expect(lines).toContain(
      '| A | etpo-s3 | 0.900 / 0.049 / 0.025 | – | 0%, 0.000 | 2.13 → 2.20 |',
    );
    expect(lines.find((l) => l.startsWith('Prediction 1'))).toMatch(/: holds \(/);
    const a2 = arm('A2', '', [collapsed, collapsed, { ...collapsed, entropy20: 0.05 }], 'runs');
    expect(etpoArms([a2]).find((l) => l.startsWith('Prediction 1'))).toMatch(/does not hold/);
  });

  it('prediction 2 needs both conditions in the same seed, in at least 2 of 3 seeds', () => {
    const a = arm('A3', '', [collapsed, collapsed, collapsed], 'runs');
    // Two seeds reach 90%, two have entropy ≥ 0.3 at iteration 20, but only one seed has both.
    const split = arm(
      'B',
      '--critic-scale 0.0667',
      [
        { entropy20: 0.5, at90: 9000, greedyReturn: 0.774 },
        { entropy20: 0.1, at90: 12_000, greedyReturn: 0.774 },
        { entropy20: 0.4, at90: null, greedyReturn: 0 },
      ],
      'archive',
    );
    const lines = etpoArms([a, split]);
    expect(lines.find((l) => l.startsWith('Prediction 2'))).toMatch(/does not hold/);
    // Still an arm that learned (90% in 2 of 3): it becomes the preset.
    expect(lines.at(-1)).toMatch(/the new preset, by the protocol\): B \(--critic-scale 0.0667\)/);
    const both = arm(
      'C',
      '--policy-loss released',
      [
        { entropy20: 0.5, at90: 9000, greedyReturn: 0.7 },
        { entropy20: 0.3, at90: 12_000, greedyReturn: 0.7 },
        collapsed,
      ],
      'archive',
    );
    const with3 = etpoArms([a, split, both]);
    expect(with3.find((l) => l.startsWith('Prediction 2'))).toMatch(
      /holds for C \(--policy-loss released\)/,
    );
    // The preset goes to the higher mean final greedy return: B (0.516) over C (0.467).
    expect(with3.at(-1)).toMatch(/: B \(--critic-scale 0.0667\) \(0.516\)/);
  });

  it('reads an arm from its archive as from its folder, named by its letter', () => {
    const seeds = [collapsed, { entropy20: 0.6, at90: 5000, greedyReturn: 0.774 }, collapsed];
    const folder = arm('F', '--beta 0.01', seeds, 'archive');
    // Finished runs (an archive keeps those).
    for (const run of ['etpo-s1', 'etpo-s2', 'etpo-s3'])
      writeFileSync(join(folder, run, 'eval.json'), '{}');
    const zip = archiveComparison(folder, join(base, 'zipped', 'F')).file;
    const lines = etpoArms([folder]);
    expect(etpoArms([zip])).toEqual(lines);
    // Named as the folder was, once only the archive is there.
    rmSync(folder, { recursive: true });
    expect(etpoArms([join(base, 'zipped', 'F')])).toEqual(lines);
    expect(lines.some((l) => l.startsWith('| F (--beta 0.01) | etpo-s2 |'))).toBe(true);
  });

  it('keeps the preset when no arm reaches 90% sampled success in 2 of 3 seeds', () => {
    const a = arm(
      'A4',
      '',
      [collapsed, { entropy20: 0.6, at90: 5000, greedyReturn: 0.774 }, collapsed],
      'runs',
    );
    expect(etpoArms([a]).at(-1)).toBe(
      'No arm reached 90% sampled success in 2 of 3 seeds: the preset stays.',
    );
  });
});

/** One `npm run heldout` report: the five POAD runs and one prior seed. */
function report(name: string, dataset: string, poad: number[], prior: number): string {
  const file = join(base, `${name}.json`);
  const summaries = [
    ...poad.map((auc, i) => ({
      source: `poad-s${21 + i}`,
      ran: 0.9,
      meanAuc: auc,
      bestOfK: [auc],
    })),
    { source: 'prior', ran: 0.8, meanAuc: prior, bestOfK: [prior] },
  ];
  writeFileSync(file, JSON.stringify({ dataset, summaries }));
  return file;
}

describe('heldOut (the pre-registered pass criterion)', () => {
  const priors = [0.6, 0.61, 0.62, 0.59, 0.6];

  it('passes a dataset where POAD is at least 0.01 above the prior with the interval above 0', () => {
    const poad = [0.7, 0.71, 0.69, 0.72, 0.7];
    const files = priors.map((p, i) => report(`up-${i}`, 'kiln_batches', poad, p));
    const [head, , columns, , ...rows] = heldOut(files);
    expect(head).toMatch(/^kiln_batches: .*POAD 0\.7040 \(5 seeds\), prior 0\.6040 \(5 seeds\)/);
    expect(head).toMatch(/p = 0\.0079 \(exact\)\. Pass .*: yes\.$/);
    expect(columns).toContain('best of 256');
    expect(rows).toHaveLength(10);
  });

  it('fails a difference under 0.01, even when every POAD seed is above every prior seed', () => {
    const poad = [0.608, 0.609, 0.61, 0.611, 0.612];
    const low = [0.6, 0.601, 0.602, 0.603, 0.604];
    const files = low.map((p, i) => report(`small-${i}`, 'kiln_batches', poad, p));
    const [head] = heldOut(files);
    // POAD − prior 0.008 with its interval above 0: only the 0.01 rule fails it.
    expect(head).toMatch(/POAD − prior 0\.0080 \[0\.00\d\d, 0\.0\d+\]/);
    expect(head).toMatch(/Pass .*: no\.$/);
  });

  it('reads reports kept gzipped, each prior named by its report as it was written', () => {
    const poad = [0.7, 0.71, 0.69, 0.72, 0.7];
    const files = priors.map((p, i) => report(`gz-${i}`, 'kiln_batches', poad, p));
    const plain = heldOut(files);
    const gz = files.map((f) => {
      writeFileSync(`${f}.gz`, gzipSync(readFileSync(f)));
      rmSync(f);
      return `${f}.gz`;
    });
    expect(heldOut(gz)).toEqual(plain);
    expect(plain).toContain('| prior (gz-0.json) | 80% | 0.6000 | 0.600 | – | – | – | – |');
  });

  it('fails when the interval reaches 0, and refuses reports of different datasets', () => {
    const poad = [0.9, 0.5, 0.9, 0.5, 0.7];
    const files = priors.map((p, i) => report(`wide-${i}`, 'ferry_crossings', poad, p));
    expect(heldOut(files)[0]).toMatch(/Pass .*: no\.$/);
    const mixed = [
      report('m1', 'kiln_batches', poad, 0.6),
      report('m2', 'ferry_crossings', poad, 0.6),
    ];
    expect(() => heldOut(mixed)).toThrow(/different datasets/);
  });
});

describe('heldOutExploratory (beyond the protocol, from the same reports)', () => {
  /** A report whose sources have a share that ran and a best-of-k curve rising from `one` to `all`. */
  function curves(name: string, poad: [number, number, number][], prior: [number, number, number]) {
    const file = join(base, `${name}.json`);
    const source = (s: string, [ran, one, all]: [number, number, number]) => ({
      source: s,
      ran,
      meanAuc: 0.8,
      bestOfK: Array.from({ length: 256 }, (_, i) => one + ((all - one) * i) / 255),
    });
    const summaries = [...poad.map((x, i) => source(`poad-s${21 + i}`, x)), source('prior', prior)];
    writeFileSync(file, JSON.stringify({ dataset: 'ferry_crossings', summaries }));
    return file;
  }

  it('compares the share that ran, best of 1 and best of 256 with exact p-values', () => {
    const poad: [number, number, number][] = [
      [0.2, 0.1, 0.8],
      [0.4, 0.3, 0.8],
      [0.6, 0.5, 0.8],
      [0.3, 0.2, 0.8],
      [0.5, 0.4, 0.8],
    ];
    const priors = [0.8, 0.81, 0.82, 0.83, 0.84];
    const files = priors.map((r, i) => curves(`x-${i}`, poad, [r, 0.6, 0.9 + i / 100]));
    const [header, , ran, one, all] = heldOutExploratory(files);
    expect(header).toContain('POAD − prior [95% bootstrap]');
    // Every POAD seed below every prior seed: the smallest two-sided p of 5 against 5, 2/252.
    expect(ran).toMatch(/^\| ferry_crossings \| share that ran \| 0\.400 \| 0\.820 \| −0\.420 \[/);
    expect(ran).toMatch(/\| 0\.008 \(exact\) \|$/);
    expect(one).toMatch(
      /\| best of 1 \(expected AUC, failure 0\) \| 0\.300 \| 0\.600 \| −0\.300 \[/,
    );
    expect(all).toMatch(/\| best of 256 \| 0\.800 \| 0\.920 \| −0\.120 \[/);
  });
});
