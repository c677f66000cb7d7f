import { concatInto } from './concat.js';
import { PolicyContractError } from './errors.js';

/** One agent step as recorded during a rollout (input to {@link RolloutBuilder.push}). */
export interface StepRecord {
  /** Prompt token ids of the observation acted on. */
  readonly prompt: Int32Array;
  /** Chosen action token ids, exactly as scored or generated. */
  readonly action: Int32Array;
  /** Behaviour log π(w_k | o, w_<k) per action token (full vocabulary, temperature 1). */
  readonly logProbs: ArrayLike<number>;
  /** V(o, w_<k) per action token (entry 0 is V(o)). */
  readonly values: ArrayLike<number>;
  /** Reward of the step. */
  readonly reward: number;
  /** The episode ended by success or failure. */
  readonly terminated: boolean;
  /** The episode hit its step limit. */
  readonly truncated: boolean;
  /** V(final observation) when truncated and bootstrapped, else NaN. */
  readonly finalValue: number;
  /** Restricted action spaces: every candidate's in-context ids, normaliser and the chosen index. */
  readonly candidates?: {
    readonly ids: readonly Int32Array[];
    readonly normalisers: ArrayLike<number>;
    readonly chosen: number;
    /** log π̃(chosen) under the TWOSOME distribution. */
    readonly actionLogProb: number;
  };
}

/**
 * A rollout of T steps from N environments stored as ragged token trajectories: offsets plus
 * flat typed arrays, with no padding. Sample i = t·N + n is step t of environment n.
 *
 * For sample i the action tokens are `actionIds[actionOffsets[i] .. actionOffsets[i+1])`, and
 * `logProbs`, `values` are aligned with them token by token.
 */
export class RolloutBuffer {
  constructor(
    /** Steps per environment T. */
    readonly numSteps: number,
    /** Environments N. */
    readonly numEnvs: number,
    /** `[T·N + 1]` offsets into `promptIds`. */
    readonly promptOffsets: Int32Array,
    /** Flat prompt token ids. */
    readonly promptIds: Int32Array,
    /** `[T·N + 1]` offsets into the token-aligned arrays. */
    readonly actionOffsets: Int32Array,
    /** Flat action token ids. */
    readonly actionIds: Int32Array,
    /** Flat behaviour log-probs per token. */
    readonly logProbs: Float32Array,
    /** Flat critic values V(o, w_<k) per token. */
    readonly values: Float32Array,
    /** `[T·N]` rewards. */
    readonly rewards: Float64Array,
    /** `[T·N]` 1 where the episode terminated after the step. */
    readonly terminated: Uint8Array,
    /** `[T·N]` 1 where the episode was truncated after the step. */
    readonly truncated: Uint8Array,
    /** `[T·N]` V(final observation) of truncated steps (NaN elsewhere). */
    readonly finalValues: Float64Array,
    /** `[N]` V(o_T): value of each environment's observation after the last step. */
    readonly bootstrapValues: Float64Array,
    /** `[T·N + 1]` offsets into the candidate arrays (empty range for open action spaces). */
    readonly candidateOffsets: Int32Array,
    /** `[C + 1]` offsets of each candidate's ids in `candidateIds`. */
    readonly candidateTokenOffsets: Int32Array,
    /** Flat candidate token ids. */
    readonly candidateIds: Int32Array,
    /** `[C]` TWOSOME normaliser n(a) of each candidate. */
    readonly candidateNormalisers: Float64Array,
    /** `[T·N]` index of the chosen candidate within its step (-1 for open action spaces). */
    readonly chosen: Int32Array,
    /** `[T·N]` log π̃ of the chosen candidate (NaN for open action spaces). */
    readonly actionLogProbs: Float64Array,
  ) {}

  /** Number of samples T·N. */
  get size(): number {
    return this.numSteps * this.numEnvs;
  }

  /** Total number of action tokens. */
  get tokenCount(): number {
    return this.actionIds.length;
  }

  /** Prompt ids of sample i (a view). */
  prompt(i: number): Int32Array {
    return this.promptIds.subarray(this.promptOffsets[i]!, this.promptOffsets[i + 1]!);
  }

  /** Action ids of sample i (a view). */
  action(i: number): Int32Array {
    return this.actionIds.subarray(this.actionOffsets[i]!, this.actionOffsets[i + 1]!);
  }

  /** Number of action tokens of sample i. */
  actionLength(i: number): number {
    return this.actionOffsets[i + 1]! - this.actionOffsets[i]!;
  }

  /** Candidate ids of sample i (views), empty for open action spaces. */
  candidates(i: number): Int32Array[] {
    const out: Int32Array[] = [];
    for (let c = this.candidateOffsets[i]!; c < this.candidateOffsets[i + 1]!; c++) {
      out.push(
        this.candidateIds.subarray(
          this.candidateTokenOffsets[c]!,
          this.candidateTokenOffsets[c + 1]!,
        ),
      );
    }
    return out;
  }
}

/** Builds a {@link RolloutBuffer} step by step, in order t = 0..T−1 and n = 0..N−1 within t. */
export class RolloutBuilder {
  private readonly records: StepRecord[] = [];

  constructor(
    readonly numSteps: number,
    readonly numEnvs: number,
  ) {}

  /** Appends the next sample (t·N + n order). */
  push(record: StepRecord): void {
    const len = record.action.length;
    if (len === 0) {
      throw new PolicyContractError(
        'rollout',
        'an action has no tokens; every action needs >= 1 token id.',
      );
    }
    if (record.logProbs.length !== len || record.values.length !== len) {
      throw new PolicyContractError(
        'rollout',
        `log-probs (${record.logProbs.length}) and values (${record.values.length}) must match the action length ${len}.`,
      );
    }
    if (this.records.length >= this.numSteps * this.numEnvs) {
      throw new PolicyContractError('rollout', 'more samples than T·N were pushed.');
    }
    this.records.push(record);
  }

  /** Finishes the rollout with V(o_T) per environment. */
  build(bootstrapValues: ArrayLike<number>): RolloutBuffer {
    const size = this.numSteps * this.numEnvs;
    if (this.records.length !== size || bootstrapValues.length !== this.numEnvs) {
      throw new PolicyContractError(
        'rollout',
        `expected ${size} samples and ${this.numEnvs} bootstrap values, got ${this.records.length} and ${bootstrapValues.length}.`,
      );
    }
    const r = this.records;
    const promptOffsets = new Int32Array(size + 1);
    const actionOffsets = new Int32Array(size + 1);
    const candidateOffsets = new Int32Array(size + 1);
    const candTokParts: Int32Array[] = [];
    const candNorm: number[] = [];
    for (let i = 0; i < size; i++) {
      const rec = r[i]!;
      promptOffsets[i + 1] = promptOffsets[i]! + rec.prompt.length;
      actionOffsets[i + 1] = actionOffsets[i]! + rec.action.length;
      const cands = rec.candidates;
      candidateOffsets[i + 1] = candidateOffsets[i]! + (cands ? cands.ids.length : 0);
      if (cands) {
        for (let c = 0; c < cands.ids.length; c++) {
          candTokParts.push(cands.ids[c]!);
          candNorm.push(cands.normalisers[c]!);
        }
      }
    }
    const candidateTokenOffsets = new Int32Array(candTokParts.length + 1);
    for (let c = 0; c < candTokParts.length; c++) {
      candidateTokenOffsets[c + 1] = candidateTokenOffsets[c]! + candTokParts[c]!.length;
    }
    const tokens = actionOffsets[size]!;
    const logProbs = new Float32Array(tokens);
    const values = new Float32Array(tokens);
    for (let i = 0; i < size; i++) {
      logProbs.set(r[i]!.logProbs, actionOffsets[i]!);
      values.set(r[i]!.values, actionOffsets[i]!);
    }
    return new RolloutBuffer(
      this.numSteps,
      this.numEnvs,
      promptOffsets,
      concatInto(
        new Int32Array(promptOffsets[size]!),
        r.map((x) => x.prompt),
      ),
      actionOffsets,
      concatInto(
        new Int32Array(tokens),
        r.map((x) => x.action),
      ),
      logProbs,
      values,
      Float64Array.from(r, (x) => x.reward),
      Uint8Array.from(r, (x) => (x.terminated ? 1 : 0)),
      Uint8Array.from(r, (x) => (x.truncated ? 1 : 0)),
      Float64Array.from(r, (x) => x.finalValue),
      Float64Array.from(bootstrapValues),
      candidateOffsets,
      candidateTokenOffsets,
      concatInto(new Int32Array(candidateTokenOffsets[candTokParts.length]!), candTokParts),
      Float64Array.from(candNorm),
      Int32Array.from(r, (x) => (x.candidates ? x.candidates.chosen : -1)),
      Float64Array.from(r, (x) => (x.candidates ? x.candidates.actionLogProb : Number.NaN)),
    );
  }
}
