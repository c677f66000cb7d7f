// The credit accuracy of `npm run train:credit`, recomputed from each iteration's rollout by a
// second route: the states from the prompts' text, the policy that acted checked against the
// probability the sampler gave each chosen label during the rollout (credit.jsonl), and Spearman's ρ from the
// exact A^π of @poad/envs-credit; the deciding token from the longest beginning the chosen
// label's ids share with another label's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import { TINY_RUN, trainingHarness } from '@poad/dev-kit';
import { type CreditTask, creditMdp, policyAdvantages, spearman } from '@poad/envs-credit';
import { type Agent, type AppSpec, type RunIterationReport, runCli } from '@poad/trainer';
import { describe, expect, it } from 'vitest';
import { type CreditRecord, creditApp } from '../src/spec.js';

interface Seen {
  report: RunIterationReport;
  extra: Record<string, number>;
  prompts: string[];
  runDir: string;
}
let seen: Seen[] = [];
let decidingSeen: number[] = [];

/** The credit app, watched: each iteration's report and its prompts as text. */
const watched: AppSpec = {
  ...creditApp,
  async onIteration(report, runDir, agent: Agent, progress) {
    const extra = (await creditApp.onIteration!(report, runDir, agent, progress)) as Record<
      string,
      number
    >;
    const prompts = [];
    for (let i = 0; i < report.buffer.size; i++)
      prompts.push(
        (await Promise.all(Array.from(report.buffer.prompt(i), (t) => agent.tokenText(t)))).join(
          '',
        ),
      );
    seen.push({ report, extra, prompts, runDir });
    return extra;
  },
};

// No perplexity passes: no test here reads perplexity.json, and the two passes over the model's
// 200 held-out lines would take longer than a tiny run's iterations.
const h = trainingHarness({
  inProcess: (argv) => runCli(watched, argv),
  base: ['--model', DEFAULT_MODEL, ...TINY_RUN, '--perplexity-lines', '0'],
});

const records = (runDir: string) =>
  readFileSync(join(runDir, 'credit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as CreditRecord);

/** Tokens the two id lists share from their start. */
function shared(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/** A ρ as the metrics row (NaN where undefined) and credit.jsonl (null there) hold it. */
function recorded(row: number | undefined, line: number | null, rho: number): void {
  if (Number.isNaN(rho)) {
    expect(row).toBeNaN();
    expect(line).toBeNull();
  } else {
    expect(row).toBeCloseTo(rho, 10);
    expect(line).toBeCloseTo(rho, 10);
  }
}

/** Checks every iteration seen against the second route; returns the ρ values. */
function check(task: CreditTask): number[] {
  const mdp = creditMdp(task);
  const running = mdp.states.filter((s) => !s.terminal);
  return seen.map(({ report, extra, prompts, runDir }) => {
    const { buffer, credit } = report;
    const rec = records(runDir).find((r) => r.iteration === report.iteration)!;
    const pi = (s: string, labels: readonly string[]) => labels.map((l) => rec.policy[s]![l]!);
    const states: string[] = [];
    const labels: string[] = [];
    const given: number[] = [];
    const atDeciding: number[] = [];
    const positions: number[] = [];
    for (let i = 0; i < buffer.size; i++) {
      // The state whose observation the prompt ends with (observations are distinct).
      const text = prompts[i]!.trimEnd();
      const matches = running.filter((s) => text.endsWith(s.observation));
      expect(matches, `prompt ${i}: ${text}`).toHaveLength(1);
      const st = matches[0]!;
      const chosen = buffer.chosen[i]!;
      const label = st.actions[chosen]!.label;
      // The recorded policy is the one that acted: the probability the rollout's sampler gave
      // the chosen label.
      expect(Math.exp(buffer.actionLogProbs[i]!)).toBeCloseTo(rec.policy[st.id]![label]!, 5);
      states.push(st.id);
      labels.push(label);
      given.push(
        credit.level === 'token' ? credit.values[buffer.actionOffsets[i]!]! : credit.values[i]!,
      );
      // The deciding token: one past the longest beginning shared with another label, and the
      // last token where the whole label is shared.
      const cands = buffer.candidates(i);
      const mine = cands[chosen]!;
      expect(Array.from(mine)).toEqual(
        Array.from(
          buffer.actionIds.subarray(buffer.actionOffsets[i]!, buffer.actionOffsets[i + 1]!),
        ),
      );
      const longest = Math.max(
        0,
        ...cands.filter((_, k) => k !== chosen).map((c) => shared(mine, c)),
      );
      const p = Math.min(longest, mine.length - 1);
      positions.push(p);
      atDeciding.push(
        credit.level === 'token' ? credit.values[buffer.actionOffsets[i]! + p]! : credit.values[i]!,
      );
    }
    expect(rec.steps.state).toEqual(states);
    expect(rec.steps.label).toEqual(labels);
    expect(rec.steps.advantage).toEqual(given);
    const exact = policyAdvantages(task, pi).advantage;
    const truth = states.map((s, i) => exact[s]![labels[i]!]!);
    expect(rec.steps.exact).toEqual(truth.map((x) => expect.closeTo(x, 11)));
    const rho = spearman(
      given,
      truth.map((x) => Math.round(x * 1e12) / 1e12),
    );
    expect(extra.creditSteps).toBe(buffer.size);
    const rhoDeciding = spearman(
      atDeciding,
      truth.map((x) => Math.round(x * 1e12) / 1e12),
    );
    if (credit.level === 'token') {
      expect(rec.steps.decidingToken).toEqual(positions);
      expect(rec.steps.decidingAdvantage).toEqual(atDeciding);
    } else {
      expect(rec.steps.decidingToken).toBeUndefined();
      expect(rhoDeciding).toBe(rho);
    }
    recorded(extra.creditAccuracyDeciding, rec.creditAccuracyDeciding, rhoDeciding);
    decidingSeen.push(...positions);
    recorded(extra.creditAccuracy, rec.creditAccuracy, rho);
    return rho;
  });
}

describe('credit accuracy in every metrics row', () => {
  it('POAD on the delayed task: first-token and deciding-token advantages against the exact A^π of the policy that acted', async () => {
    seen = [];
    decidingSeen = [];
    const r = await h.run(h.args('poad', 2, ['--task', 'delayed', '--algo', 'poad']));
    expect(r.code, r.out).toBe(0);
    expect(seen).toHaveLength(2);
    const rhos = check('delayed');
    // Written to metrics.jsonl (NaN is written as null).
    const rows = h.rows('poad');
    expect(rows.map((x) => x.creditSteps)).toEqual([8, 8]);
    // "grab the bread" and "grab the chips" part after their shared first token(s), so some
    // action is decided later than its first token.
    expect(decidingSeen.some((p) => p > 0)).toBe(true);
    expect(rows.every((x) => 'creditAccuracyDeciding' in x)).toBe(true);
    expect(rows.map((x) => x.creditAccuracy ?? Number.NaN)).toEqual(
      rhos.map((x) => (Number.isNaN(x) ? Number.NaN : expect.closeTo(x, 10))),
    );
    // Each iteration's policy is its own: the update moved it.
    const [a, b] = records(h.dir('poad')).map((r) => r.policy.kitchen!['grab the bread']!);
    expect(a).not.toBe(b);
  });

  it('GiGPO and TWOSOME on the loop task (step-level and action-level credit)', async () => {
    for (const algo of ['gigpo', 'twosome']) {
      seen = [];
      const r = await h.run(
        h.args(algo, 1, [
          '--task',
          'loop',
          '--algo',
          algo,
          ...(algo === 'gigpo' ? ['--groups', '1', '--group-size', '2'] : []),
        ]),
      );
      expect(r.code, r.out).toBe(0);
      expect(seen).toHaveLength(1);
      check('loop');
      expect(seen[0]!.report.credit.level).toBe(algo === 'twosome' ? 'action' : 'token');
    }
  });
});
