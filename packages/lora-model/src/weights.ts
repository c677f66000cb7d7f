import {
  decodeBfloat16,
  decodeFloat16,
  encodeBfloat16,
  encodeFloat16,
  LORA_MODULES,
  type LoraModule,
} from '@poad/hf-files';
import { type PackedDtype, packedWeightsSupported, randomPackedNormal } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import type { ModelConfig } from './config.js';
import { ModelInputError } from './errors.js';
import { frozenWeight, type LinearWeight, transposedProductsAreFast } from './linear.js';
import { SeededRng } from './rng.js';
import { toVariable } from './variable.js';

/** Names of the projection modules inside one decoder layer, as in Hugging Face checkpoints. */
export type ModuleName = LoraModule;

/** Every projection module, in checkpoint order. */
export const MODULE_NAMES: readonly ModuleName[] = LORA_MODULES;

/** A host-side float32 tensor: the exchange format with the file layer. */
export interface HostTensor {
  dtype?: string;
  shape: number[];
  data: Float32Array;
  /**
   * An F16 or BF16 tensor's stored 16-bit values (`dtype` says which), as `readCheckpoint`'s
   * `halfBits` gives them: a frozen matrix kept in that precision is packed from them directly,
   * without decoding `data`.
   */
  bits?: Uint16Array;
}

/** `t`'s 16-bit values when they are already in `packed`'s format, else null. */
function halfBitsIn(t: HostTensor, packed: PackedDtype | null): Uint16Array | null {
  if (!t.bits || !packed) return null;
  return (t.dtype === 'BF16' && packed === 'bfloat16') ||
    (t.dtype === 'F16' && packed === 'float16')
    ? t.bits
    : null;
}

/** 16-bit values [rows, cols] (cols even) as a packed int32 [rows, cols/2] tensor, no copy. */
function packedFromBits(bits: Uint16Array, rows: number, cols: number): tf.Tensor2D {
  // Little-endian: value 2c is the low half of word c, the packed layout of @poad/tfjs-kernels.
  const b = bits.byteOffset % 4 === 0 ? bits : bits.slice();
  return tf.tensor2d(
    new Int32Array(b.buffer, b.byteOffset, b.length / 2),
    [rows, cols / 2],
    'int32',
  );
}

/** The fused weight a projection lives in: q/k/v share one matmul, gate/up another. */
export type FusedName = 'qkv' | 'o' | 'gateUp' | 'down';

/**
 * Weights of one decoder layer. Projections that read the same input are fused into one
 * [in, Σout] kernel (q|k|v and gate|up) so each costs one matmul forward and one backward.
 */
export interface LayerWeights {
  inputNorm: tf.Tensor1D;
  postNorm: tf.Tensor1D;
  /** Per-head query RMSNorm weight [headDim] (Qwen3), applied before the rotary embedding. */
  qNorm?: tf.Tensor1D;
  /** Per-head key RMSNorm weight [headDim] (Qwen3). */
  kNorm?: tf.Tensor1D;
  qkv: LinearWeight;
  o: LinearWeight;
  gateUp: LinearWeight;
  down: LinearWeight;
}

/**
 * Precision of the frozen base weights on the device: `auto` keeps a bfloat16 or float16
 * checkpoint's precision on webgpu (two values packed per int32, unpacked inside the kernels with
 * float32 accumulation) and uses float32 elsewhere; `float32` always converts; `bfloat16` and
 * `float16` ask for that storage (webgpu only; a float32 checkpoint is rounded to nearest, ties
 * to even). Norms, biases, LoRA weights, the value head and optimiser state stay float32.
 */
export type WeightDtype = 'auto' | 'float32' | 'bfloat16' | 'float16';

/** Every {@link WeightDtype}, for option parsers. */
export const WEIGHT_DTYPES: readonly WeightDtype[] = ['auto', 'float32', 'bfloat16', 'float16'];

/**
 * The storage a {@link WeightDtype} resolves to for these host tensors on the active backend:
 * `auto` follows the embedding's file dtype (BF16, F16) on webgpu, float32 on other backends and
 * for trainable (full fine-tuning) weights. Throws a {@link ModelInputError} for a 16-bit storage
 * the backend or the training mode cannot use.
 */
export function resolveWeightDtype(
  requested: WeightDtype,
  tensors: ReadonlyMap<string, HostTensor>,
  trainable: boolean,
): 'float32' | PackedDtype {
  if (!WEIGHT_DTYPES.includes(requested)) {
    throw new ModelInputError(
      'weightDtype',
      `"${String(requested)}" is not one of ${WEIGHT_DTYPES.join(', ')}`,
    );
  }
  if (requested === 'float32') return 'float32';
  if (requested === 'auto') {
    if (trainable || !packedWeightsSupported()) return 'float32';
    const file = tensors.get('model.embed_tokens.weight')?.dtype;
    return file === 'BF16' ? 'bfloat16' : file === 'F16' ? 'float16' : 'float32';
  }
  if (trainable) {
    throw new ModelInputError(
      'weightDtype',
      `${requested} weights are frozen storage; full fine-tuning trains float32 weights (use weightDtype "float32" or "auto")`,
    );
  }
  if (!packedWeightsSupported()) {
    throw new ModelInputError(
      'weightDtype',
      `${requested} storage runs on the webgpu backend only (active: ${tf.getBackend()}); use "auto" or "float32" here`,
    );
  }
  return requested;
}

/** A host float32 matrix [rows, cols] as a packed int32 [rows, cols/2] tensor (cols even). */
function packHost(data: Float32Array, rows: number, cols: number, dtype: PackedDtype): tf.Tensor2D {
  const half = new Uint16Array(data.length);
  if (dtype === 'bfloat16') encodeBfloat16(data, half);
  else encodeFloat16(data, half);
  // Little-endian: value 2c is the low half of word c, the packed layout of @poad/tfjs-kernels.
  return tf.tensor2d(new Int32Array(half.buffer), [rows, cols / 2], 'int32');
}

/** The float32 values of a packed weight tensor, read asynchronously. */
export async function unpackHost(t: tf.Tensor, dtype: PackedDtype): Promise<Float32Array> {
  const words = (await t.data()) as Int32Array;
  const half = new Uint16Array(words.buffer, words.byteOffset, words.length * 2);
  const out = new Float32Array(half.length);
  if (dtype === 'bfloat16') decodeBfloat16(half, out);
  else decodeFloat16(half, out);
  return out;
}

/** All weights of the model, on the current backend. */
export interface ModelWeights {
  /** [vocab, hidden] float32, or packed [vocab, hidden/2] when `embedPacked` is set. */
  embed: tf.Tensor2D;
  /** The embedding's 16-bit storage (then the tied LM head reads it packed too). */
  embedPacked?: PackedDtype;
  layers: LayerWeights[];
  finalNorm: tf.Tensor1D;
  /** Absent when the head is tied to a trainable embedding (then computed from `embed`). */
  lmHead?: LinearWeight;
  /** True when every weight is a `tf.Variable` (full fine-tuning). */
  trainable: boolean;
}

/** Where a module's output columns sit inside its fused kernel. */
export function moduleLocation(
  c: ModelConfig,
  m: ModuleName,
): { fused: FusedName; offset: number; width: number } {
  const q = c.numHeads * c.headDim;
  const kv = c.numKVHeads * c.headDim;
  const f = c.intermediateSize;
  switch (m) {
    case 'q_proj':
      return { fused: 'qkv', offset: 0, width: q };
    case 'k_proj':
      return { fused: 'qkv', offset: q, width: kv };
    case 'v_proj':
      return { fused: 'qkv', offset: q + kv, width: kv };
    case 'o_proj':
      return { fused: 'o', offset: 0, width: c.hiddenSize };
    case 'gate_proj':
      return { fused: 'gateUp', offset: 0, width: f };
    case 'up_proj':
      return { fused: 'gateUp', offset: f, width: f };
    case 'down_proj':
      return { fused: 'down', offset: 0, width: c.hiddenSize };
  }
}

/** Modules of each fused weight, in column order. */
export const FUSED_MODULES: Readonly<Record<FusedName, readonly ModuleName[]>> = {
  qkv: ['q_proj', 'k_proj', 'v_proj'],
  o: ['o_proj'],
  gateUp: ['gate_proj', 'up_proj'],
  down: ['down_proj'],
};

/** [in, out] shape of a projection. */
export function moduleShape(c: ModelConfig, m: ModuleName): [number, number] {
  const d = c.hiddenSize;
  switch (m) {
    case 'q_proj':
      return [d, c.numHeads * c.headDim];
    case 'k_proj':
    case 'v_proj':
      return [d, c.numKVHeads * c.headDim];
    case 'o_proj':
      return [c.numHeads * c.headDim, d];
    case 'gate_proj':
    case 'up_proj':
      return [d, c.intermediateSize];
    case 'down_proj':
      return [c.intermediateSize, d];
  }
}

function hasBias(c: ModelConfig, m: ModuleName): boolean {
  if (m === 'q_proj' || m === 'k_proj' || m === 'v_proj') return c.qkvBias;
  if (m === 'o_proj') return c.oBias;
  return false;
}

/** Transpose a row-major [rows, cols] matrix on the host (float32 values or 16-bit ones). */
export function transposeHost<T extends Float32Array | Uint16Array>(
  data: T,
  rows: number,
  cols: number,
): T {
  const out = new (data.constructor as new (n: number) => T)(data.length);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    for (let c = 0; c < cols; c++) out[c * rows + r] = data[base + c] as number;
  }
  return out;
}

/**
 * Hugging Face tensor names and [out, in] / 1-D shapes the model expects, in checkpoint order.
 * Used to validate and to write checkpoints.
 */
export function expectedTensorShapes(c: ModelConfig): Map<string, number[]> {
  const m = new Map<string, number[]>();
  m.set('model.embed_tokens.weight', [c.vocabSize, c.hiddenSize]);
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}`;
    m.set(`${p}.input_layernorm.weight`, [c.hiddenSize]);
    if (c.qkNorm) {
      m.set(`${p}.self_attn.q_norm.weight`, [c.headDim]);
      m.set(`${p}.self_attn.k_norm.weight`, [c.headDim]);
    }
    for (const mod of MODULE_NAMES) {
      const [inD, outD] = moduleShape(c, mod);
      const path = modulePath(i, mod);
      m.set(`${path}.weight`, [outD, inD]);
      if (hasBias(c, mod)) m.set(`${path}.bias`, [outD]);
    }
    m.set(`${p}.post_attention_layernorm.weight`, [c.hiddenSize]);
  }
  m.set('model.norm.weight', [c.hiddenSize]);
  if (!c.tieWordEmbeddings) m.set('lm_head.weight', [c.vocabSize, c.hiddenSize]);
  return m;
}

/** Checkpoint path of a module in layer `i`, e.g. `model.layers.0.self_attn.q_proj`. */
export function modulePath(layer: number, m: ModuleName): string {
  const attn = m === 'q_proj' || m === 'k_proj' || m === 'v_proj' || m === 'o_proj';
  return `model.layers.${layer}.${attn ? 'self_attn' : 'mlp'}.${m}`;
}

/** Thrown by {@link buildWeights} when a tensor is missing or has the wrong shape. */
export class WeightShapeError extends Error {
  readonly tensor: string;
  constructor(tensor: string, message: string) {
    super(`tensor "${tensor}": ${message}`);
    this.name = 'WeightShapeError';
    this.tensor = tensor;
  }
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * The decoder layers of `c`, each part made by `norm` (a norm weight: its checkpoint name and
 * length) or `fused` (a fused projection), in checkpoint order: input norm, post-attention norm,
 * q|k|v, o, gate|up, down, then Qwen3's q and k norms.
 */
function assembleLayers(
  c: ModelConfig,
  norm: (name: string, size: number) => tf.Tensor1D,
  fused: (layer: number, name: FusedName) => LinearWeight,
): LayerWeights[] {
  const layers: LayerWeights[] = [];
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}`;
    const layer: LayerWeights = {
      inputNorm: norm(`${p}.input_layernorm.weight`, c.hiddenSize),
      postNorm: norm(`${p}.post_attention_layernorm.weight`, c.hiddenSize),
      qkv: fused(i, 'qkv'),
      o: fused(i, 'o'),
      gateUp: fused(i, 'gateUp'),
      down: fused(i, 'down'),
    };
    if (c.qkNorm) {
      layer.qNorm = norm(`${p}.self_attn.q_norm.weight`, c.headDim);
      layer.kNorm = norm(`${p}.self_attn.k_norm.weight`, c.headDim);
    }
    layers.push(layer);
  }
  return layers;
}

/**
 * Upload Hugging Face named host tensors ([out, in] linear weights) to the backend.
 * Frozen weights keep both layouts on CPU backends; with `trainable` every weight becomes a
 * `tf.Variable`. `storage` (see {@link resolveWeightDtype}) packs the frozen matrices (projections,
 * embedding, LM head) two 16-bit values per int32; a matrix with an odd number of columns stays
 * float32.
 */
export function buildWeights(
  c: ModelConfig,
  tensors: ReadonlyMap<string, HostTensor>,
  trainable = false,
  storage: 'float32' | PackedDtype = 'float32',
): ModelWeights {
  const packed = storage === 'float32' || trainable ? null : storage;
  const shapes = expectedTensorShapes(c);
  for (const [name, shape] of shapes) {
    const t = tensors.get(name);
    if (!t) throw new WeightShapeError(name, 'missing from the checkpoint');
    if (!sameShape(t.shape, shape)) {
      throw new WeightShapeError(
        name,
        `shape [${t.shape.join(', ')}] does not match the config, expected [${shape.join(', ')}]`,
      );
    }
    const n = shape.reduce((a, b) => a * b, 1);
    const length = (t.bits ?? t.data).length;
    if (length !== n) {
      throw new WeightShapeError(name, `has ${length} values, expected ${n}`);
    }
  }
  const get = (name: string): HostTensor => tensors.get(name) as HostTensor;
  const vec = (name: string): tf.Tensor1D => {
    const t = tf.tensor1d(get(name).data, 'float32');
    return trainable ? toVariable(t) : t;
  };
  /** Upload one weight from its HF [out, in] rows (several modules concatenated). */
  const upload = (
    hfRows: Float32Array,
    inD: number,
    outD: number,
    bias: Float32Array | null,
  ): LinearWeight => {
    const kernelData = transposeHost(hfRows, outD, inD);
    const w: LinearWeight =
      packed && outD % 2 === 0
        ? { kernel: packHost(kernelData, inD, outD, packed), frozen: true, packed }
        : trainable
          ? { kernel: toVariable(tf.tensor2d(kernelData, [inD, outD])) }
          : frozenWeight(
              tf.tensor2d(kernelData, [inD, outD]),
              transposedProductsAreFast() ? undefined : tf.tensor2d(hfRows, [outD, inD]),
            );
    if (bias) {
      const b = tf.tensor1d(bias, 'float32');
      w.bias = trainable ? toVariable(b) : b;
    }
    return w;
  };
  /** A frozen matrix packed from its file's 16-bit rows [outD, inD], or null where it cannot. */
  const packedFromFile = (parts: HostTensor[], inD: number, outD: number): LinearWeight | null => {
    const bits = parts.map((t) => halfBitsIn(t, packed));
    if (!packed || outD % 2 !== 0 || bits.some((b) => b === null)) return null;
    const rows = bits.length === 1 ? bits[0]! : new Uint16Array(outD * inD);
    if (bits.length > 1) {
      let off = 0;
      for (const b of bits) {
        rows.set(b!, off);
        off += b!.length;
      }
    }
    return {
      kernel: packedFromBits(transposeHost(rows, outD, inD), inD, outD),
      frozen: true,
      packed,
    };
  };
  const fused = (layer: number, name: FusedName): LinearWeight => {
    const mods = FUSED_MODULES[name];
    const inD = moduleShape(c, mods[0] as ModuleName)[0];
    const outD = mods.reduce((n, m) => n + moduleShape(c, m)[1], 0);
    let bias: Float32Array | null = null;
    if (hasBias(c, mods[0] as ModuleName)) {
      bias = new Float32Array(outD);
      let bo = 0;
      for (const m of mods) {
        const t = get(`${modulePath(layer, m)}.bias`).data;
        bias.set(t, bo);
        bo += t.length;
      }
    }
    const fromFile = packedFromFile(
      mods.map((m) => get(`${modulePath(layer, m)}.weight`)),
      inD,
      outD,
    );
    if (fromFile) {
      if (bias) fromFile.bias = tf.tensor1d(bias, 'float32');
      return fromFile;
    }
    const rows = new Float32Array(outD * inD);
    let off = 0;
    for (const m of mods) {
      const t = get(`${modulePath(layer, m)}.weight`).data;
      rows.set(t, off);
      off += t.length;
    }
    return upload(rows, inD, outD, bias);
  };
  const embedHost = get('model.embed_tokens.weight');
  const embedPacked = packed && c.hiddenSize % 2 === 0 ? packed : undefined;
  const embedBits = embedPacked ? halfBitsIn(embedHost, embedPacked) : null;
  const embedT = embedBits
    ? packedFromBits(embedBits, c.vocabSize, c.hiddenSize)
    : embedPacked
      ? packHost(embedHost.data, c.vocabSize, c.hiddenSize, embedPacked)
      : tf.tensor2d(embedHost.data, [c.vocabSize, c.hiddenSize]);
  const embed = trainable ? toVariable(embedT) : embedT;
  const layers = assembleLayers(c, (name) => vec(name), fused);
  let lmHead: LinearWeight | undefined;
  if (!c.tieWordEmbeddings) {
    const head = get('lm_head.weight');
    lmHead =
      packedFromFile([head], c.hiddenSize, c.vocabSize) ??
      upload(head.data, c.hiddenSize, c.vocabSize, null);
  } else if (!trainable && !embedPacked) {
    lmHead = tiedFrozenHead(embed);
  }
  const weights: ModelWeights = {
    embed,
    layers,
    finalNorm: vec('model.norm.weight'),
    lmHead,
    trainable,
  };
  if (embedPacked) weights.embedPacked = embedPacked;
  return weights;
}

/** A tensor's float32 values, read asynchronously (GPU backends have no synchronous read). */
export async function readFloats(t: tf.Tensor): Promise<Float32Array> {
  return (await t.data()) as Float32Array;
}

/**
 * Read the weights back as Hugging Face named host tensors ([out, in] linear weights). The reads
 * are asynchronous, so this works on every backend (webgpu included).
 */
export async function exportWeights(
  c: ModelConfig,
  w: ModelWeights,
): Promise<Map<string, HostTensor>> {
  const out = new Map<string, HostTensor>();
  const put = async (name: string, t: tf.Tensor): Promise<void> => {
    out.set(name, { dtype: 'F32', shape: t.shape.slice(), data: await readFloats(t) });
  };
  /** HF [out, in] rows of a weight. */
  const hfRows = async (lw: LinearWeight): Promise<Float32Array> => {
    if (lw.kernelT) return readFloats(lw.kernelT);
    if (lw.transposed) return readFloats(lw.kernel);
    const [inD, cols] = lw.kernel.shape;
    if (lw.packed) return transposeHost(await unpackHost(lw.kernel, lw.packed), inD, 2 * cols);
    return transposeHost(await readFloats(lw.kernel), inD, cols);
  };
  const fileDtype = (p: PackedDtype | undefined): string =>
    p === 'bfloat16' ? 'BF16' : p === 'float16' ? 'F16' : 'F32';
  const putFused = async (layer: number, name: FusedName, lw: LinearWeight): Promise<void> => {
    const rows = await hfRows(lw);
    const bias = lw.bias ? await readFloats(lw.bias) : null;
    for (const m of FUSED_MODULES[name]) {
      const { offset, width } = moduleLocation(c, m);
      const inD = lw.kernel.shape[0];
      const path = modulePath(layer, m);
      out.set(`${path}.weight`, {
        dtype: fileDtype(lw.packed),
        shape: [width, inD],
        data: rows.slice(offset * inD, (offset + width) * inD),
      });
      if (bias)
        out.set(`${path}.bias`, {
          dtype: 'F32',
          shape: [width],
          data: bias.slice(offset, offset + width),
        });
    }
  };
  const embedPacked = w.embedPacked;
  const reads: Promise<void>[] = [
    embedPacked
      ? unpackHost(w.embed, embedPacked).then((data) => {
          out.set('model.embed_tokens.weight', {
            dtype: fileDtype(embedPacked),
            shape: [c.vocabSize, c.hiddenSize],
            data,
          });
        })
      : put('model.embed_tokens.weight', w.embed),
  ];
  w.layers.forEach((layer, i) => {
    reads.push(
      put(`model.layers.${i}.input_layernorm.weight`, layer.inputNorm),
      putFused(i, 'qkv', layer.qkv),
      putFused(i, 'o', layer.o),
      putFused(i, 'gateUp', layer.gateUp),
      putFused(i, 'down', layer.down),
      put(`model.layers.${i}.post_attention_layernorm.weight`, layer.postNorm),
    );
    if (layer.qNorm) reads.push(put(`model.layers.${i}.self_attn.q_norm.weight`, layer.qNorm));
    if (layer.kNorm) reads.push(put(`model.layers.${i}.self_attn.k_norm.weight`, layer.kNorm));
  });
  reads.push(put('model.norm.weight', w.finalNorm));
  const lmHead = w.lmHead;
  if (!c.tieWordEmbeddings && lmHead) {
    reads.push(
      hfRows(lmHead).then((data) => {
        out.set('lm_head.weight', {
          dtype: fileDtype(lmHead.packed),
          shape: [c.vocabSize, c.hiddenSize],
          data,
        });
      }),
    );
  }
  await Promise.all(reads);
  // Keep checkpoint order.
  const ordered = new Map<string, HostTensor>();
  for (const name of expectedTensorShapes(c).keys()) {
    const t = out.get(name);
    if (t) ordered.set(name, t);
  }
  return ordered;
}

/**
 * Random Hugging Face named host tensors for a config: linear weights and embeddings N(0, std),
 * norm weights 1 + N(0, std), biases N(0, std). Deterministic for a given seed.
 */
export function randomHostTensors(
  c: ModelConfig,
  seed: number,
  std = 0.02,
): Map<string, HostTensor> {
  const rng = new SeededRng(seed);
  const out = new Map<string, HostTensor>();
  for (const [name, shape] of expectedTensorShapes(c)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = rng.fillNormal(new Float32Array(n), std);
    if (name.endsWith('norm.weight')) for (let i = 0; i < n; i++) data[i] = 1 + (data[i] as number);
    out.set(name, { dtype: 'F32', shape, data });
  }
  return out;
}

/**
 * Random weights drawn and packed on the device, for a model in 16-bit storage (webgpu): the
 * same distributions as {@link randomHostTensors} (other numbers), with every matrix made by one
 * program (`randomPackedNormal` of `@poad/tfjs-kernels`), so that a model of billions of
 * parameters is built without host random numbers or a host copy. Norms and biases (small) come
 * from TF.js's seeded `randomNormal`.
 */
export function randomDeviceWeights(
  c: ModelConfig,
  seed: number,
  std: number,
  storage: PackedDtype,
): ModelWeights {
  let stream = 0;
  const next = () => (seed * 100_003 + stream++) | 0;
  const normal = (shape: number[]) => tf.randomNormal(shape, 0, std, 'float32', next());
  const norm = (n: number): tf.Tensor1D => tf.tidy(() => tf.add(1, normal([n])) as tf.Tensor1D);
  const packedNormal = (rows: number, cols: number): tf.Tensor2D =>
    randomPackedNormal(rows, cols, storage, { seed: next(), std });
  const matrix = (inD: number, outD: number): LinearWeight =>
    outD % 2 === 0
      ? { kernel: packedNormal(inD, outD), frozen: true, packed: storage }
      : frozenWeight(normal([inD, outD]) as tf.Tensor2D);
  const fused = (name: FusedName): LinearWeight => {
    const mods = FUSED_MODULES[name];
    const first = mods[0] as ModuleName;
    const outD = mods.reduce((n, m) => n + moduleShape(c, m)[1], 0);
    const w = matrix(moduleShape(c, first)[0], outD);
    if (hasBias(c, first)) w.bias = normal([outD]) as tf.Tensor1D;
    return w;
  };
  const packEmbed = c.hiddenSize % 2 === 0;
  const embed = packEmbed
    ? packedNormal(c.vocabSize, c.hiddenSize)
    : (normal([c.vocabSize, c.hiddenSize]) as tf.Tensor2D);
  const layers = assembleLayers(
    c,
    (_name, size) => norm(size),
    (_layer, name) => fused(name),
  );
  const weights: ModelWeights = {
    embed,
    layers,
    finalNorm: norm(c.hiddenSize),
    trainable: false,
  };
  if (!c.tieWordEmbeddings) weights.lmHead = matrix(c.hiddenSize, c.vocabSize);
  else if (!packEmbed) weights.lmHead = tiedFrozenHead(embed);
  if (packEmbed) weights.embedPacked = storage;
  return weights;
}

/**
 * The LM head of a frozen float32 embedding it is tied to: on webgpu the embedding itself,
 * multiplied transposed (no copy); on CPU backends, where transposed products are slow, a
 * transposed copy as the kernel and the embedding as the cached transpose.
 */
function tiedFrozenHead(embed: tf.Tensor2D): LinearWeight {
  return transposedProductsAreFast()
    ? { kernel: embed, frozen: true, transposed: true }
    : { kernel: tf.transpose(embed), kernelT: embed };
}

/** Every tensor owned by the weights (for disposal). */
export function weightTensors(w: ModelWeights): tf.Tensor[] {
  const all: tf.Tensor[] = [w.embed, w.finalNorm];
  for (const l of w.layers) {
    all.push(l.inputNorm, l.postNorm);
    if (l.qNorm) all.push(l.qNorm);
    if (l.kNorm) all.push(l.kNorm);
    for (const p of [l.qkv, l.o, l.gateUp, l.down]) {
      all.push(p.kernel);
      if (p.kernelT) all.push(p.kernelT);
      if (p.bias) all.push(p.bias);
    }
  }
  if (w.lmHead) {
    if (w.lmHead.kernel !== w.embed) all.push(w.lmHead.kernel);
    if (w.lmHead.kernelT && w.lmHead.kernelT !== w.embed) all.push(w.lmHead.kernelT);
  }
  return all;
}
