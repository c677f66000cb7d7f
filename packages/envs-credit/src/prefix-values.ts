import {
  labelLogReference,
  optimalPrefixValues,
  prefixValues,
  softPolicyEvaluation,
  softPrefixValues,
} from '@poad/bellman';
import { CreditArgumentError } from './errors.js';
import { type CreditMdp, discountOf, indexMdp } from './mdp.js';
import { optimalValues } from './optimal.js';
import { evaluate } from './policy.js';
import { type LabelPolicy, readPolicy } from './policy-input.js';
import { resolveMdp } from './tasks.js';
import { creditTokenMdp } from './token-mdp.js';
import { type LabelValues, labelEntry, type StateValues } from './values.js';

/**
 * Each label's token ids in a state, exactly as the tokenizer gives them in context (the ids
 * the policy scores and the critic reads): one integer array per label, in the labels' order.
 * Called once per running state.
 */
export type LabelTokenIds = (
  stateId: string,
  labels: readonly string[],
  observation: string,
) => readonly ArrayLike<number>[];

/**
 * The reference π̄ of the soft values over a state's label tree: for each label, the log-prob of
 * each of its tokens, log π̄(w_k | s, w_<k), renormalised over the tokens that continue some label
 * after w_<k (e.g. the base model's per-token log-probs restricted to the label tree). `ids` are
 * the labels' token ids as `LabelTokenIds` gave them.
 */
export type LabelTokenReference = (
  stateId: string,
  labels: readonly string[],
  ids: readonly Int32Array[],
) => readonly ArrayLike<number>[];

/** Which values a {@link TokenPrefixValues} holds. */
export type PrefixValueKind = 'policy' | 'optimal' | 'soft';

/**
 * Exact values at every token prefix of every label of a credit task, computed once (per
 * iteration of a learner, for the policy that acts in it).
 *
 * `prefixes[stateId][label]` has |label| + 1 entries: entry k (k < |label|) is the value before
 * the label's token k, V(s, w_<k), so entry 0 is V(s); the last entry is Q(s, label), the value
 * after the last token. A prefix that no label of positive probability continues has no value
 * (NaN, `kind: 'policy'` and `'soft'` only); `undefinedPrefixes` counts those entries.
 */
export interface TokenPrefixValues {
  /** The environment id of the task. */
  readonly id: string;
  /** 'policy': V^π and Q^π; 'optimal': V* and Q*; 'soft': the soft values of π at temperature β. */
  readonly kind: PrefixValueKind;
  readonly gamma: number;
  /** β of the soft values (0 for 'policy' and 'optimal'). */
  readonly beta: number;
  /** V(s) per state id, the value before any token (0 at terminal states). */
  readonly v: StateValues;
  /** Q(s, a) per state id and label, the value after the label's last token. */
  readonly q: LabelValues;
  /** The token ids of each label, as given, per state id and label. */
  readonly tokens: Readonly<Record<string, Readonly<Record<string, Int32Array>>>>;
  /** The values before each token and after the last one, per state id and label. */
  readonly prefixes: Readonly<Record<string, Readonly<Record<string, Float64Array>>>>;
  /** How many entries before a token (over all states and labels) are NaN. */
  readonly undefinedPrefixes: number;
}

/** Options of {@link tokenPrefixValues} and {@link optimalTokenPrefixValues}. */
export interface TokenPrefixOptions {
  /** The discount (default: the task's γ). */
  gamma?: number;
}

/** Options of {@link softTokenPrefixValues}. */
export interface SoftTokenPrefixOptions extends TokenPrefixOptions {
  /** β ≥ 0, the temperature of the KL term (ETPO's β; 0 gives the `kind: 'policy'` values). */
  beta: number;
  /** π̄ over each state's label tree (default: uniform over the continuations of each prefix). */
  reference?: LabelTokenReference;
  /** The soft evaluation stops when no state value changes by more than this (default 1e-13). */
  tolerance?: number;
}

function readGamma(mdp: CreditMdp, options: TokenPrefixOptions, fn: string): number {
  if (options === null || typeof options !== 'object') {
    throw new CreditArgumentError(`${fn}(options)`, 'expected an options object, e.g. {}.');
  }
  return discountOf(mdp, options.gamma, fn);
}

/** The token ids of every running state's labels (empty at terminal states), checked. */
function readTokenIds(mdp: CreditMdp, tokenIds: LabelTokenIds, fn: string): Int32Array[][] {
  const argument = `${fn}(tokenIds)`;
  if (typeof tokenIds !== 'function') {
    throw new CreditArgumentError(
      argument,
      'expected a function (stateId, labels, observation) => one array of token ids per label.',
    );
  }
  return mdp.states.map((st) => {
    if (st.terminal) return [];
    const labels = st.actions.map((a) => a.label);
    const where = `state ${JSON.stringify(st.id)}`;
    const given = tokenIds(st.id, labels, st.observation);
    if (!Array.isArray(given) || given.length !== labels.length) {
      throw new CreditArgumentError(
        argument,
        `${where}: expected one array of token ids per label (${labels.length}), got ${Array.isArray(given) ? `${given.length} arrays` : String(given)}.`,
      );
    }
    return labels.map((label, a) => {
      const ids = given[a] as unknown;
      const at = `${where}, label ${JSON.stringify(label)}`;
      if (
        ids === null ||
        typeof ids !== 'object' ||
        typeof (ids as { length?: unknown }).length !== 'number' ||
        (ids as ArrayLike<unknown>).length === 0
      ) {
        throw new CreditArgumentError(
          argument,
          `${at}: expected a non-empty array of token ids (the ids the tokenizer gives the label in context).`,
        );
      }
      const arr = ids as ArrayLike<unknown>;
      const out = new Int32Array(arr.length);
      for (let k = 0; k < arr.length; k++) {
        const w = arr[k];
        if (!Number.isInteger(w) || (w as number) < -2147483648 || (w as number) > 2147483647) {
          throw new CreditArgumentError(
            argument,
            `${at}: token ${k} is ${String(w)}; token ids are 32-bit integers.`,
          );
        }
        out[k] = w as number;
      }
      return out;
    });
  });
}

/** Q(s, a) = Σ_o P(o)·(r(o) + γ·V(s_o)) of every label, from state values by index. */
function qOf(mdp: CreditMdp, v: ArrayLike<number>, gamma: number): Float64Array[] {
  const { index } = indexMdp(mdp, 'tokenPrefixValues(task)');
  return mdp.states.map((st) =>
    Float64Array.from(st.actions, (act) => {
      let value = 0;
      for (const o of act.outcomes) value += o.prob * (o.reward + gamma * v[index.get(o.state)!]!);
      return value;
    }),
  );
}

/** Assembles the table from per-state label ids, Q and a per-label prefix function. */
function assemble(
  mdp: CreditMdp,
  kind: PrefixValueKind,
  gamma: number,
  beta: number,
  ids: readonly Int32Array[][],
  q: readonly ArrayLike<number>[],
  prefixesOf: (s: number, a: number) => Float64Array,
): TokenPrefixValues {
  const v: Record<string, number> = {};
  const qOut: Record<string, Record<string, number>> = {};
  const tokens: Record<string, Record<string, Int32Array>> = {};
  const prefixes: Record<string, Record<string, Float64Array>> = {};
  let undefinedPrefixes = 0;
  mdp.states.forEach((st, s) => {
    const qs: Record<string, number> = {};
    const ts: Record<string, Int32Array> = {};
    const ps: Record<string, Float64Array> = {};
    st.actions.forEach((act, a) => {
      const values = prefixesOf(s, a);
      for (let k = 0; k < values.length - 1; k++) if (Number.isNaN(values[k]!)) undefinedPrefixes++;
      qs[act.label] = q[s]![a]!;
      ts[act.label] = ids[s]![a]!;
      ps[act.label] = values;
    });
    // Entry 0 of every label is the same number: V(s) as the prefix values compute it.
    v[st.id] = st.actions.length === 0 ? 0 : ps[st.actions[0]!.label]![0]!;
    qOut[st.id] = qs;
    tokens[st.id] = ts;
    prefixes[st.id] = ps;
  });
  return { id: mdp.id, kind, gamma, beta, v, q: qOut, tokens, prefixes, undefinedPrefixes };
}

/**
 * The exact token-prefix values V^π(s, w_<k) of the label-level policy `pi` on a credit task, for
 * every prefix of every label of every state: the values a token-level critic of the BAD backup
 * estimates when π acts (see `prefixValues` of `@poad/bellman`):
 *
 *   V^π(s, w_<k) = Σ_{a∈L} π(a|s)·Q^π(s, a) / Σ_{a∈L} π(a|s),
 *
 * L the labels that still write a k-th token after w_<k (at least k + 1 tokens long, beginning
 * with w_<k; a label equal to w_<k has ended and is not in L). Entry 0 is V^π(s), the last entry
 * Q^π(s, a). Q^π is exact (one linear solve, as `policyAdvantages`); `v` holds Σ_a π(a|s)·Q^π(s, a),
 * V^π(s) up to rounding (~1e-15), so that it is the same number as every label's entry 0.
 *
 * @param task a task name, a registry id or a {@link CreditMdp}
 * @param pi the label-level policy that acts (each state's probabilities sum to 1)
 * @param tokenIds each state's labels' token ids, as the tokenizer gives them in context
 */
export function tokenPrefixValues(
  task: string | CreditMdp,
  pi: LabelPolicy,
  tokenIds: LabelTokenIds,
  options: TokenPrefixOptions = {},
): TokenPrefixValues {
  const FN = 'tokenPrefixValues';
  const mdp = resolveMdp(task, `${FN}(task)`);
  const gamma = readGamma(mdp, options, FN);
  const probs = readPolicy(mdp, pi, `${FN}(pi)`);
  const ids = readTokenIds(mdp, tokenIds, FN);
  const q = qOf(mdp, evaluate(mdp, probs, gamma, `${FN}(pi)`), gamma);
  return assemble(mdp, 'policy', gamma, 0, ids, q, (s, a) =>
    prefixValues(ids[s]!, probs[s]!, q[s]!, a),
  );
}

/**
 * The optimal token-prefix values V*(s, w_<k) = max_{a∈L} Q*(s, a) of a credit task (L as in
 * {@link tokenPrefixValues}): the fixed point of the BAD optimality backup on each state's label
 * tree, where every prefix is worth its best completion. Entry 0 is V*(s), the last entry Q*(s, a).
 * No policy enters and no entry is NaN. The values of an `oracle-star` critic.
 */
export function optimalTokenPrefixValues(
  task: string | CreditMdp,
  tokenIds: LabelTokenIds,
  options: TokenPrefixOptions = {},
): TokenPrefixValues {
  const FN = 'optimalTokenPrefixValues';
  const mdp = resolveMdp(task, `${FN}(task)`);
  const gamma = readGamma(mdp, options, FN);
  const ids = readTokenIds(mdp, tokenIds, FN);
  const star = optimalValues(mdp, { gamma });
  const q = mdp.states.map((st) => Float64Array.from(st.actions, (a) => star.q[st.id]![a.label]!));
  return assemble(mdp, 'optimal', gamma, 0, ids, q, (s, a) =>
    optimalPrefixValues(ids[s]!, q[s]!, a),
  );
}

/** Throws unless a state's label ids form a tree: no label's ids equal or begin another's. */
function checkLabelTree(mdp: CreditMdp, ids: readonly Int32Array[][], argument: string): void {
  mdp.states.forEach((st, s) => {
    const own = ids[s]!;
    own.forEach((x, a) => {
      own.forEach((y, b) => {
        if (a === b || x.length > y.length || (x.length === y.length && a > b)) return;
        for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return;
        const la = JSON.stringify(st.actions[a]!.label);
        const lb = JSON.stringify(st.actions[b]!.label);
        throw new CreditArgumentError(
          argument,
          x.length === y.length
            ? `state ${JSON.stringify(st.id)}: labels ${la} and ${lb} have the same token ids; the soft values need a label tree in which every label ends at its own leaf.`
            : `state ${JSON.stringify(st.id)}: the token ids of ${la} begin those of ${lb}, so the label tree cannot tell where ${la} ends; the soft values need prefix-free labels (as the tokenSpace 'labels' sampler does).`,
        );
      });
    });
  });
}

/**
 * The exact soft token-prefix values of the label-level policy `pi` on a credit task at
 * temperature β: what the token-level soft critic of ETPO's soft BAD backup estimates when π
 * acts, with the reference π̄ over each state's label tree (see `softPrefixValues` of
 * `@poad/bellman`):
 *
 *   V_soft(s, w_<k) = Σ_{a∈L} π_k(a)·[Q_soft(s, a) − β·log(π_k(a)/π̄_k(a))],
 *
 * π_k(a) = π(a|s)/Σ_L π and π̄_k(a) the reference's probability of completing w_<k as a. Q_soft is
 * the soft policy evaluation of π with the action-level reference π̄(a|s) = Π_k π̄(w_k|s, w_<k)
 * (`softPolicyEvaluation`, iterated to `tolerance`): Q_soft(s, a) = r + γ·E[V_soft(s')],
 * V_soft(s) = Σ_a π(a|s)·[Q_soft(s, a) − β·log(π(a|s)/π̄(a|s))]. The soft Q of a label's token k
 * is entry k + 1. Every state's labels must be prefix-free (the label tree of the
 * `tokenSpace: 'labels'` sampler).
 */
export function softTokenPrefixValues(
  task: string | CreditMdp,
  pi: LabelPolicy,
  tokenIds: LabelTokenIds,
  options: SoftTokenPrefixOptions,
): TokenPrefixValues {
  const FN = 'softTokenPrefixValues';
  const mdp = resolveMdp(task, `${FN}(task)`);
  const gamma = readGamma(mdp, options, FN);
  const beta = options.beta;
  if (typeof beta !== 'number' || !(beta >= 0) || !Number.isFinite(beta)) {
    throw new CreditArgumentError(
      `${FN}(options.beta)`,
      `expected a finite temperature ≥ 0, got ${String(beta)}.`,
    );
  }
  if (options.reference !== undefined && typeof options.reference !== 'function') {
    throw new CreditArgumentError(
      `${FN}(options.reference)`,
      'expected a function (stateId, labels, ids) => per-label token log-probs, or none for uniform.',
    );
  }
  const probs = readPolicy(mdp, pi, `${FN}(pi)`);
  const ids = readTokenIds(mdp, tokenIds, FN);
  checkLabelTree(mdp, ids, `${FN}(tokenIds)`);
  const referenceLogProbs = mdp.states.map((st, s) =>
    st.terminal || !options.reference
      ? undefined
      : options.reference(
          st.id,
          st.actions.map((a) => a.label),
          ids[s]!,
        ),
  );
  const logRef = mdp.states.map((st, s) => {
    if (st.terminal) return new Float64Array(0);
    try {
      return labelLogReference(ids[s]!, referenceLogProbs[s]);
    } catch (e) {
      throw new CreditArgumentError(
        `${FN}(options.reference)`,
        `state ${JSON.stringify(st.id)}: ${(e as Error).message}`,
      );
    }
  });
  const { tokenMdp } = creditTokenMdp(mdp);
  const evaluation = softPolicyEvaluation(tokenMdp, {
    gamma,
    beta,
    policy: (s, a) => probs[s]![a]!,
    reference: (s, a) => Math.exp(logRef[s]![a]!),
    tolerance: options.tolerance ?? 1e-13,
  });
  if (!evaluation.converged) {
    throw new CreditArgumentError(
      `${FN}(pi)`,
      `the soft values of this policy did not converge with γ = ${gamma} (residual ${evaluation.residual} after ${evaluation.iterations} sweeps); a policy that can loop forever has none at γ = 1. Evaluate with γ < 1.`,
    );
  }
  const q = evaluation.q;
  return assemble(mdp, 'soft', gamma, beta, ids, q, (s, a) =>
    softPrefixValues(ids[s]!, probs[s]!, q[s]!, a, {
      beta,
      ...(referenceLogProbs[s] === undefined ? {} : { referenceLogProbs: referenceLogProbs[s] }),
    }),
  );
}

/**
 * The prefix values of one label in one state, looked up in `values`: |label| + 1 entries, the
 * value before each token and then Q(s, label). Pass the step's action ids as `ids` to check that
 * they are the ids the table was built from (a different tokenisation would shift every prefix).
 *
 * @throws CreditArgumentError naming the valid states or labels when `stateId` or `label` is not
 * in the task, or when `ids` differ from the table's
 */
export function prefixValuesOf(
  values: TokenPrefixValues,
  stateId: string,
  label: string,
  ids?: ArrayLike<number>,
): Float64Array {
  const entry = labelEntry(values.prefixes, values.id, 'prefixValuesOf', stateId, label);
  if (ids !== undefined) {
    const own = values.tokens[stateId]![label]!;
    let same = ids.length === own.length;
    for (let k = 0; same && k < own.length; k++) same = ids[k] === own[k];
    if (!same) {
      throw new CreditArgumentError(
        'prefixValuesOf(ids)',
        `the step's ids [${Array.from(ids).join(', ')}] are not the ids [${own.join(', ')}] the table has for ${JSON.stringify(label)} in state ${JSON.stringify(stateId)}; build the table with the tokenizer that acted.`,
      );
    }
  }
  return entry;
}

/**
 * One prefix value: V(s, w_<k) before token k of `label` in state `stateId`, k = 0..|label|−1,
 * or Q(s, label) at k = |label|.
 *
 * @throws CreditArgumentError for an unknown state or label, or k outside 0..|label|
 */
export function prefixValueOf(
  values: TokenPrefixValues,
  stateId: string,
  label: string,
  k: number,
): number {
  const row = prefixValuesOf(values, stateId, label);
  if (!Number.isInteger(k) || k < 0 || k >= row.length) {
    throw new CreditArgumentError(
      'prefixValueOf(k)',
      `${JSON.stringify(label)} has ${row.length - 1} tokens, so k is 0..${row.length - 1} (the last is the value after its last token); got ${String(k)}.`,
    );
  }
  return row[k]!;
}
