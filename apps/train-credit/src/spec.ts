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
} from '@poad/envs-credit';
import { writeFileAtomicSync } from '@poad/run-kit';
import { type Agent, type AppSpec, actionProbabilities } from '@poad/trainer';

/** The policy that acted in an iteration: π(·|s) of every running state, and each prompt's state. */
interface ActingPolicy {
  readonly mdp: CreditMdp;
  readonly probs: ReadonlyMap<string, Float64Array>;
  readonly stateOfPrompt: ReadonlyMap<string, string>;
}

const acting = new WeakMap<Agent, ActingPolicy>();

const promptKey = (ids: ArrayLike<number>) => Array.prototype.join.call(ids, ',');

/** One line of `credit.jsonl`: an iteration's acting policy, its steps and their credit. */
export interface CreditRecord {
  iteration: number;
  /** Spearman's ρ (null where undefined, as in metrics.jsonl). */
  creditAccuracy: number | null;
  /** The same with a token-level method's advantage at each action's deciding token. */
  creditAccuracyDeciding: number | null;
  /** π(label | state) of the policy that acted, for every running state. */
  policy: Record<string, Record<string, number>>;
  /**
   * Every step of the rollout, in the buffer's order: state, label, advantage given (a
   * token-level method's at the action's first token), exact A^π; for token-level methods also
   * the advantage at the action's deciding token (`decidingToken` of `@poad/envs-credit`) and
   * that token's position in the action.
   */
  steps: {
    state: string[];
    label: string[];
    advantage: number[];
    exact: number[];
    decidingAdvantage?: number[];
    decidingToken?: number[];
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
  sampler: Parameters<typeof actionProbabilities>[2],
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
  for (const s of running)
    stateOfPrompt.set(promptKey(await agent.policy.encodePrompt(s.observation)), s.id);
  return { mdp, probs: new Map(running.map((s, i) => [s.id, probs[i]!])), stateOfPrompt };
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
    acting.set(agent, await actingPolicy(task as CreditTask, agent, sampler));
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
    const policy: CreditRecord['policy'] = {};
    for (const st of pi.mdp.states) {
      const p = pi.probs.get(st.id);
      if (p) policy[st.id] = Object.fromEntries(st.actions.map((a, k) => [a.label, p[k]!]));
    }
    recordCredit(runDir, {
      iteration: report.iteration,
      creditAccuracy: Number.isNaN(r.spearman) ? null : r.spearman,
      creditAccuracyDeciding: Number.isNaN(d.spearman) ? null : d.spearman,
      policy,
      steps: {
        state: steps.map((x) => x.state),
        label: steps.map((x) => x.label),
        advantage: steps.map((x) => x.advantage),
        exact: Array.from(r.exact),
        ...(tokenLevel
          ? { decidingAdvantage: deciding.map((x) => x.advantage), decidingToken: positions }
          : {}),
      },
    });
    return {
      creditAccuracy: r.spearman,
      creditAccuracyDeciding: d.spearman,
      creditSteps: r.steps,
    };
  },
  examples: [
    'npm run train:credit',
    'npm run train:credit -- --task key-token --algo grpo',
    'npm run train:credit -- --task loop-long --algo gigpo --seed 2',
  ],
};
