import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TextStep } from '@poad/envs-core';
import {
  CREDIT_PRESETS,
  CREDIT_TASKS,
  type CreditMdp,
  type CreditTask,
  createCreditEnv,
  creditAccuracy,
  creditMdp,
  decidingToken,
  optimalReturn,
  optimalTokenPrefixValues,
  softTokenPrefixValues,
  type TokenPrefixValues,
  tokenPrefixValues,
} from '@poad/envs-credit';
import { writeFileAtomicSync } from '@poad/run-kit';
import {
  type Agent,
  type AppSpec,
  actionProbabilities,
  EtpoLmPolicy,
  type ExactValueKind,
  type ExactValues,
  type RunIterationReport,
} from '@poad/trainer';
import { pooledCriticError, prefixValuePairs } from './critic-error.js';

/**
 * The policy that acted in an iteration: π(·|s) of every running state, each prompt's state,
 * each running state's prompt and label ids (as the policy scores them) and the run's discount.
 */
interface ActingPolicy {
  readonly mdp: CreditMdp;
  readonly probs: ReadonlyMap<string, Float64Array>;
  readonly stateOfPrompt: ReadonlyMap<string, string>;
  readonly prompts: ReadonlyMap<string, Int32Array>;
  readonly labelIds: ReadonlyMap<string, Int32Array[]>;
  /** γ of the run's config (the task's own where the config has none). */
  readonly gamma: number;
  /** The sampler's token space (`vocabulary` where the config has none). */
  readonly tokenSpace: 'vocabulary' | 'labels';
  /** V^π of this policy at every token prefix, once computed. */
  exact?: TokenPrefixValues;
}

const acting = new WeakMap<Agent, ActingPolicy>();

/** An oracle critic's values (`--critic oracle | oracle-star`): its kind and the current table. */
interface Oracle {
  readonly kind: ExactValueKind;
  table: TokenPrefixValues | null;
}

const oracles = new WeakMap<Agent, Oracle>();

const promptKey = (ids: ArrayLike<number>) => Array.prototype.join.call(ids, ',');

/** V^π of the policy that acted at every token prefix of every label (computed once per iteration). */
function policyValues(pi: ActingPolicy): TokenPrefixValues {
  pi.exact ??= tokenPrefixValues(
    pi.mdp,
    (s) => pi.probs.get(s)!,
    (s) => pi.labelIds.get(s)!,
    { gamma: pi.gamma },
  );
  return pi.exact;
}

/**
 * The exact values that answer an oracle critic's value calls: the current table (`current()`,
 * built before each rollout) looked up by the prompt's state and the label whose ids the action
 * is.
 */
function exactValuesOf(
  current: () => { table: TokenPrefixValues; stateOfPrompt: ReadonlyMap<string, string> },
): ExactValues {
  const stateOf = (prompt: Int32Array) => {
    const { table, stateOfPrompt } = current();
    const state = stateOfPrompt.get(promptKey(prompt));
    if (state === undefined)
      throw new Error(
        `oracle critic: the prompt [${promptKey(prompt)}] is no running state's observation of ${table.id}`,
      );
    return { table, state };
  };
  return {
    tokenValues(prompt, action) {
      const { table, state } = stateOf(prompt);
      const labels = table.tokens[state]!;
      const label = Object.keys(labels).find(
        (l) => labels[l]!.length === action.length && labels[l]!.every((w, k) => w === action[k]),
      );
      if (label === undefined)
        throw new Error(
          `oracle critic: the action [${promptKey(action)}] is no label of state ${JSON.stringify(state)} of ${table.id}`,
        );
      return table.prefixes[state]![label]!.subarray(0, action.length);
    },
    promptValue(prompt) {
      const { table, state } = stateOf(prompt);
      return table.v[state]!;
    },
  };
}

/**
 * What the values the rollout recorded estimate, read from the policy that recorded them: none
 * for a policy without a critic (the group-relative algorithms); ETPO's soft values under its
 * reference; otherwise V^π of the policy that acts (a value head or an oracle), at every token
 * or, for action-level credit (TWOSOME), at each action's first token only.
 */
function recordedValues(
  agent: Agent,
  report: RunIterationReport,
): { kind: 'policy' | 'soft'; level: 'token' | 'action' } | null {
  if (agent.policy.criticVariables.length === 0) return null;
  if (agent.policy instanceof EtpoLmPolicy) return { kind: 'soft', level: 'token' };
  return { kind: 'policy', level: report.credit.level };
}

/**
 * The exact soft values of the policy that acted, under ETPO's β and reference (the base model
 * renormalised over each state's label tree, or uniform over it), at every token prefix.
 */
async function softValues(pi: ActingPolicy, policy: EtpoLmPolicy): Promise<TokenPrefixValues> {
  const reference = new Map<string, Float32Array[]>();
  if (policy.reference === 'base')
    for (const [state, ids] of pi.labelIds)
      reference.set(state, await policy.labelReferenceLogProbs(pi.prompts.get(state)!, ids));
  return softTokenPrefixValues(
    pi.mdp,
    (s) => pi.probs.get(s)!,
    (s) => pi.labelIds.get(s)!,
    {
      beta: policy.beta,
      gamma: pi.gamma,
      ...(policy.reference === 'base' ? { reference: (s: string) => reference.get(s)! } : {}),
    },
  );
}

/**
 * The grid a learner's advantages are rounded to for `creditAccuracyDecidingTied`: advantages
 * closer than this rank as ties.
 */
export const CREDIT_TIE_GRID = 1e-6;

/** One line of `credit.jsonl`: an iteration's acting policy, its steps and their credit. */
export interface CreditRecord {
  iteration: number;
  /** Spearman's ρ (null where undefined, as in metrics.jsonl). */
  creditAccuracy: number | null;
  /** The same with a token-level method's advantage at each action's deciding token. */
  creditAccuracyDeciding: number | null;
  /** That one with advantages within {@link CREDIT_TIE_GRID} of each other tied. */
  creditAccuracyDecidingTied?: number | null;
  /** π(label | state) of the policy that acted, for every running state. */
  policy: Record<string, Record<string, number>>;
  /**
   * Every step of the rollout, in the buffer's order: state, label, advantage given (a
   * token-level method's at the action's first token), exact A^π; for token-level methods also
   * the advantage at the action's deciding token (`decidingToken` of `@poad/envs-credit`) and
   * that token's position in the action. For algorithms with a critic, `value` holds the values
   * its rollout recorded (those its targets and advantages used, before the update) at each
   * token prefix of the chosen action (V(s) alone for TWOSOME) and `exactValue` the exact values
   * there: V^π of the policy that acted, or for ETPO its soft values (see `valueKind`).
   */
  steps: {
    state: string[];
    label: string[];
    advantage: number[];
    exact: number[];
    decidingAdvantage?: number[];
    decidingToken?: number[];
    value?: number[][];
    exactValue?: number[][];
  };
  /**
   * What `steps.exactValue` holds: `policy`, V^π(s, w_<k); `soft`, the soft values of the
   * policy that acted at ETPO's β and reference. Absent without a critic.
   */
  valueKind?: 'policy' | 'soft';
  /**
   * The critic's error against those exact values, pooled over every position of
   * `steps.value` (null where undefined); absent without a critic.
   */
  criticError?: {
    rmse: number | null;
    bias: number | null;
    spearman: number | null;
    count: number;
  };
}

/**
 * Writes an iteration's {@link CreditRecord} into `credit.jsonl`, after the lines of the
 * iterations before it (a resumed run rewrites from where it continues; a line cut short by a
 * hard kill is dropped), atomically.
 */
function recordCredit(runDir: string, record: CreditRecord): void {
  const path = join(runDir, 'credit.jsonl');
  const kept: string[] = [];
  if (existsSync(path))
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      try {
        if ((JSON.parse(line) as CreditRecord).iteration < record.iteration) kept.push(line);
      } catch {
        // An empty or torn line.
      }
    }
  kept.push(JSON.stringify(record));
  writeFileAtomicSync(path, `${kept.join('\n')}\n`);
}

/**
 * π(·|s) of every running state of `task` under the agent's policy, as the run's sampler would
 * sample (one scoring pass over all states), and the prompt ids of each state's observation.
 */
export async function actingPolicy(
  task: CreditTask,
  agent: Agent,
  sampler: Parameters<typeof actionProbabilities>[2] & { readonly gamma?: number },
): Promise<ActingPolicy> {
  const mdp = creditMdp(task);
  const running = mdp.states.filter((s) => !s.terminal);
  const steps: TextStep[] = running.map((s) => ({
    observation: s.observation,
    actions: s.actions.map((a) => a.label),
    reward: 0,
    terminated: false,
    truncated: false,
    info: { state: s.id },
  }));
  const probs = await actionProbabilities(agent, steps, sampler);
  const stateOfPrompt = new Map<string, string>();
  const prompts = new Map<string, Int32Array>();
  const labelIds = new Map<string, Int32Array[]>();
  for (const s of running) {
    const prompt = await agent.policy.encodePrompt(s.observation);
    stateOfPrompt.set(promptKey(prompt), s.id);
    prompts.set(s.id, prompt);
    labelIds.set(
      s.id,
      await agent.policy.encodeContinuations(
        s.observation,
        s.actions.map((a) => a.label),
      ),
    );
  }
  return {
    mdp,
    probs: new Map(running.map((s, i) => [s.id, probs[i]!])),
    stateOfPrompt,
    prompts,
    labelIds,
    gamma: typeof sampler.gamma === 'number' ? sampler.gamma : mdp.gamma,
    tokenSpace: sampler.tokenSpace ?? 'vocabulary',
  };
}

/**
 * `npm run train:credit`: the credit tasks of `@poad/envs-credit`, whose exact A^π is known.
 * Every iteration records its credit accuracy: Spearman's ρ between the advantage the algorithm
 * gave each action of the rollout (the first token's, for token-level methods) and that action's
 * exact A^π under the policy that acted (scored on every state just before the rollout), and
 * `creditAccuracyDeciding`, the same with a token-level method's advantage at the token that
 * decides the label (where it parts from every other valid label; equal to the first for
 * action-level methods). The run directory's `credit.jsonl` keeps, per iteration, that policy and
 * every step's advantages and exact A^π.
 *
 * For algorithms with a critic every iteration also records the critic's error (`criticRmse`,
 * `criticBias` = mean(V − V^π), `criticSpearman`, over `criticPrefixes` positions): the values the
 * rollout recorded, which its targets and advantages used, against the exact values of the
 * policy that acted at every token prefix of every chosen action (V(s) alone for TWOSOME; ETPO's
 * soft values against the exact soft values at its β and reference, on the label tree); the
 * per-prefix values are in `credit.jsonl`. `exactCritic` answers `--critic oracle` (V^π of the
 * policy that acts, rebuilt before every rollout) and `--critic oracle-star` (V*). The discount of
 * the exact values is the run's `gamma`.
 */
export const creditApp: AppSpec = {
  command: 'train:credit',
  summary:
    'Train a language agent on the credit tasks, whose exact credit is known: every iteration records the credit accuracy (Spearman of the advantages given against the exact A^π).',
  tasks: CREDIT_TASKS,
  defaultTask: 'delayed',
  envId: (task) => `credit/${task}`,
  makeEnv: (task) => createCreditEnv(task),
  presets: CREDIT_PRESETS,
  optimalReturn: (task) => optimalReturn(task),
  evalTasks: (task) => [task],
  async beforeIteration({ task, agent, sampler }) {
    const pi = await actingPolicy(task as CreditTask, agent, sampler);
    acting.set(agent, pi);
    const oracle = oracles.get(agent);
    if (oracle)
      oracle.table =
        oracle.kind === 'policy'
          ? policyValues(pi)
          : oracle.table?.gamma === pi.gamma
            ? oracle.table
            : optimalTokenPrefixValues(pi.mdp, (s) => pi.labelIds.get(s)!, { gamma: pi.gamma });
  },
  exactCritic({ agent, values }) {
    const oracle: Oracle = { kind: values, table: null };
    oracles.set(agent, oracle);
    return exactValuesOf(() => {
      const pi = acting.get(agent);
      if (!pi || !oracle.table)
        throw new Error(
          'oracle critic: no exact values yet; they are computed before each rollout (beforeIteration)',
        );
      return { table: oracle.table, stateOfPrompt: pi.stateOfPrompt };
    });
  },
  async onIteration(report, runDir, agent) {
    const pi = acting.get(agent);
    if (!pi) return;
    const { buffer, credit } = report;
    const tokenLevel = credit.level === 'token';
    const steps = [];
    const deciding = [];
    const positions: number[] = [];
    for (let i = 0; i < buffer.size; i++) {
      const state = pi.stateOfPrompt.get(promptKey(buffer.prompt(i)));
      if (state === undefined)
        throw new Error(
          `credit accuracy: the prompt of step ${i} of iteration ${report.iteration} is no state's observation of ${pi.mdp.id}`,
        );
      const actions = pi.mdp.states.find((s) => s.id === state)!.actions;
      const label = actions[buffer.chosen[i]!]!.label;
      const first = buffer.actionOffsets[i]!;
      const advantage = tokenLevel ? credit.values[first]! : credit.values[i]!;
      steps.push({ state, label, advantage });
      if (!tokenLevel) continue;
      // The token whose choice decides the label: where it parts from every other valid label.
      const at = decidingToken(buffer.candidates(i), buffer.chosen[i]!);
      if (at >= buffer.actionLength(i))
        throw new Error(
          `credit accuracy: step ${i} of iteration ${report.iteration} has ${buffer.actionLength(i)} action tokens, but its label's candidate ids are longer`,
        );
      positions.push(at);
      deciding.push({ state, label, advantage: credit.values[first + at]! });
    }
    const pick = (s: string) => pi.probs.get(s)!;
    const r = creditAccuracy(pi.mdp, pick, steps);
    const d = tokenLevel ? creditAccuracy(pi.mdp, pick, deciding) : r;
    // The same with advantages within 1e-6 of each other tied: float32 leaves those its own math
    // makes equal (an exact critic's, where A^π is 0) apart by about 1e-8.
    const tied = creditAccuracy(pi.mdp, pick, tokenLevel ? deciding : steps, {
      tieGrid: CREDIT_TIE_GRID,
    });
    // The critic's error: its recorded values against the exact ones of the policy that acted
    // (ETPO's soft values only on the label tree, where they are defined).
    const values = recordedValues(agent, report);
    const measured =
      values && !(values.kind === 'soft' && pi.tokenSpace !== 'labels') ? values : null;
    const table =
      measured === null
        ? null
        : measured.kind === 'soft'
          ? await softValues(pi, agent.policy as EtpoLmPolicy)
          : policyValues(pi);
    const pairs = table && measured ? prefixValuePairs(buffer, steps, table, measured.level) : null;
    const error = pairs ? pooledCriticError(pairs) : null;
    const orNull = (x: number) => (Number.isNaN(x) ? null : x);
    const policy: CreditRecord['policy'] = {};
    for (const st of pi.mdp.states) {
      const p = pi.probs.get(st.id);
      if (p) policy[st.id] = Object.fromEntries(st.actions.map((a, k) => [a.label, p[k]!]));
    }
    recordCredit(runDir, {
      iteration: report.iteration,
      creditAccuracy: Number.isNaN(r.spearman) ? null : r.spearman,
      creditAccuracyDeciding: Number.isNaN(d.spearman) ? null : d.spearman,
      creditAccuracyDecidingTied: orNull(tied.spearman),
      policy,
      steps: {
        state: steps.map((x) => x.state),
        label: steps.map((x) => x.label),
        advantage: steps.map((x) => x.advantage),
        exact: Array.from(r.exact),
        ...(tokenLevel
          ? { decidingAdvantage: deciding.map((x) => x.advantage), decidingToken: positions }
          : {}),
        ...(pairs ? { value: pairs.value, exactValue: pairs.exact } : {}),
      },
      ...(measured && error
        ? {
            valueKind: measured.kind,
            criticError: {
              rmse: orNull(error.rmse),
              bias: orNull(error.bias),
              spearman: orNull(error.spearman),
              count: error.count,
            },
          }
        : {}),
    });
    return {
      creditAccuracy: r.spearman,
      creditAccuracyDeciding: d.spearman,
      creditAccuracyDecidingTied: tied.spearman,
      creditSteps: r.steps,
      ...(error
        ? {
            criticRmse: error.rmse,
            criticBias: error.bias,
            criticSpearman: error.spearman,
            criticPrefixes: error.count,
          }
        : {}),
    };
  },
  examples: [
    'npm run train:credit',
    'npm run train:credit -- --task key-token --algo grpo',
    'npm run train:credit -- --task loop-long --algo gigpo --seed 2',
  ],
};
