import { findLabelProblem } from '@poad/envs-core';
import { CreditArgumentError } from './errors.js';

/** One possible result of taking a label: the next state, its probability and the reward. */
export interface CreditOutcome {
  /** Id of the next state. */
  readonly state: string;
  /** P(next state | state, label); the outcomes of a label sum to 1. */
  readonly prob: number;
  /** Reward of the step when this outcome happens. */
  readonly reward: number;
}

/** A label offered in a state and what it leads to. */
export interface CreditAction {
  /** The action label, as the environment lists it. */
  readonly label: string;
  /** The outcomes (one for a deterministic label). */
  readonly outcomes: readonly CreditOutcome[];
}

/** A state of a credit task: its canonical id, what the agent reads, what it may do. */
export interface CreditState {
  /** Canonical id; the environment reports it as `info.state`. */
  readonly id: string;
  /** The observation the environment shows in this state. */
  readonly observation: string;
  /** The episode ends on reaching this state (it has no labels). */
  readonly terminal: boolean;
  /** A terminal state that counts as success (`info.success`). */
  readonly success: boolean;
  /** The labels offered, in the environment's order (empty at a terminal state). */
  readonly actions: readonly CreditAction[];
}

/**
 * A credit task's Markov decision process at the level of the action labels: every state, the
 * labels it offers, the rewards and transition distributions, which states end the episode, the
 * discount and the start. The environment of the task plays exactly this MDP; the exact values
 * (`optimalValues`, `policyAdvantages`) are computed from it.
 */
export interface CreditMdp {
  /** The registry id of the environment that plays it, e.g. `credit/key-token`. */
  readonly id: string;
  /** γ, the discount of `info.discountedReturn` and of the exact values. */
  readonly gamma: number;
  /** Id of the state every episode starts in. */
  readonly start: string;
  /** The step limit of an episode (a time limit outside the MDP: see the README). */
  readonly maxSteps: number;
  /** Every state; terminal states included. */
  readonly states: readonly CreditState[];
}

/** Tolerance on a distribution's total probability. */
const PROB_TOLERANCE = 1e-9;

/** An MDP checked once, with its states indexed by id. */
export interface IndexedMdp {
  readonly mdp: CreditMdp;
  readonly index: ReadonlyMap<string, number>;
}

const checked = new WeakMap<CreditMdp, IndexedMdp>();

/**
 * Checks a `CreditMdp` (unique state ids, a start that exists, terminal states without labels and
 * running states with at least one, labels a learner can take, outcome distributions that sum to
 * 1 over existing states, finite rewards, γ in [0, 1], a positive integer step limit) and indexes
 * its states. Throws a {@link CreditArgumentError} naming `argument` and the fault.
 */
export function indexMdp(mdp: CreditMdp, argument: string): IndexedMdp {
  const done = checked.get(mdp);
  if (done) return done;
  const fail = (message: string): never => {
    throw new CreditArgumentError(argument, message);
  };
  if (mdp === null || typeof mdp !== 'object' || !Array.isArray(mdp.states)) {
    fail('expected a task id or a CreditMdp object with a `states` array.');
  }
  if (typeof mdp.gamma !== 'number' || !(mdp.gamma >= 0 && mdp.gamma <= 1)) {
    fail(`gamma must be a number in [0, 1], got ${String(mdp.gamma)}.`);
  }
  if (!Number.isInteger(mdp.maxSteps) || mdp.maxSteps < 1) {
    fail(`maxSteps must be a positive integer, got ${String(mdp.maxSteps)}.`);
  }
  const index = new Map<string, number>();
  mdp.states.forEach((st, i) => {
    if (typeof st?.id !== 'string' || st.id.length === 0) fail(`states[${i}].id must be a string.`);
    if (index.has(st.id)) fail(`state id ${JSON.stringify(st.id)} appears twice; ids are unique.`);
    index.set(st.id, i);
  });
  if (!index.has(mdp.start)) {
    fail(`start ${JSON.stringify(mdp.start)} is not the id of a state.`);
  }
  for (const st of mdp.states) {
    const where = `state ${JSON.stringify(st.id)}`;
    if (typeof st.observation !== 'string') fail(`${where}: observation must be a string.`);
    if (!Array.isArray(st.actions)) fail(`${where}: actions must be an array.`);
    if (st.terminal && st.actions.length > 0) fail(`${where} is terminal but offers labels.`);
    if (!st.terminal && st.actions.length === 0) {
      fail(`${where} is not terminal but offers no label; mark it terminal or give it labels.`);
    }
    const problem = findLabelProblem(st.actions.map((a) => a.label));
    if (problem) fail(`${where}: ${problem}`);
    for (const act of st.actions) {
      const at = `${where}, label ${JSON.stringify(act.label)}`;
      if (!Array.isArray(act.outcomes) || act.outcomes.length === 0) {
        fail(`${at}: outcomes must be a non-empty array.`);
      }
      let total = 0;
      for (const o of act.outcomes) {
        if (!index.has(o.state))
          fail(`${at}: outcome state ${JSON.stringify(o.state)} is unknown.`);
        if (!(o.prob >= 0 && o.prob <= 1)) fail(`${at}: probability ${o.prob} is outside [0, 1].`);
        if (typeof o.reward !== 'number' || !Number.isFinite(o.reward)) {
          fail(`${at}: reward ${String(o.reward)} is not a finite number.`);
        }
        total += o.prob;
      }
      if (Math.abs(total - 1) > PROB_TOLERANCE) {
        fail(`${at}: outcome probabilities sum to ${total}; they must sum to 1.`);
      }
    }
  }
  const result = { mdp, index };
  checked.set(mdp, result);
  return result;
}

/** The expected reward of a label: Σ_o P(o)·r(o). */
export function expectedReward(action: CreditAction): number {
  let r = 0;
  for (const o of action.outcomes) r += o.prob * o.reward;
  return r;
}

/**
 * The discount a function of this package uses: `gamma` when given, else the task's. Throws a
 * {@link CreditArgumentError} naming `fn(options.gamma)` unless it is a number in [0, 1].
 */
export function discountOf(mdp: CreditMdp, gamma: unknown, fn: string): number {
  const g = gamma ?? mdp.gamma;
  if (typeof g !== 'number' || !(g >= 0 && g <= 1)) {
    throw new CreditArgumentError(
      `${fn}(options.gamma)`,
      `expected a discount in [0, 1], got ${String(g)}.`,
    );
  }
  return g;
}

/**
 * The states that are not terminal, in order (`running`), and each state's position among them
 * (`row`, −1 for a terminal state): the unknowns of the linear equations over running states.
 */
export function runningStates(mdp: CreditMdp): { running: number[]; row: Int32Array } {
  const running: number[] = [];
  const row = new Int32Array(mdp.states.length).fill(-1);
  mdp.states.forEach((st, s) => {
    if (!st.terminal) row[s] = running.push(s) - 1;
  });
  return { running, row };
}
