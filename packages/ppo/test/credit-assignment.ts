import * as tf from '@tensorflow/tfjs-core';
import { type Algorithm, candidateDistribution, type PpoConfig, PpoTrainer } from '../src/index.js';
import { KeyTokenVecEnv, keyTokenTask } from './key-token-env.js';
import { TinyPolicy } from './tiny-policy.js';

/**
 * The synthetic credit-assignment experiment. Every setting below was fixed before any result
 * was seen and is the same for every algorithm.
 */
export const EXPERIMENT = {
  /** Action lengths compared (the key word is always the second word). */
  lengths: [2, 12],
  seeds: [1, 2, 3, 4, 5],
  iterations: 10,
  numEnvs: 8,
  /** Critic-only case study (actor learning rate 0): action length and iterations. */
  caseStudy: { length: 8, iterations: 30 },
  config: {
    numSteps: 1,
    epochs: 2,
    numMinibatches: 2,
    lr: 1e-2,
    criticLr: 1e-2,
    entropyCoef: 1e-4,
  } satisfies Partial<PpoConfig>,
} as const;

/** Result of one run. */
export interface CreditRun {
  algorithm: Algorithm;
  length: number;
  seed: number;
  /** π̃(correct) under the TWOSOME distribution, before training and after each iteration. */
  successProb: number[];
  /** Mean |advantage| per token position in the last rollout (token-level algorithms). */
  meanAbsAdvantage: number[];
}

function successProb(policy: TinyPolicy, task: ReturnType<typeof keyTokenTask>): number {
  const prompt = policy.encodePrompt(task.prompt);
  const cands = policy.encodeContinuations(task.prompt, task.candidates);
  const width = Math.max(...cands.map((c) => c.length));
  const lp = tf.tidy(() =>
    policy
      .scoreTokens({ prompts: cands.map(() => prompt), actions: cands, width })
      .logProbs.dataSync(),
  );
  const sums = cands.map((c, i) => {
    let s = 0;
    for (let k = 0; k < c.length; k++) s += lp[i * width + k]!;
    return s;
  });
  // All candidates have the same word count, so word normalisation is a common factor.
  const norms = task.candidates.map((c) => c.split(' ').length);
  return candidateDistribution(sums, norms).probs[task.correct]!;
}

/**
 * Trains one algorithm on one action length with one seed. `overrides` serve the critic-only
 * case study (actor learning rate 0, as the paper's `train_case_study.py`).
 */
export async function runCreditAssignment(
  algorithm: Algorithm,
  length: number,
  seed: number,
  overrides: { iterations?: number; config?: Partial<PpoConfig> } = {},
): Promise<CreditRun> {
  const task = keyTokenTask(length);
  const policy = new TinyPolicy({ words: task.words, seed });
  const trainer = new PpoTrainer({
    policy,
    env: new KeyTokenVecEnv(task, EXPERIMENT.numEnvs),
    config: { ...EXPERIMENT.config, ...overrides.config, algorithm, seed },
  });
  const probs = [successProb(policy, task)];
  let meanAbsAdvantage: number[] = [];
  for (let it = 0; it < (overrides.iterations ?? EXPERIMENT.iterations); it++) {
    const r = await trainer.iterate();
    await new Promise((resolve) => setImmediate(resolve)); // let the test runner breathe
    probs.push(successProb(policy, task));
    if (r.advantages.level === 'token') {
      const sum = new Float64Array(length);
      for (let i = 0; i < r.buffer.size; i++) {
        for (let k = 0; k < length; k++) {
          sum[k]! += Math.abs(r.advantages.advantages[r.buffer.actionOffsets[i]! + k]!);
        }
      }
      meanAbsAdvantage = Array.from(sum, (x) => x / r.buffer.size);
    }
  }
  trainer.dispose();
  policy.dispose();
  return { algorithm, length, seed, successProb: probs, meanAbsAdvantage };
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const fmt = (x: number) => x.toFixed(3);

/** All runs of the experiment: learning comparison plus the critic-only case study. */
export interface CreditExperiment {
  runs: CreditRun[];
  caseStudy: CreditRun[];
}

/** Runs the experiment (the case study only for `caseStudyAlgorithms`). */
export async function runExperiment(
  caseStudyAlgorithms: readonly Algorithm[] = ['poad', 'ntpo'],
): Promise<CreditExperiment> {
  const runs: CreditRun[] = [];
  const caseStudy: CreditRun[] = [];
  for (const length of EXPERIMENT.lengths) {
    for (const a of ['poad', 'ntpo', 'twosome'] as const) {
      for (const seed of EXPERIMENT.seeds) runs.push(await runCreditAssignment(a, length, seed));
    }
  }
  for (const a of caseStudyAlgorithms) {
    for (const seed of EXPERIMENT.seeds) {
      caseStudy.push(
        await runCreditAssignment(a, EXPERIMENT.caseStudy.length, seed, {
          iterations: EXPERIMENT.caseStudy.iterations,
          config: { lr: 0 },
        }),
      );
    }
  }
  return { runs, caseStudy };
}

/** Final (or initial) π̃(correct) of every seed of one algorithm and length. */
export function successOf(
  e: CreditExperiment,
  a: Algorithm,
  length: number,
  which: 'initial' | 'final',
): number[] {
  return e.runs
    .filter((r) => r.algorithm === a && r.length === length)
    .map((r) => (which === 'initial' ? r.successProb[0]! : r.successProb.at(-1)!));
}

/** Markdown tables of the results (as recorded in the README). */
export function formatExperiment(e: CreditExperiment): string {
  const lines = [
    '| algorithm | action length | π̃(correct) before | after, seeds 1–5 | mean after |',
    '|---|---|---|---|---|',
  ];
  for (const length of EXPERIMENT.lengths) {
    for (const a of ['poad', 'ntpo', 'twosome'] as const) {
      const fin = successOf(e, a, length, 'final');
      lines.push(
        `| ${a} | ${length} | ${fmt(mean(successOf(e, a, length, 'initial')))} | ${fin.map(fmt).join(' ')} | ${fmt(mean(fin))} |`,
      );
    }
  }
  const algos = [...new Set(e.caseStudy.map((r) => r.algorithm))];
  if (algos.length > 0) {
    lines.push(
      '',
      `| critic-only, L = ${EXPERIMENT.caseStudy.length} | mean abs advantage at token positions 0..${EXPERIMENT.caseStudy.length - 1} (key = 1), mean over seeds |`,
      '|---|---|',
    );
    for (const a of algos) {
      const rs = e.caseStudy.filter((r) => r.algorithm === a);
      const perPos = rs[0]!.meanAbsAdvantage.map((_, k) =>
        mean(rs.map((r) => r.meanAbsAdvantage[k]!)),
      );
      lines.push(`| ${a} | ${perPos.map(fmt).join(' ')} |`);
    }
  }
  return lines.join('\n');
}
