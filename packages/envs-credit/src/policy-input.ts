import { CreditArgumentError } from './errors.js';
import type { CreditMdp } from './mdp.js';

/**
 * A policy over the labels: for a state id and its labels (in the environment's order), the
 * probability of each label, as an array in that order or as a record by label (a label left
 * out, or given `undefined`, has probability 0).
 */
export type LabelPolicy = (
  stateId: string,
  labels: readonly string[],
) => ArrayLike<number> | Readonly<Record<string, number | undefined>>;

/** The uniform policy over each state's labels. */
export const uniformPolicy: LabelPolicy = (_stateId, labels) => labels.map(() => 1 / labels.length);

/** How far a policy's probabilities may sum from 1 (they are then divided by their sum). */
export const POLICY_SUM_TOLERANCE = 1e-5;

/**
 * π(·|s) of every running state of `mdp`, checked (finite, non-negative, one per label, summing
 * to 1 within {@link POLICY_SUM_TOLERANCE}) and divided by its sum; empty at terminal states.
 */
export function readPolicy(mdp: CreditMdp, pi: LabelPolicy, argument: string): Float64Array[] {
  if (typeof pi !== 'function') {
    throw new CreditArgumentError(
      argument,
      'expected a function (stateId, labels) => probabilities, e.g. uniformPolicy.',
    );
  }
  return mdp.states.map((st) => {
    if (st.terminal) return new Float64Array(0);
    const labels = st.actions.map((a) => a.label);
    const where = `π(·|${JSON.stringify(st.id)})`;
    const fail = (message: string): never => {
      throw new CreditArgumentError(argument, `${where} ${message}`);
    };
    const given = pi(st.id, labels);
    const raw: unknown[] = labels.map(() => 0);
    if (given === null || typeof given !== 'object') {
      fail(`must be an array (one probability per label) or a record by label; got ${given}.`);
    } else if (typeof (given as ArrayLike<number>).length === 'number') {
      const arr = given as ArrayLike<number>;
      if (arr.length !== labels.length) {
        fail(
          `has ${arr.length} probabilities for ${labels.length} labels (${labels.map((l) => JSON.stringify(l)).join(', ')}).`,
        );
      }
      for (let a = 0; a < labels.length; a++) raw[a] = arr[a];
    } else {
      const rec = given as Readonly<Record<string, number | undefined>>;
      for (const key of Object.keys(rec)) {
        if (rec[key] === undefined) continue;
        const a = labels.indexOf(key);
        if (a < 0) {
          fail(
            `names ${JSON.stringify(key)}, which is not a label here; the labels are ${labels.map((l) => JSON.stringify(l)).join(', ')}.`,
          );
        }
        raw[a] = rec[key];
      }
    }
    const probs = new Float64Array(labels.length);
    let total = 0;
    for (let a = 0; a < labels.length; a++) {
      const p = raw[a];
      if (typeof p !== 'number' || !Number.isFinite(p) || p < 0) {
        fail(
          `gives ${JSON.stringify(labels[a])} the probability ${String(p)}; expected a finite number ≥ 0.`,
        );
      }
      probs[a] = p as number;
      total += p as number;
    }
    if (!(Math.abs(total - 1) <= POLICY_SUM_TOLERANCE)) {
      fail(`sums to ${total}; the probabilities of a state's labels must sum to 1.`);
    }
    for (let a = 0; a < labels.length; a++) probs[a] = probs[a]! / total;
    return probs;
  });
}
