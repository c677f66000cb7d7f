import type { TextStep } from '@poad/envs-core';
import * as tf from '@tensorflow/tfjs-core';
import type { CandidateNormalisation, TokenSpace } from './config.js';
import { PolicyContractError } from './errors.js';
import { openActionSpaceError, restrictedLogProbs } from './label-tokens.js';
import { toPadded } from './padding.js';
import type { GeneratedAction, TokenBatch, TokenPolicy } from './policy.js';
import type { SeededRng } from './rng.js';
import type { StepRecord } from './rollout-buffer.js';
import { argmax, candidateDistribution, candidateNormaliser } from './twosome-sampler.js';

/** How {@link selectActions} acts. */
export interface SelectOptions {
  /** Arg-max instead of sampling (also greedy generation). */
  readonly greedy: boolean;
  /** TWOSOME normalisation of a candidate's summed log-prob. */
  readonly candidateNormalisation: CandidateNormalisation;
  /**
   * Restricted action spaces: 'vocabulary' (default) samples by the TWOSOME softmax and returns
   * full-vocabulary token log-probs; 'labels' samples from the product of the tokens'
   * probabilities renormalised over the label tree and returns those restricted log-probs.
   */
  readonly tokenSpace?: TokenSpace;
  /** Open action spaces: generation limits. */
  readonly maxNewTokens: number;
  readonly temperature: number;
  readonly topK: number;
  /** Generation on webgpu: tokens between two reads of the drawn ids (default: the policy's). */
  readonly stopCheckEvery?: number;
  /** The seeded generator of every sample. */
  readonly rng: SeededRng;
}

/** The actions chosen for a batch of environment steps. */
export interface SelectedActions {
  /** Prompt ids of each observation. */
  readonly prompts: Int32Array[];
  /** Chosen action ids, exactly as scored or generated. */
  readonly actionIds: Int32Array[];
  /**
   * Per-token behaviour log-probs of the chosen actions at temperature 1: over the full
   * vocabulary, or with `tokenSpace: 'labels'` over the tokens continuing a valid label.
   */
  readonly logProbs: ArrayLike<number>[];
  /** The labels (or generated text) to send to the environments. */
  readonly labels: string[];
  /** For restricted action spaces: the candidate set and the sampler's choice. */
  readonly candidates: Array<StepRecord['candidates']>;
  /**
   * For restricted action spaces: the sampler's probability of each valid label, in the env's
   * order (undefined for open action spaces). For inspecting a policy; training does not use it.
   */
  readonly actionProbs: Array<Float64Array | undefined>;
  /**
   * For restricted action spaces: the policy's next-token probability, at the decision point,
   * summed over the distinct first tokens of the valid labels (1 when all of the model's mass is
   * on starting some valid label; undefined for open action spaces). The sampler renormalises
   * over the labels, so this does not change which action is taken; it shows how much of the
   * language model's own distribution training has moved away from the action vocabulary.
   */
  readonly labelMass: Array<number | undefined>;
}

function sumOf(xs: ArrayLike<number>): number {
  let s = 0;
  for (let k = 0; k < xs.length; k++) s += xs[k]!;
  return s;
}

export function maxLength(rows: readonly Int32Array[]): number {
  let m = 1;
  for (const r of rows) if (r.length > m) m = r.length;
  return m;
}

/** Runs `f` (a tensor-returning pass) in a tidy scope and reads its result as a flat array. */
export async function readMatrix(f: () => tf.Tensor): Promise<Float32Array> {
  const t = tf.tidy(f);
  try {
    return (await t.data()) as Float32Array;
  } finally {
    t.dispose();
  }
}

/** Padded `[B, width]` per-token log-probs of a batch, read back as numbers. */
export function scoreLogProbs(policy: TokenPolicy, batch: TokenBatch): Promise<Float32Array> {
  return readMatrix(() =>
    toPadded(policy.scoreTokens(batch).logProbs, batch, 'policy.scoreTokens'),
  );
}

/** Per-token log-probs of every candidate of every prompt (prefix-shared when the policy can). */
async function candidateLogProbs(
  policy: TokenPolicy,
  prompts: readonly Int32Array[],
  cands: readonly Int32Array[][],
): Promise<Float32Array[][]> {
  if (policy.scoreCandidates) {
    const out = await policy.scoreCandidates(prompts, cands);
    cands.forEach((ids, j) => {
      if (out[j]?.length !== ids.length || ids.some((x, c) => out[j]![c]!.length !== x.length)) {
        throw new PolicyContractError(
          'policy.scoreCandidates',
          `expected one log-prob per candidate token for prompt ${j}.`,
        );
      }
    });
    return out;
  }
  const rows: { prompt: Int32Array; ids: Int32Array }[] = [];
  cands.forEach((ids, j) => {
    for (const x of ids) rows.push({ prompt: prompts[j]!, ids: x });
  });
  const width = maxLength(rows.map((r) => r.ids));
  const lp = await scoreLogProbs(policy, {
    prompts: rows.map((r) => r.prompt),
    actions: rows.map((r) => r.ids),
    width,
  });
  let row = 0;
  return cands.map((ids) => ids.map((x) => lp.slice(row * width, row++ * width + x.length)));
}

/**
 * Chooses one action per environment step, as training and evaluation both do.
 *
 * Restricted action spaces use the TWOSOME sampler for every algorithm: each valid label is
 * scored as a continuation of the prompt, its summed token log-prob is divided by its word or
 * token count, and an action is sampled from the softmax (or taken greedily). The chosen label's
 * in-context ids and per-token log-probs from that same scoring pass are returned. With
 * `tokenSpace: 'labels'` the same pass is renormalised over the label tree instead: each
 * label's probability is the product of its restricted token probabilities (no normaliser),
 * and the restricted per-token log-probs are returned. Open action
 * spaces generate tokens with `policy.generate`, then a teacher-forced pass records their
 * temperature-1 log-probs.
 */
export async function selectActions(
  policy: TokenPolicy,
  steps: readonly TextStep[],
  options: SelectOptions,
): Promise<SelectedActions> {
  const n = steps.length;
  const prompts = await Promise.all(steps.map((s) => policy.encodePrompt(s.observation)));
  const chosen: SelectedActions = {
    prompts,
    actionIds: new Array(n),
    logProbs: new Array(n),
    labels: new Array(n),
    candidates: new Array(n),
    actionProbs: new Array(n).fill(undefined),
    labelMass: new Array(n).fill(undefined),
  };
  const restricted = steps.flatMap((s, i) => (s.actions === null ? [] : [i]));
  if (restricted.length > 0) await chooseLabels(policy, steps, restricted, options, chosen);
  const open = steps.flatMap((s, i) => (s.actions === null ? [i] : []));
  if (open.length > 0) await generateActions(policy, open, options, chosen);
  return chosen;
}

/**
 * Restricted action spaces (the environments `restricted`): the TWOSOME sampler (or the label
 * tree's product with `tokenSpace: 'labels'`) over each one's valid labels; fills their entries
 * of `chosen`.
 */
async function chooseLabels(
  policy: TokenPolicy,
  steps: readonly TextStep[],
  restricted: readonly number[],
  options: SelectOptions,
  chosen: SelectedActions,
): Promise<void> {
  const cands = await encodeCandidates(policy, steps, restricted);
  const lp = await candidateLogProbs(
    policy,
    restricted.map((i) => chosen.prompts[i]!),
    cands,
  );
  const labelTree = options.tokenSpace === 'labels';
  restricted.forEach((i, j) => {
    const labelsI = steps[i]!.actions!;
    const ids = cands[j]!;
    const lm = lp[j]!;
    const perToken: ArrayLike<number>[] = labelTree ? restrictedLogProbs(ids, lm) : lm;
    const sums = Float64Array.from(perToken, sumOf);
    const norms = Float64Array.from(labelsI, (l, c) =>
      labelTree ? 1 : candidateNormaliser(l, ids[c]!.length, options.candidateNormalisation),
    );
    const dist = candidateDistribution(sums, norms);
    const choice = options.greedy ? argmax(dist.probs) : options.rng.categorical(dist.probs);
    chosen.actionProbs[i] = Float64Array.from(dist.probs);
    chosen.labelMass[i] = firstTokenMass(ids, lm);
    chosen.actionIds[i] = ids[choice]!;
    chosen.logProbs[i] = perToken[choice]!;
    chosen.labels[i] = labelsI[choice]!;
    chosen.candidates[i] = {
      ids,
      normalisers: norms,
      chosen: choice,
      actionLogProb: dist.logProbs[choice]!,
    };
  });
}

/** The in-context ids of every valid label of each restricted environment, checked. */
async function encodeCandidates(
  policy: TokenPolicy,
  steps: readonly TextStep[],
  restricted: readonly number[],
): Promise<Int32Array[][]> {
  const cands: Int32Array[][] = [];
  for (const i of restricted) {
    const labelsI = steps[i]!.actions!;
    if (labelsI.length === 0) {
      throw new PolicyContractError('env.step', `env ${i} offered an empty action list.`);
    }
    const ids = await policy.encodeContinuations(steps[i]!.observation, labelsI);
    if (ids.length !== labelsI.length || ids.some((x) => x.length === 0)) {
      throw new PolicyContractError(
        'policy.encodeContinuations',
        `expected ${labelsI.length} non-empty id arrays for env ${i}.`,
      );
    }
    cands.push(ids);
  }
  return cands;
}

/**
 * The next-token probability at the decision point summed over the labels' distinct first
 * tokens (`SelectedActions.labelMass`), from the full-vocabulary log-probs `lm`.
 */
function firstTokenMass(ids: readonly Int32Array[], lm: readonly ArrayLike<number>[]): number {
  const firstTokens = new Map(ids.map((x, c) => [x[0]!, lm[c]![0]!]));
  let mass = 0;
  for (const l of firstTokens.values()) mass += Math.exp(l);
  return mass;
}

/**
 * Open action spaces (the environments `open`): generation, then a teacher-forced temperature-1
 * pass for the generated tokens' log-probs; fills their entries of `chosen`.
 */
async function generateActions(
  policy: TokenPolicy,
  open: readonly number[],
  options: SelectOptions,
  chosen: SelectedActions,
): Promise<void> {
  if (options.tokenSpace === 'labels') throw openActionSpaceError(`env ${open[0]}`);
  const { prompts, actionIds } = chosen;
  const generated = await generate(
    policy,
    open.map((i) => prompts[i]!),
    options,
  );
  open.forEach((i, j) => {
    const g = generated[j]!;
    if (g.tokenIds.length === 0) {
      throw new PolicyContractError('policy.generate', `returned no tokens for env ${i}.`);
    }
    actionIds[i] = g.tokenIds;
    chosen.labels[i] = g.text;
  });
  const width = maxLength(open.map((i) => actionIds[i]!));
  const lp = await scoreLogProbs(policy, {
    prompts: open.map((i) => prompts[i]!),
    actions: open.map((i) => actionIds[i]!),
    width,
  });
  open.forEach((i, j) => {
    chosen.logProbs[i] = lp.slice(j * width, j * width + actionIds[i]!.length);
  });
}

/** One generated action per prompt: in one batch when the policy can, else one by one. */
async function generate(
  policy: TokenPolicy,
  prompts: readonly Int32Array[],
  options: SelectOptions,
): Promise<GeneratedAction[]> {
  if (policy.generate === undefined) {
    throw new PolicyContractError(
      'policy.generate',
      'an env has an open action space (actions === null); the policy must implement generate().',
    );
  }
  const { rng } = options;
  const generateOptions = {
    maxTokens: options.maxNewTokens,
    temperature: options.temperature,
    topK: options.topK,
    greedy: options.greedy,
    random: () => rng.float(),
    ...(options.stopCheckEvery === undefined ? {} : { stopCheckEvery: options.stopCheckEvery }),
  };
  if (policy.generateBatch) {
    const generated = await policy.generateBatch(prompts, generateOptions);
    if (generated.length !== prompts.length) {
      throw new PolicyContractError(
        'policy.generateBatch',
        `returned ${generated.length} actions for ${prompts.length} prompts.`,
      );
    }
    return generated;
  }
  const generated: GeneratedAction[] = [];
  for (const p of prompts) generated.push(await policy.generate(p, generateOptions));
  return generated;
}
