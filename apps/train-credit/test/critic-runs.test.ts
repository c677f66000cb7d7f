// The critic of a credit-task run against the exact values, recomputed by a second route: V^π
// at every token prefix from @poad/bellman's `prefixValues` on the policy that acted, ETPO's
// soft values from `softTokenPrefixValues` with the reference scored before the rollout, the
// oracle critic's values and BAD advantages from the exact tables, and TWOSOME on both samplers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { criticError, poad, prefixValues } from '@poad/bellman';
import { defaultModelPath as DEFAULT_MODEL } from '@poad/default-model';
import { TINY_RUN, trainingHarness } from '@poad/dev-kit';
import {
  type CreditTask,
  creditMdp,
  optimalTokenPrefixValues,
  policyAdvantages,
  softTokenPrefixValues,
} from '@poad/envs-credit';
import { restrictedLogProbs } from '@poad/ppo';
import {
  type Agent,
  type AppSpec,
  type EtpoLmPolicy,
  type RunIterationReport,
  runCli,
} from '@poad/trainer';
import { describe, expect, it } from 'vitest';
import { type CreditRecord, creditApp } from '../src/spec.js';

interface Seen {
  report: RunIterationReport;
  extra: Record<string, number>;
  runDir: string;
}
let seen: Seen[] = [];
/** Called before each rollout with the agent (e.g. to score the reference at the start). */
let before: ((agent: Agent) => Promise<void>) | null = null;

/** The credit app, watched: each iteration's report and the agent before each rollout. */
const watched: AppSpec = {
  ...creditApp,
  async beforeIteration(context) {
    await creditApp.beforeIteration!(context);
    await before?.(context.agent);
  },
  async onIteration(report, runDir, agent, progress) {
    const extra = (await creditApp.onIteration!(report, runDir, agent, progress)) as Record<
      string,
      number
    >;
    seen.push({ report, extra, runDir });
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

/** Runs `name` for `iterations` with `extra`, expecting success; returns the iterations seen. */
async function train(name: string, iterations: number, extra: string[]): Promise<Seen[]> {
  seen = [];
  const r = await h.run(h.args(name, iterations, extra));
  expect(r.code, r.out).toBe(0);
  expect(seen).toHaveLength(iterations);
  return seen;
}

/** Each step's state and the prefix count the critic is measured at. */
function stepsOf(task: CreditTask, rec: CreditRecord) {
  const mdp = creditMdp(task);
  return rec.steps.state.map((state, i) => {
    const st = mdp.states.find((s) => s.id === state)!;
    return { st, chosen: st.actions.findIndex((a) => a.label === rec.steps.label[i]) };
  });
}

/** The recorded values at each step's prefixes: `n` of them from the step's first token. */
function recordedAt(report: RunIterationReport, i: number, n: number): number[] {
  const o = report.buffer.actionOffsets[i]!;
  return Array.from(report.buffer.values.subarray(o, o + n));
}

/** The figures as the metrics row and credit.jsonl hold them, against a recomputation. */
function figures(s: Seen, rec: CreditRecord, value: number[], exact: number[]): void {
  const e = criticError(value, exact);
  expect(s.extra.criticPrefixes).toBe(e.count);
  expect(s.extra.criticRmse).toBeCloseTo(e.rmse, 12);
  expect(s.extra.criticBias).toBeCloseTo(e.bias, 12);
  if (Number.isNaN(e.spearman)) expect(s.extra.criticSpearman).toBeNaN();
  else expect(s.extra.criticSpearman).toBeCloseTo(e.spearman, 12);
  expect(rec.criticError!.rmse).toBeCloseTo(e.rmse, 12);
  expect(rec.criticError!.count).toBe(e.count);
}

/**
 * POAD on the delayed task for 2 iterations, trained once for the tests that read it: the POAD
 * test checks both iterations, and the TWOSOME test compares its first policy (the initial
 * weights') with TWOSOME's on the label tree.
 */
let poadDelayed: Promise<Seen[]> | undefined;
const poadOnDelayed = () =>
  (poadDelayed ??= train('poad', 2, ['--task', 'delayed', '--algo', 'poad']));

describe("the critic's error in every metrics row", () => {
  it('POAD: V before every token of every chosen action against V^π of the policy that acted', async () => {
    const runs = await poadOnDelayed();
    const gamma = h.json<{ gamma: number }>('poad', 'config.json').gamma;
    for (const s of runs) {
      const rec = records(s.runDir).find((r) => r.iteration === s.report.iteration)!;
      expect(rec.valueKind).toBe('policy');
      const pi = (st: string, labels: readonly string[]) => labels.map((l) => rec.policy[st]![l]!);
      const q = policyAdvantages('delayed', pi, { gamma }).q;
      const value: number[] = [];
      const exact: number[] = [];
      stepsOf('delayed', rec).forEach(({ st, chosen }, i) => {
        const n = s.report.buffer.actionLength(i);
        const labels = st.actions.map((a) => a.label);
        const want = prefixValues(
          s.report.buffer.candidates(i),
          pi(st.id, labels),
          labels.map((l) => q[st.id]![l]!),
          chosen,
        );
        expect(want).toHaveLength(n + 1);
        expect(rec.steps.value![i]).toEqual(recordedAt(s.report, i, n));
        expect(rec.steps.exactValue![i]).toEqual(
          Array.from(want.subarray(0, n)).map((x) => expect.closeTo(x, 10)),
        );
        value.push(...recordedAt(s.report, i, n));
        exact.push(...want.subarray(0, n));
      });
      figures(s, rec, value, exact);
      expect(s.extra.criticPrefixes).toBe(s.report.buffer.tokenCount);
    }
  });

  it('TWOSOME: its critic V(s) alone; on the label tree it acts as POAD does at the same weights', async () => {
    const firstPolicy = async (name: string, extra: string[]) => {
      const [s] = await train(name, 1, ['--task', 'delayed', ...extra]);
      const rec = records(s!.runDir)[0]!;
      return { s: s!, rec };
    };
    const words = await firstPolicy('twosome', ['--algo', 'twosome']);
    const tree = await firstPolicy('twosome-labels', [
      '--algo',
      'twosome',
      '--token-space',
      'labels',
    ]);
    // POAD's first iteration acts with the same initial weights (a run of its own before).
    const [poadFirst] = await poadOnDelayed();
    const poadTree = { rec: records(poadFirst!.runDir)[0]! };
    for (const { s, rec } of [words, tree]) {
      expect(rec.steps.value!.every((v) => v.length === 1)).toBe(true);
      expect(rec.steps.value!.map((v) => v[0])).toEqual(
        Array.from({ length: s.report.buffer.size }, (_, i) => recordedAt(s.report, i, 1)[0]),
      );
      expect(s.extra.criticPrefixes).toBe(s.report.buffer.size);
    }
    // The policy that acted first (the same initial weights): the label tree's product for
    // TWOSOME on labels and POAD alike, TWOSOME's word-normalised softmax otherwise.
    expect(tree.rec.policy).toEqual(poadTree.rec.policy);
    const bread = (rec: CreditRecord) => rec.policy.kitchen!['grab the bread']!;
    expect(bread(tree.rec)).toBeCloseTo(0.048, 3);
    expect(bread(words.rec)).toBeCloseTo(0.269, 3);
  });

  it('ETPO: its soft values against the exact soft values of the policy that acted (uniform and base reference)', async () => {
    for (const reference of ['uniform', 'base'] as const) {
      // Every state's label ids and the reference over its label tree, scored before the first
      // rollout: the actor's LoRA adapter starts at zero, so the policy is then the base model.
      const labelIds = new Map<string, Int32Array[]>();
      const scored = new Map<string, Float64Array[]>();
      before = async (agent) => {
        if (scored.size > 0) return;
        for (const st of creditMdp('delayed').states.filter((x) => !x.terminal)) {
          const prompt = await agent.policy.encodePrompt(st.observation);
          const ids = await agent.policy.encodeContinuations(
            st.observation,
            st.actions.map((a) => a.label),
          );
          const [lp] = await (agent.policy as EtpoLmPolicy).scoreCandidates([prompt], [ids]);
          labelIds.set(st.id, ids);
          scored.set(st.id, restrictedLogProbs(ids, lp!));
        }
      };
      const [s] = await train(`etpo-${reference}`, 1, [
        '--task',
        'delayed',
        '--algo',
        'etpo',
        '--reference',
        reference,
      ]).finally(() => {
        before = null;
      });
      const config = h.json<{ beta: number; gamma: number }>(`etpo-${reference}`, 'config.json');
      const rec = records(s!.runDir)[0]!;
      expect(rec.valueKind).toBe('soft');
      stepsOf('delayed', rec).forEach(({ st }, i) => {
        expect(s!.report.buffer.candidates(i)).toEqual(labelIds.get(st.id));
      });
      const table = softTokenPrefixValues(
        'delayed',
        (st, labels) => labels.map((l) => rec.policy[st]![l]!),
        (st) => labelIds.get(st)!,
        {
          beta: config.beta,
          gamma: config.gamma,
          ...(reference === 'base' ? { reference: (st: string) => scored.get(st)! } : {}),
        },
      );
      const value: number[] = [];
      const exact: number[] = [];
      stepsOf('delayed', rec).forEach(({ st }, i) => {
        const n = s!.report.buffer.actionLength(i);
        const want = Array.from(table.prefixes[st.id]![rec.steps.label[i]!]!.subarray(0, n));
        expect(rec.steps.exactValue![i]).toEqual(want.map((x) => expect.closeTo(x, 5)));
        value.push(...recordedAt(s!.report, i, n));
        exact.push(...want);
      });
      const e = criticError(value, exact);
      expect(s!.extra.criticRmse).toBeCloseTo(e.rmse, 5);
      expect(s!.extra.criticBias).toBeCloseTo(e.bias, 5);
    }
  });

  it('GRPO has no critic: no figures', async () => {
    const [s] = await train('grpo', 1, [
      '--task',
      'delayed',
      '--algo',
      'grpo',
      '--groups',
      '1',
      '--group-size',
      '2',
    ]);
    expect(s!.extra.criticRmse).toBeUndefined();
    expect(records(s!.runDir)[0]!.steps.value).toBeUndefined();
  });
});

describe('the oracle critic (--critic oracle | oracle-star)', () => {
  it('POAD reads V^π of the acting policy at every prefix, and its advantages are BAD on those values', async () => {
    const runs = await train('oracle', 2, [
      '--task',
      'key-token',
      '--algo',
      'poad',
      '--critic',
      'oracle',
    ]);
    const config = h.json<{ gamma: number; gaeLambda: number; critic: string }>(
      'oracle',
      'config.json',
    );
    expect(config.critic).toBe('oracle');
    const rows = h.rows('oracle');
    for (const [j, s] of runs.entries()) {
      const rec = records(s.runDir).find((r) => r.iteration === s.report.iteration)!;
      const { buffer, credit } = s.report;
      const pi = (st: string, labels: readonly string[]) => labels.map((l) => rec.policy[st]![l]!);
      const q = policyAdvantages('key-token', pi, { gamma: config.gamma }).q;
      stepsOf('key-token', rec).forEach(({ st, chosen }, i) => {
        const n = buffer.actionLength(i);
        const labels = st.actions.map((a) => a.label);
        const exact = prefixValues(
          buffer.candidates(i),
          pi(st.id, labels),
          labels.map((l) => q[st.id]![l]!),
          chosen,
        );
        // The values the rollout recorded are the exact ones (in float32).
        expect(recordedAt(s.report, i, n)).toEqual(
          Array.from(exact.subarray(0, n)).map((x) => expect.closeTo(x, 6)),
        );
        // Every key-token episode is one step: BAD on that step alone, from the exact values.
        expect(buffer.terminated[i]).toBe(1);
        const bad = poad(
          {
            rewards: [buffer.rewards[i]!],
            dones: [true],
            tokenCounts: [n],
            values: Array.from(exact.subarray(0, n)),
            bootstrapValue: 0,
          },
          { gamma: config.gamma, lambda: config.gaeLambda },
        );
        const o = buffer.actionOffsets[i]!;
        expect(Array.from(credit.values as Float64Array).slice(o, o + n)).toEqual(
          Array.from(bad.advantages).map((x) => expect.closeTo(x, 6)),
        );
      });
      // The critic's error is the float32 rounding of the exact values; its step moves nothing.
      expect(s.extra.criticRmse).toBeLessThan(1e-6);
      expect(rows[j]!.criticGradNorm).toBe(0);
      expect(Number.isFinite(rows[j]!.valueLoss)).toBe(true);
    }
  });

  it('oracle-star reads V* at every prefix', async () => {
    const [s] = await train('star', 1, [
      '--task',
      'delayed',
      '--algo',
      'poad',
      '--critic',
      'oracle-star',
    ]);
    const rec = records(s!.runDir)[0]!;
    const gamma = h.json<{ gamma: number }>('star', 'config.json').gamma;
    const labelIds = new Map<string, Int32Array[]>();
    stepsOf('delayed', rec).forEach(({ st }, i) => {
      labelIds.set(st.id, s!.report.buffer.candidates(i));
    });
    const star = optimalTokenPrefixValues(
      'delayed',
      (st, labels) => labelIds.get(st) ?? labels.map((_, k) => Int32Array.of(k + 1)),
      { gamma },
    );
    stepsOf('delayed', rec).forEach(({ st }, i) => {
      const n = s!.report.buffer.actionLength(i);
      const want = star.prefixes[st.id]![rec.steps.label[i]!]!.subarray(0, n);
      expect(recordedAt(s!.report, i, n)).toEqual(
        Array.from(want).map((x) => expect.closeTo(x, 6)),
      );
    });
    // Measured against V^π of the policy that acted, V* is too high.
    expect(s!.extra.criticBias).toBeGreaterThan(0);
  });

  it('a resumed oracle run repeats the uninterrupted one', async () => {
    const task = ['--task', 'delayed', '--algo', 'poad', '--critic', 'oracle'];
    await train('whole', 2, task);
    await train('cut', 1, task);
    seen = [];
    const r = await h.run(['--resume', h.dir('cut'), '--max-iterations', '2', '--quiet']);
    expect(r.code, r.out).toBe(0);
    expect(h.rows('cut')).toEqual(h.rows('whole'));
  });

  it('reaches high credit accuracy at the deciding token online (loop)', async () => {
    const runs = await train('online', 2, [
      '--task',
      'loop',
      '--algo',
      'poad',
      '--critic',
      'oracle',
      '--envs',
      '4',
      '--num-steps',
      '8',
    ]);
    const accuracy = runs.map((s) => s.extra.creditAccuracyDeciding!).filter(Number.isFinite);
    expect(accuracy.length).toBeGreaterThan(0);
    for (const a of accuracy) expect(a).toBeGreaterThan(0.9);
  });

  it('is refused where its values are not the critic targets, and for algorithms without a critic', async () => {
    const ntpo = await h.run(
      h.args('ntpo', 1, ['--task', 'delayed', '--algo', 'ntpo', '--critic', 'oracle']),
    );
    expect(ntpo.code).toBe(2);
    expect(ntpo.out).toMatch(
      /critic.*'oracle' gives the exact values of the BAD backup.*poad or twosome/,
    );
    const grpo = await h.run(
      h.args('grpo-oracle', 1, ['--task', 'delayed', '--algo', 'grpo', '--critic', 'oracle']),
    );
    expect(grpo.code).toBe(2);
    expect(grpo.out).toMatch(/--critic: not an option of --algo grpo/);
  });
});
