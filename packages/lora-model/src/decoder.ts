import { activeFusedOps, packedGather, packedMatMul } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { attention, sharedPrefixAttention } from './attention.js';
import type { ModelConfig } from './config.js';
import { rmsNorm, swiGlu } from './layers.js';
import { type LinearWeight, linear, trainableMatMul } from './linear.js';
import type { LoraAdapter } from './lora.js';
import { MASKED, stepMask } from './mask.js';
import { applyRope, type RopeTables, ropeTables } from './rope.js';
import { FUSED_MODULES, type ModelWeights, type ModuleName, moduleLocation } from './weights.js';

/** Keys and values of one layer for every cached position: [batch, kvHeads, len, headDim]. */
export interface KVEntry {
  k: tf.Tensor4D;
  v: tf.Tensor4D;
}

/** One {@link KVEntry} per decoder layer. */
export type KVCache = KVEntry[];

/**
 * A key/value cache preallocated for a whole generation and written in place (webgpu): per
 * layer, keys and values [slots, batch, kvHeads·headDim], slot-major: slots 0 .. prompt − 1 hold
 * the right-padded prompts (row b's first `lens[b]` are real), slot prompt + t every row's t-th
 * token after its prompt, so one step writes one contiguous slot. `lens` is int32 [batch]. TF.js
 * tensors are immutable to everyone else, so such a cache belongs to the generation loop alone
 * and is never handed out.
 */
export interface SlotCache {
  layers: { k: tf.Tensor3D; v: tf.Tensor3D }[];
  lens: tf.Tensor1D;
  /** Slots of the prompts (the longest prompt's length). */
  prompt: number;
}

/** Input of one decoder pass. */
export interface DecoderInput {
  /** Token ids, row-major [batch, seq] (on the host, or an int32 tensor of batch·seq ids). */
  ids: Int32Array | tf.Tensor1D;
  batch: number;
  seq: number;
  /** Cached keys/values of earlier tokens, [batch, kvHeads, pastLen, headDim] per layer. */
  past?: KVCache;
  /** Real (non-padding) cached slots per row; defaults to all of `pastLen`. */
  pastValid?: ArrayLike<number>;
  /** Run the LoRA adapter (when the model has one). */
  adapter?: LoraAdapter;
  /** Training pass: enables LoRA dropout. */
  training?: boolean;
  /**
   * Cache shared by groups of rows: `past` has one row per group and rows g·perGroup ..
   * (g+1)·perGroup − 1 all continue group g (prefix sharing). The cache is never copied per row.
   * Mutually exclusive with `wantCache`.
   */
  sharedPast?: { cache: KVCache; perGroup: number };
  /**
   * Only these positions (one per row, counted within this step) need final hidden states: the
   * last layer then runs attention and MLP for them alone (the cache still covers every
   * position) and `hidden` is [batch, hidden]. For prompt prefill, where only the last token's
   * output is read.
   */
  outputRows?: ArrayLike<number>;
  /** Return the updated cache (past + this step). */
  wantCache?: boolean;
  /**
   * One token per row (seq 1) into a {@link SlotCache}, `step` tokens after the prompt: row b's
   * token sits at position `lens[b] + step` (`positions`, the same numbers on the host), the
   * keys and values of all rows are written into slot prompt + step, and row b attends to its
   * prompt and its tokens up to this one. Needs the fused `cacheAttention` and `writeCacheSlot`
   * (webgpu); excludes `past`, `sharedPast`, `wantCache` and `outputRows`.
   */
  slotStep?: { cache: SlotCache; step: number; positions: ArrayLike<number> };
  /**
   * No gradient is taken through this pass (scoring, generation): forward-only fused kernels may
   * serve it (on webgpu, the prefix-shared attention).
   */
  noGrad?: boolean;
  /**
   * Rows of several sequences packed one after another, without padding (`batch` 1, `seq` the
   * number of rows): row r sits at position `positions[r]` of its sequence and attends to the
   * rows `keys[4r] .. keys[4r+1]` and `keys[4r+2] .. keys[4r+3]` (half-open; e.g. the rows of its
   * prompt, then its own rows up to itself), so prompts and the candidates continuing them run
   * in one pass, through the fused `rangeAttention` (webgpu). Differentiable when `back` gives,
   * the same way, the rows that attend to each row (the inverse of `keys`); forward only
   * (`noGrad`) otherwise. Excludes `past`, `sharedPast`, `wantCache`, `outputRows` and
   * `slotStep`.
   */
  packed?: { positions: ArrayLike<number>; keys: Int32Array; back?: Int32Array };
  /**
   * Also return every layer's output ({@link DecoderOutput.layers}), e.g. for a value head on
   * all layers' hidden states. Excludes `outputRows` (its last layer runs fewer rows).
   */
  allLayers?: boolean;
}

/** Output of one decoder pass. */
export interface DecoderOutput {
  /** Final hidden states after the last norm, [batch·seq, hidden]. */
  hidden: tf.Tensor2D;
  /**
   * With `allLayers`: the residual stream after each decoder layer, first layer first, each
   * [batch·seq, hidden] and before the final norm (`hidden` is the last one through it).
   */
  layers?: tf.Tensor2D[];
  cache?: KVCache;
}

/**
 * LoRA update of module `m` for input `x` before its scale (x·A·B; the caller adds it times
 * `adapter.scale`), or null when the module has no adapter.
 */
function loraLow(
  x: tf.Tensor2D,
  layer: number,
  m: ModuleName,
  input: DecoderInput,
): tf.Tensor2D | null {
  const ad = input.adapter;
  const pair = ad?.layers[layer]?.[m];
  if (!ad || !pair) return null;
  let xin = x;
  const rate = ad.config.dropout;
  if (input.training && rate > 0) {
    xin = tf.dropout(x, rate, undefined, ad.nextDropoutSeed()) as tf.Tensor2D;
  }
  return trainableMatMul(
    trainableMatMul(xin, pair.A as unknown as tf.Tensor2D),
    pair.B as unknown as tf.Tensor2D,
  );
}

/** p + scale·low: one program with an installed `addScaled` (webgpu), else mul then add. */
function addLora(p: tf.Tensor2D, low: tf.Tensor2D, scale: number): tf.Tensor2D {
  const fused = activeFusedOps()?.addScaled;
  return fused ? fused(p, low, scale) : tf.add(p, tf.mul(low, scale));
}

/** Apply a fused weight and split it into its modules' outputs, each with its LoRA update. */
function projectFused(
  c: ModelConfig,
  x: tf.Tensor2D,
  w: LinearWeight,
  mods: readonly ModuleName[],
  layer: number,
  input: DecoderInput,
): tf.Tensor2D[] {
  const y = linear(x, w);
  const parts =
    mods.length === 1
      ? [y]
      : (tf.split(
          y,
          mods.map((m) => moduleLocation(c, m).width),
          1,
        ) as tf.Tensor2D[]);
  return parts.map((p, i) => {
    const low = loraLow(x, layer, mods[i] as ModuleName, input);
    return low && input.adapter ? addLora(p, low, input.adapter.scale) : p;
  });
}
/**
 * Rotated queries and keys, and values, of one layer: the fused q|k|v projection, each part's
 * LoRA update, Qwen3's per-head norms of q and k, and the rotary embedding. With an installed
 * `splitQkv` (webgpu) and no per-head norms, the cut, the updates and the rotations run as one
 * program; otherwise as slices, scaled additions and two rotations.
 */
function queryKeyValue(
  c: ModelConfig,
  x: tf.Tensor2D,
  layer: ModelWeights['layers'][number],
  i: number,
  input: DecoderInput,
  rope: RopeTables,
): { q: tf.Tensor2D; kNew: tf.Tensor2D; vNew: tf.Tensor2D } {
  const split = activeFusedOps()?.splitQkv;
  if (split && rope.fused && !layer.qNorm && !layer.kNorm) {
    const low = (m: ModuleName) => loraLow(x, i, m, input) ?? undefined;
    const [q, kNew, vNew] = split(
      linear(x, layer.qkv),
      { q: low('q_proj'), k: low('k_proj'), v: low('v_proj') },
      input.adapter?.scale ?? 1,
      rope.fused.cos,
      rope.fused.sin,
      {
        q: c.numHeads * c.headDim,
        k: c.numKVHeads * c.headDim,
        v: c.numKVHeads * c.headDim,
      },
    );
    return { q, kNew, vNew };
  }
  const [qRaw, kRaw, vNew] = projectFused(c, x, layer.qkv, FUSED_MODULES.qkv, i, input) as [
    tf.Tensor2D,
    tf.Tensor2D,
    tf.Tensor2D,
  ];
  const qIn = layer.qNorm ? headNorm(qRaw, c.numHeads, c, layer.qNorm) : qRaw;
  const kIn = layer.kNorm ? headNorm(kRaw, c.numKVHeads, c, layer.kNorm) : kRaw;
  return {
    q: applyRope(qIn, c.numHeads, c.headDim, rope),
    kNew: applyRope(kIn, c.numKVHeads, c.headDim, rope),
    vNew,
  };
}

/**
 * RMSNorm of every head of `x` [n, heads·headDim] on its own (Qwen3's q_norm / k_norm): one
 * [n·heads, headDim] norm, so an installed fused RMSNorm runs it.
 */
function headNorm(x: tf.Tensor2D, heads: number, c: ModelConfig, w: tf.Tensor1D): tf.Tensor2D {
  const n = x.shape[0];
  const rows = tf.reshape(x, [n * heads, c.headDim]) as tf.Tensor2D;
  return tf.reshape(rmsNorm(rows, w, c.rmsNormEps), [n, heads * c.headDim]) as tf.Tensor2D;
}

function toHeads(
  x: tf.Tensor2D,
  batch: number,
  seq: number,
  heads: number,
  hd: number,
): tf.Tensor4D {
  return tf.transpose(tf.reshape(x, [batch, seq, heads, hd]), [0, 2, 1, 3]);
}

/** Final projection to vocabulary logits for hidden rows [n, hidden] → [n, vocab]. */
export function lmHead(w: ModelWeights, hidden: tf.Tensor2D): tf.Tensor2D {
  if (w.lmHead) return linear(hidden, w.lmHead);
  // Tied to a packed embedding: hidden · Eᵀ read from the packed rows.
  if (w.embedPacked) return packedMatMul(hidden, w.embed, w.embedPacked, true);
  return trainableMatMul(hidden, tf.transpose(w.embed));
}

/**
 * One pass of the decoder over `seq` new tokens per row, attending to an optional cache.
 * Must run inside `tf.tidy` (or a gradient function); returned tensors belong to the caller.
 */
export function decoderForward(
  c: ModelConfig,
  w: ModelWeights,
  input: DecoderInput,
): DecoderOutput {
  const { batch, seq } = input;
  const shared = input.sharedPast;
  if (shared && (input.past || input.wantCache)) {
    throw new Error('decoderForward: sharedPast cannot be combined with past or wantCache');
  }
  if (shared && input.outputRows) {
    throw new Error('decoderForward: outputRows cannot be combined with sharedPast');
  }
  if (input.allLayers && input.outputRows) {
    throw new Error('decoderForward: allLayers cannot be combined with outputRows');
  }
  if (input.outputRows && input.outputRows.length !== batch) {
    throw new Error('decoderForward: outputRows needs one position per row');
  }
  if (shared && (shared.cache[0]?.k.shape[0] ?? 0) * shared.perGroup !== batch) {
    throw new Error('decoderForward: sharedPast needs batch = cached rows × perGroup');
  }
  const slot = input.slotStep;
  const slotOps = slot ? activeFusedOps() : null;
  if (slot) {
    if (seq !== 1 || shared || input.past || input.wantCache || input.outputRows) {
      throw new Error(
        'decoderForward: slotStep takes one token per row, without past, sharedPast, wantCache or outputRows',
      );
    }
    if (!slotOps?.cacheAttention || !slotOps.writeCacheSlot) {
      throw new Error('decoderForward: slotStep needs the fused cacheAttention and writeCacheSlot');
    }
  }
  const packed = input.packed;
  const packedOp = packed ? activeFusedOps()?.rangeAttention : undefined;
  if (packed) {
    if (batch !== 1 || shared || input.past || input.wantCache || input.outputRows || slot) {
      throw new Error(
        'decoderForward: packed rows take batch 1, without past, sharedPast, wantCache, outputRows or slotStep',
      );
    }
    if (!input.noGrad && !packed.back) {
      throw new Error('decoderForward: packed rows without `back` are forward only (noGrad)');
    }
    if (!packedOp) throw new Error('decoderForward: packed rows need the fused rangeAttention');
    if (
      packed.positions.length !== seq ||
      packed.keys.length !== 4 * seq ||
      (packed.back && packed.back.length !== 4 * seq)
    ) {
      throw new Error('decoderForward: packed rows need one position and 4 key bounds per row');
    }
  }
  const pastLen = (shared ? shared.cache[0]?.k.shape[2] : input.past?.[0]?.k.shape[2]) ?? 0;
  // A slot step and packed rows read their keys by range: they make no mask (null there; every
  // path reading the mask is one they do not take).
  const { positions, mask } = slot
    ? { positions: Int32Array.from(slot.positions), mask: null }
    : packed
      ? { positions: Int32Array.from(packed.positions), mask: null }
      : stepMask(batch, seq, pastLen, input.pastValid ?? null);
  const keyRanges = packed ? tf.tensor1d(packed.keys, 'int32') : null;
  const backRanges = packed?.back ? tf.tensor1d(packed.back, 'int32') : undefined;
  const rope = ropeTables(positions, c.headDim, c.ropeTheta, c.ropeScaling);
  const ids = input.ids instanceof Int32Array ? tf.tensor1d(input.ids, 'int32') : input.ids;
  let h: tf.Tensor2D = w.embedPacked
    ? packedGather(w.embed, ids, w.embedPacked)
    : tf.gather(w.embed, ids);
  const cache: KVCache = [];
  const layers: tf.Tensor2D[] = [];
  // The fused attention op covers a plain pass (training, full-sequence scoring): no cache in or
  // out, every position kept.
  const fusedAttention =
    !shared && !slot && !packed && pastLen === 0 && !input.wantCache && !input.outputRows
      ? activeFusedOps()?.attention
      : undefined;
  const mask3 = fusedAttention ? (tf.reshape(mask!, [batch, seq, seq]) as tf.Tensor3D) : null;
  for (let i = 0; i < c.numLayers; i++) {
    const layer = w.layers[i];
    if (!layer) throw new Error(`decoder: missing weights for layer ${i}`);
    const x = rmsNorm(h, layer.inputNorm, c.rmsNormEps);
    const { q, kNew, vNew } = queryKeyValue(c, x, layer, i, input, rope);
    let attn: tf.Tensor2D;
    const slotLayer = slot?.cache.layers[i];
    if (slot && slotOps?.cacheAttention && slotOps.writeCacheSlot) {
      if (!slotLayer) throw new Error(`decoder: the slot cache lacks layer ${i}`);
      const at = slot.cache.prompt + slot.step;
      slotOps.writeCacheSlot(slotLayer.k, kNew, at);
      slotOps.writeCacheSlot(slotLayer.v, vNew, at);
      attn = slotOps.cacheAttention(q, slotLayer.k, slotLayer.v, slot.cache.lens, {
        heads: c.numHeads,
        prompt: slot.cache.prompt,
        extra: slot.step + 1,
      });
    } else if (packedOp && keyRanges) {
      attn = packedOp(q, kNew, vNew, keyRanges, {
        kvHeads: c.numKVHeads,
        ...(backRanges ? { back: backRanges } : {}),
      });
    } else if (fusedAttention && mask3) {
      attn = fusedAttention(q, kNew, vNew, mask3, {
        batch,
        heads: c.numHeads,
        kvHeads: c.numKVHeads,
      });
    } else {
      let k = toHeads(kNew, batch, seq, c.numKVHeads, c.headDim);
      let v = toHeads(vNew, batch, seq, c.numKVHeads, c.headDim);
      const pre = shared?.cache[i];
      if (pre) {
        const prefixOp = input.noGrad ? activeFusedOps()?.prefixAttention : undefined;
        attn = prefixOp
          ? prefixOp(q, k, v, pre.k, pre.v, mask!)
          : sharedPrefixAttention(c, q, k, v, pre.k, pre.v, mask!, batch, seq);
      } else {
        const past = input.past?.[i];
        if (past && pastLen > 0) {
          k = tf.concat([past.k, k], 2);
          v = tf.concat([past.v, v], 2);
        }
        if (input.wantCache) cache.push({ k, v });
        if (input.outputRows && i === c.numLayers - 1) {
          // Last layer: only the requested rows go on.
          const sel = tf.tensor1d(
            Array.from(input.outputRows, (pos, b) => b * seq + pos),
            'int32',
          );
          const qSel = tf.gather(q, sel) as tf.Tensor2D;
          h = tf.gather(h, sel) as tf.Tensor2D;
          const keys = pastLen + seq;
          const m = new Float32Array(batch * keys);
          for (let b = 0; b < batch; b++) {
            const valid = input.pastValid ? (input.pastValid[b] as number) : pastLen;
            const pos = input.outputRows[b] as number;
            for (let j = 0; j < keys; j++) {
              const ok = j < pastLen ? j < valid : j - pastLen <= pos;
              if (!ok) m[b * keys + j] = MASKED;
            }
          }
          attn = attention(c, qSel, k, v, tf.tensor(m, [batch, 1, 1, 1, keys]), batch, 1);
        } else {
          attn = attention(c, q, k, v, mask!, batch, seq);
        }
      }
    }
    h = tf.add(h, projectFused(c, attn, layer.o, FUSED_MODULES.o, i, input)[0] as tf.Tensor2D);
    const y = rmsNorm(h, layer.postNorm, c.rmsNormEps);
    // Without LoRA on gate or up, an installed joined SwiGLU reads the fused gate|up output as it
    // is (no split forward, no concatenation of the two gradients backward).
    const joined = activeFusedOps()?.swiGluJoined;
    const mlpLora = input.adapter?.layers[i];
    let act: tf.Tensor2D;
    if (joined && !mlpLora?.gate_proj && !mlpLora?.up_proj) {
      act = joined(linear(y, layer.gateUp));
    } else {
      const [gate, up] = projectFused(c, y, layer.gateUp, FUSED_MODULES.gateUp, i, input) as [
        tf.Tensor2D,
        tf.Tensor2D,
      ];
      act = swiGlu(gate, up);
    }
    h = tf.add(h, projectFused(c, act, layer.down, FUSED_MODULES.down, i, input)[0] as tf.Tensor2D);
    if (input.allLayers) layers.push(h);
  }
  const hidden = rmsNorm(h, w.finalNorm, c.rmsNormEps);
  return {
    hidden,
    ...(input.wantCache ? { cache } : {}),
    ...(input.allLayers ? { layers } : {}),
  };
}
