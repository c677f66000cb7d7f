import * as tf from '@tensorflow/tfjs-core';

/**
 * Fused forward/backward ops for one backend: on wasm the optional native package
 * (`@poad/tfjs-native`) provides them, on webgpu this package's WGSL kernels. {@link initBackend}
 * installs them; a model (`@poad/lora-model`) asks {@link activeFusedOps} for them and then runs
 * one pass per op instead of a chain of small TF.js kernels. Every op has the same math as the
 * TF.js composition it replaces (tests compare both).
 */
export interface FusedOps {
  /** `x / sqrt(mean(x²) + eps) · weight` over the last axis. */
  rmsNorm(x: tf.Tensor2D, weight: tf.Tensor1D, eps: number): tf.Tensor2D;
  /** `silu(gate) · up`. */
  swiGlu(gate: tf.Tensor2D, up: tf.Tensor2D): tf.Tensor2D;
  /** Rotate-half rotary embedding of `heads` heads side by side; cos/sin are [rows, headDim/2]. */
  rotaryEmbedding(x: tf.Tensor2D, cos: tf.Tensor2D, sin: tf.Tensor2D, heads: number): tf.Tensor2D;
  /**
   * Causal self-attention without a cache: q [batch·seq, heads·hd], k and v
   * [batch·seq, kvHeads·hd] (rows (b, t), heads side by side), an additive mask
   * [batch, seq, seq]; returns [batch·seq, heads·hd]. Optional: older providers lack it.
   */
  attention?(
    q: tf.Tensor2D,
    k: tf.Tensor2D,
    v: tf.Tensor2D,
    mask: tf.Tensor3D,
    opts: { batch: number; heads: number; kvHeads: number },
  ): tf.Tensor2D;
  /**
   * `silu(gate) · up` of one [rows, 2f] tensor holding gate | up side by side (a fused gate|up
   * projection's output, not split): [rows, f]. Optional.
   */
  swiGluJoined?(gateUp: tf.Tensor2D): tf.Tensor2D;
  /** `a + scale · b` (same shapes), differentiable in both. Optional. */
  addScaled?(a: tf.Tensor2D, b: tf.Tensor2D, scale: number): tf.Tensor2D;
  /**
   * Forward-only attention of rows continuing a shared prefix (candidate scoring; no gradient):
   * q [rows·seq, heads·hd] (rotated), own keys/values [rows, kvHeads, seq, hd], prefix keys/values
   * [groups, kvHeads, pre, hd] (row r continues group floor(r / (rows / groups))), an additive
   * mask of rows·seq·(pre + seq) values; returns [rows·seq, heads·hd]. Optional.
   */
  prefixAttention?(
    q: tf.Tensor2D,
    kOwn: tf.Tensor4D,
    vOwn: tf.Tensor4D,
    kPre: tf.Tensor4D,
    vPre: tf.Tensor4D,
    mask: tf.Tensor,
  ): tf.Tensor2D;
  /**
   * q, k and v of a fused q|k|v projection's output `y` [rows, q + k + v]: each part plus
   * `scale` × its LoRA update (`lows.q` [rows, q], …; a missing one adds nothing), then q and k
   * rotated by the rotate-half rotary embedding with per-row tables cos/sin [rows, headDim/2].
   * Differentiable in y and the updates. Optional.
   */
  splitQkv?(
    y: tf.Tensor2D,
    lows: { q?: tf.Tensor2D; k?: tf.Tensor2D; v?: tf.Tensor2D },
    scale: number,
    cos: tf.Tensor2D,
    sin: tf.Tensor2D,
    widths: { q: number; k: number; v: number },
  ): [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
  /**
   * Forward-only attention over packed rows (several sequences one after another, no padding;
   * scoring, no gradient): row r's queries see the key rows `ranges[4r] .. ranges[4r+1]` and
   * `ranges[4r+2] .. ranges[4r+3]` (half-open; e.g. its prompt's rows, then its own rows up to
   * itself). q [rows, heads·hd] (rotated), k and v [rows, kvHeads·hd], ranges int32 [4·rows];
   * returns [rows, heads·hd], zeros for a row that sees no key. Differentiable in q, k and v when
   * `back` gives, the same way, the query rows that see each key row (two half-open ranges per
   * key row: the inverse of `ranges`). Optional.
   */
  rangeAttention?(
    q: tf.Tensor2D,
    k: tf.Tensor2D,
    v: tf.Tensor2D,
    ranges: tf.Tensor1D,
    opts: { kvHeads: number; back?: tf.Tensor1D },
  ): tf.Tensor2D;
  /**
   * One token per row of logits [rows, vocab], drawn on the device as `@poad/lora-model`'s host
   * sampler draws it (temperature, top-k; greedy at temperature 0), with one uniform
   * u = k / 2³² in [0, 1) per row given as the bits of k, int32 [rows] (k = 2³² · u exactly for
   * `SeededRng.next()`; unused when greedy). Returns the ids, int32 [rows], and a record, int32
   * [3·rows]: the ids, then the bits of log π(id) (full vocabulary, temperature 1), then the bits
   * of the id's log-probability under the sampler's distribution (0 when greedy), as float32.
   * Forward only. Optional.
   */
  sampleTokens?(
    logits: tf.Tensor2D,
    u: tf.Tensor1D,
    opts: { temperature: number; topK: number },
  ): { ids: tf.Tensor1D; record: tf.Tensor1D };
  /**
   * Attention of one new query per row over a preallocated cache (generation): q
   * [rows, heads·hd] (rotated), k and v [slots, rows, kvHeads·hd], slot-major (the first
   * `prompt` slots the right-padded prompts, slot prompt + t every row's token t after its
   * prompt), `lens` int32 [rows]; row r attends to its slots 0 .. lens[r] − 1 and
   * prompt .. prompt + extra − 1. Returns [rows, heads·hd]. Forward only. Optional.
   */
  cacheAttention?(
    q: tf.Tensor2D,
    k: tf.Tensor3D,
    v: tf.Tensor3D,
    lens: tf.Tensor1D,
    opts: { heads: number; prompt: number; extra: number },
  ): tf.Tensor2D;
  /**
   * Writes `rows` [rows, width] into slot `slot` of `cache` [slots, rows, width] in place (one
   * buffer copy, no program). The cache must be a tensor no one else holds: TF.js treats tensors
   * as immutable, and every tensor sharing its data sees the write. Optional.
   */
  writeCacheSlot?(cache: tf.Tensor3D, rows: tf.Tensor2D, slot: number): void;
  /** Log-probability of each row's target and the softmax entropy, differentiable. */
  logProbStats(
    logits: tf.Tensor2D,
    targets: Int32Array,
  ): { logProbs: tf.Tensor1D; entropies: tf.Tensor1D };
}

/** Fused ops per backend name. */
const installed = new Map<string, FusedOps>();

/**
 * Use `ops` while `backend` is the active TF.js backend (pass `null` to go back to the TF.js
 * compositions on that backend). Called by {@link initBackend} (the native kernels on wasm, the
 * WGSL kernels on webgpu); exposed for tests and for other providers.
 */
export function setFusedOps(ops: FusedOps | null, backend = 'wasm'): void {
  if (ops) installed.set(backend, ops);
  else installed.delete(backend);
}

/** The fused ops to use now, or null when none are installed for the active backend. */
export function activeFusedOps(): FusedOps | null {
  return installed.get(tf.getBackend()) ?? null;
}
