/**
 * The critic's values of `LmPolicy`: the value head (`valuesOf` of `@poad/lora-model`) on hidden
 * states of the model. By default those are the frozen base's final hidden states, which depend
 * only on the sample, not on anything trained, so they are computed once per rollout (`prepare`)
 * and reused across the update's epochs, until the next iteration clears them. The critic's
 * options (`ValueCriticOptions`) choose every layer's hidden states, a LoRA adapter of the
 * critic's own, or the actor's adapted states; features that can move are computed at every call
 * instead, inside the gradient of the critic's loss.
 */
import { type CausalLM, featureSize, type LoraAdapter, valuesOf } from '@poad/lora-model';
import * as tf from '@tensorflow/tfjs-core';
import { hiddenRows, noActions, rowCount } from './action-rows.js';

/** Which hidden states the value head reads, and through which adapter. */
export interface ValueCriticOptions {
  /**
   * `last` (default): the final hidden state; `layers`: every layer's (`ValueFeatures` of
   * `@poad/lora-model`; the model's head must read that kind); `actor`: the final hidden state
   * with the actor's adapter on, which moves as the actor learns.
   */
  readonly features?: 'last' | 'layers' | 'actor';
  /** The critic's own LoRA adapter on the base (not with `actor`); trained with the head. */
  readonly adapter?: LoraAdapter;
}

/** Feature rows `row .. row + n` of a tensor still on the device. */
interface DeviceRows {
  readonly bank: tf.Tensor2D;
  readonly row: number;
  readonly n: number;
}

const key = (p: ArrayLike<number>, a: ArrayLike<number>) =>
  `${Array.prototype.join.call(p, ',')}|${Array.prototype.join.call(a, ',')}`;

/** Most padded rows (samples × longest sequence) of one frozen-base pass of `prepare`. */
const FEATURE_PASS_ROWS = 16_384;

/** Most samples whose features are kept; past it the cache starts again empty. */
const FEATURE_CACHE_SIZE = 20_000;

/**
 * `items` in consecutive groups whose padded size (count × longest `length`) stays within
 * {@link FEATURE_PASS_ROWS}; an item longer than that goes alone.
 */
function passes(items: readonly number[], length: (i: number) => number): number[][] {
  const out: number[][] = [];
  let longest = 0;
  for (const i of items) {
    const last = out.at(-1);
    const l = length(i);
    if (last && (last.length + 1) * Math.max(longest, l) <= FEATURE_PASS_ROWS) {
      last.push(i);
      longest = Math.max(longest, l);
    } else {
      out.push([i]);
      longest = l;
    }
  }
  return out;
}

/** The value head over cached frozen-base features, per action token or per prompt. */
export class ValueHeadCritic {
  /**
   * Base features by (prompt, action): host copies (CPU backends), or rows of a tensor of
   * {@link pending} (GPU backends).
   */
  private features = new Map<string, Float32Array | DeviceRows>();
  /**
   * On a GPU backend, the features an iteration computes stay on the device (no host read), held
   * here until the cache is cleared.
   */
  private pending: tf.Tensor2D[] = [];
  /** The kind of hidden states read (the actor's are final hidden states). */
  private readonly kind: 'last' | 'layers';
  /** The critic's own adapter (criticAdapter lora), if any. */
  private readonly adapter: LoraAdapter | undefined;
  /** Whether the features are the actor's (criticFeatures actor). */
  private readonly onActor: boolean;

  constructor(
    private readonly model: CausalLM,
    options: ValueCriticOptions = {},
  ) {
    this.kind = options.features === 'layers' ? 'layers' : 'last';
    this.adapter = options.adapter;
    this.onActor = options.features === 'actor';
    if (this.onActor && this.adapter) {
      throw new Error(
        "ValueHeadCritic: features 'actor' read the actor's adapter; a critic adapter cannot be used with them",
      );
    }
  }

  /** The value head's variables, then the critic adapter's (what the critic trains). */
  get variables(): tf.Variable[] {
    return [...this.model.valueVariables(), ...(this.adapter?.variables() ?? [])];
  }

  /**
   * Whether the features are those of the frozen base alone, the same for every call until the
   * next rollout, so that they are computed once and cached; features through an adapter that
   * learns (the critic's or the actor's) are computed at every call.
   */
  get cachesFeatures(): boolean {
    return !this.onActor && this.adapter === undefined;
  }

  /** Forgets every cached feature and frees the device's banks. */
  clear(): void {
    this.features = new Map();
    tf.dispose(this.pending.splice(0));
  }

  /**
   * Computes and caches the features of the samples not cached yet. On a GPU the rows stay on
   * the device for the whole iteration (the rollout's values and the update's critic slice them
   * there; {@link clear} frees them when the next iteration begins): no host read. Elsewhere
   * they are read now.
   */
  async prepare(prompts: readonly Int32Array[], actions: readonly Int32Array[]): Promise<void> {
    // Features that move are computed in the value calls themselves.
    if (!this.cachesFeatures) return;
    const todo: number[] = [];
    prompts.forEach((p, i) => {
      if (!this.features.has(key(p, actions[i]!))) todo.push(i);
    });
    if (todo.length === 0) return;
    if (this.features.size > FEATURE_CACHE_SIZE) this.clear();
    if (tf.getBackend() === 'webgpu') this.prepareOnDevice(prompts, actions, todo);
    else await this.prepareOnHost(prompts, actions, todo);
  }

  /**
   * V(o, w_<k) for each action token of each sample, concatenated in sample order.
   * Differentiable w.r.t. the head, and the adapter its features pass through (if any).
   */
  tokenValues(prompts: readonly Int32Array[], actions: readonly Int32Array[]): tf.Tensor1D {
    if (!this.cachesFeatures) {
      return tf.tidy(() => valuesOf(this.model, this.baseRows(prompts, actions)));
    }
    return valuesOf(this.model, this.featureRows(prompts, actions));
  }

  /** V(o) of each prompt (its last token's features). */
  promptValues(prompts: readonly Int32Array[]): tf.Tensor1D {
    return this.tokenValues(prompts, noActions(prompts));
  }

  /** Passes of at most FEATURE_PASS_ROWS padded rows (a rollout's worth at once, bounded). */
  private prepareOnDevice(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[],
    todo: readonly number[],
  ): void {
    for (const part of passes(todo, (i) => prompts[i]!.length + actions[i]!.length)) {
      const t = tf.tidy(() =>
        this.baseRows(
          part.map((i) => prompts[i]!),
          part.map((i) => actions[i]!),
        ),
      );
      this.pending.push(t);
      let row = 0;
      for (const i of part) {
        const n = rowCount(actions[i]!);
        this.features.set(key(prompts[i]!, actions[i]!), { bank: t, row, n });
        row += n;
      }
    }
  }

  /** One pass, read back: each sample keeps a host copy of its rows. */
  private async prepareOnHost(
    prompts: readonly Int32Array[],
    actions: readonly Int32Array[],
    todo: readonly number[],
  ): Promise<void> {
    const t = tf.tidy(() =>
      this.baseRows(
        todo.map((i) => prompts[i]!),
        todo.map((i) => actions[i]!),
      ),
    );
    const dim = featureSize(this.model.config, this.kind);
    const data = (await t.data()) as Float32Array;
    t.dispose();
    let row = 0;
    for (const i of todo) {
      const n = rowCount(actions[i]!);
      this.features.set(key(prompts[i]!, actions[i]!), data.slice(row * dim, (row + n) * dim));
      row += n;
    }
  }

  /**
   * Frozen-base features for each row (see `action-rows.ts`). Cached rows are reused; others are
   * computed now. The rows come from a few tensors (the device's banks, the rows computed now, or
   * on CPU backends each sample's uploaded host copy), concatenated and gathered with one index,
   * a program or two whatever the number of samples; a concatenation already in order is
   * returned as it is.
   */
  private featureRows(prompts: readonly Int32Array[], actions: readonly Int32Array[]): tf.Tensor2D {
    const dim = featureSize(this.model.config, this.kind);
    const cached = prompts.map((p, i) => this.features.get(key(p, actions[i]!)));
    const missing = prompts.flatMap((_, i) => (cached[i] === undefined ? [i] : []));
    return tf.tidy(() => {
      const fresh = missing.length
        ? this.baseRows(
            missing.map((i) => prompts[i]!),
            missing.map((i) => actions[i]!),
          )
        : null;
      // The tensors the rows come from, in order of first use, and where each starts in their
      // concatenation.
      const sources: tf.Tensor2D[] = [];
      const start = new Map<tf.Tensor2D, number>();
      let rowsIn = 0;
      const firstRow = (t: tf.Tensor2D) => {
        let s = start.get(t);
        if (s === undefined) {
          s = rowsIn;
          rowsIn += t.shape[0];
          start.set(t, s);
          sources.push(t);
        }
        return s;
      };
      const index: number[] = [];
      let freshRow = 0;
      prompts.forEach((_, i) => {
        const n = rowCount(actions[i]!);
        const c = cached[i];
        let from: number;
        if (c instanceof Float32Array) {
          from = firstRow(tf.tensor2d(c, [n, dim]));
        } else if (c) {
          from = firstRow(c.bank) + c.row;
        } else {
          from = firstRow(fresh!) + freshRow;
          freshRow += n;
        }
        for (let k = 0; k < n; k++) index.push(from + k);
      });
      // No stop-gradient needed: the base weights are constants, and the critic's gradients are
      // taken w.r.t. the value-head variables only.
      const all = sources.length === 1 ? sources[0]! : tf.concat(sources, 0);
      // A cached bank is never handed out: the caller owns (and disposes) what is returned.
      const owned = sources.length > 1 || !this.pending.includes(all);
      const inOrder = index.length === all.shape[0] && index.every((r, k) => r === k);
      return owned && inOrder ? all : (tf.gather(all, tf.tensor1d(index, 'int32')) as tf.Tensor2D);
    });
  }

  /**
   * The features at each sample's rows: of the base (adapter off), or through the critic's
   * adapter, or the actor's.
   */
  private baseRows(prompts: readonly Int32Array[], actions: readonly Int32Array[]): tf.Tensor2D {
    const adapter = this.onActor ? (this.model.adapter ?? undefined) : this.adapter;
    return hiddenRows(this.model, prompts, actions, adapter, this.kind);
  }
}
