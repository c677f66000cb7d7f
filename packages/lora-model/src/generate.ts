import { activeFusedOps, type FusedOps, MULTI_TENSOR_KERNELS } from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { checkIds } from './batch.js';
import type { AdapterOption, CausalLM } from './causal-lm.js';
import type { KVCache, SlotCache } from './decoder.js';
import { ModelInputError } from './errors.js';
import { SeededRng } from './rng.js';
import { checkSampling, logSoftmaxAt, type SamplingOptions, sampleToken } from './sampling.js';
import { tidyNested } from './variable.js';

/** Options of {@link generate}. */
export interface GenerateOptions extends SamplingOptions, AdapterOption {
  /** Most tokens to produce. Default 32. */
  maxNewTokens?: number;
  /** Stop after producing any of these ids (the stop token is included in the output). */
  stopTokenIds?: readonly number[];
  /** Seed of the sampler. Default 0. */
  seed?: number;
  /** Reuse the KV cache between steps (default true); false recomputes the whole sequence. */
  useCache?: boolean;
  /**
   * Sample on the device where the backend can (webgpu, without top-p; default true): the logits
   * never come back to the host, the drawn ids feed the next step there, and the keys and values
   * go into a cache allocated once for prompt + maxNewTokens and written in place. The draws are
   * the host sampler's rule with the same uniforms (one per row and token), so a seed gives the
   * host path's tokens up to float32 rounding at the boundaries of a draw. false: the host path
   * everywhere (the logits read at every token). Other backends always sample on the host.
   */
  sampleOnDevice?: boolean;
  /**
   * When sampling on the device: read the drawn ids and log-probs back every this many tokens
   * (default 1), in one read, and end each row at its first stop token then. Rows that stopped
   * are computed until that read and their extra tokens dropped, so the tokens are the same for
   * every value; larger values wait for the GPU less often. Ignored on the host path.
   */
  stopCheckEvery?: number;
}

/** What {@link generate} produced. */
export interface GenerateResult {
  /** The new token ids (without the prompt). */
  tokens: number[];
  /** log π(token | context) over the full vocabulary at temperature 1, per new token. */
  logProbs: number[];
  /** log-probability of each token under the filtered, tempered sampling distribution. */
  samplerLogProbs: number[];
  /** True when a stop token ended generation. */
  stopped: boolean;
}

function disposeCache(c: KVCache | undefined): void {
  for (const e of c ?? []) {
    e.k.dispose();
    e.v.dispose();
  }
}

/** Logits of the last position of one pass over the whole of `ids` (no cache). */
function lastLogits(
  model: CausalLM,
  ids: readonly number[],
  adapter: ReturnType<CausalLM['useAdapter']>,
): tf.Tensor {
  return tf.tidy(() => {
    const out = model.forward({
      ids: Int32Array.from(ids),
      batch: 1,
      seq: ids.length,
      adapter,
      outputRows: [ids.length - 1],
    });
    return model.head(out.hidden);
  });
}

/**
 * Sample a continuation of `prompt` token by token with a KV cache. Seeded: the same seed gives
 * the same tokens. Returns the ids and their temperature-1 full-vocabulary log-probs (what a
 * policy-gradient learner stores) along with the sampler's own log-probs.
 */
export async function generate(
  model: CausalLM,
  prompt: readonly number[],
  opts: GenerateOptions = {},
): Promise<GenerateResult> {
  checkIds('prompt', prompt as number[], model.config.vocabSize, false);
  const maxNew = checkGenerate(opts);
  if (opts.useCache !== false) {
    return (await sampleBatch(model, [prompt], opts, maxNew, [opts.seed ?? 0]))[0]!;
  }
  // Without a cache: the whole sequence again at every step (a reference for the cached path).
  const stops = new Set(opts.stopTokenIds ?? []);
  const rng = new SeededRng(opts.seed ?? 0);
  const adapter = model.useAdapter(opts);
  const res: GenerateResult = { tokens: [], logProbs: [], samplerLogProbs: [], stopped: false };
  const seqIds = [...prompt];
  while (res.tokens.length < maxNew) {
    const out = lastLogits(model, seqIds, adapter);
    const logits = await out.data();
    out.dispose();
    const { token, samplerLogProb } = sampleToken(logits, opts, rng);
    res.tokens.push(token);
    res.logProbs.push(logSoftmaxAt(logits, token));
    res.samplerLogProbs.push(samplerLogProb);
    seqIds.push(token);
    if (stops.has(token)) {
      res.stopped = true;
      break;
    }
  }
  return res;
}

/** Options of {@link generateBatch}: those of {@link generate}, with one seed per prompt. */
export interface GenerateBatchOptions extends Omit<GenerateOptions, 'seed' | 'useCache'> {
  /** Seed of each prompt's sampler (default 0 for every prompt). */
  seeds?: readonly number[];
}

/**
 * {@link generate} for several prompts at once: one decoder pass per new token for all rows
 * still going (prompts of different lengths are right-padded and masked; a row that stops
 * leaves the batch). Row i is what `generate(model, prompts[i], { ...opts, seed: seeds[i] })`
 * gives (same tokens; log-probs to float tolerance, since padded rows sum over more zeros).
 */
export async function generateBatch(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  opts: GenerateBatchOptions = {},
): Promise<GenerateResult[]> {
  prompts.forEach((p, i) => {
    checkIds(`prompts[${i}]`, p as number[], model.config.vocabSize, false);
  });
  const maxNew = checkGenerate(opts);
  const seeds = opts.seeds ?? prompts.map(() => 0);
  if (seeds.length !== prompts.length) {
    throw new ModelInputError(
      'seeds',
      `needs one seed per prompt (${prompts.length}), got ${seeds.length}`,
    );
  }
  return sampleBatch(model, prompts, opts, maxNew, seeds);
}

/** Checks the sampling options and returns the number of new tokens. */
function checkGenerate(
  opts: SamplingOptions & { maxNewTokens?: number; stopCheckEvery?: number },
): number {
  checkSampling(opts);
  const every = opts.stopCheckEvery ?? 1;
  if (!Number.isInteger(every) || every < 1) {
    throw new ModelInputError('stopCheckEvery', `must be an integer >= 1, got ${every}`);
  }
  const maxNew = opts.maxNewTokens ?? 32;
  if (!Number.isInteger(maxNew) || maxNew < 0) {
    throw new ModelInputError('maxNewTokens', `must be an integer >= 0, got ${maxNew}`);
  }
  return maxNew;
}

/** What the batched loops take of the options. */
type LoopOptions = SamplingOptions &
  AdapterOption & {
    stopTokenIds?: readonly number[];
    sampleOnDevice?: boolean;
    stopCheckEvery?: number;
  };

/** The fused ops of the device loop, when the active backend has them all and `opts` allow it. */
type DeviceOps = Required<Pick<FusedOps, 'sampleTokens' | 'cacheAttention' | 'writeCacheSlot'>>;
function deviceOps(opts: LoopOptions): DeviceOps | null {
  if (opts.sampleOnDevice === false || (opts.topP ?? 1) < 1) return null;
  const ops = activeFusedOps();
  if (!ops?.sampleTokens || !ops.cacheAttention || !ops.writeCacheSlot) return null;
  return ops as DeviceOps;
}

/** What both sampling loops start from: stop ids, one generator per row, the adapter, empty results. */
function loopStart(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  opts: LoopOptions,
  seeds: readonly number[],
) {
  return {
    stops: new Set(opts.stopTokenIds ?? []),
    rngs: seeds.map((s) => new SeededRng(s)),
    adapter: model.useAdapter(opts),
    results: prompts.map(
      (): GenerateResult => ({ tokens: [], logProbs: [], samplerLogProbs: [], stopped: false }),
    ),
  };
}

/** The batched sampling loop of {@link generateBatch} on checked input. */
async function sampleBatch(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  opts: LoopOptions,
  maxNew: number,
  seeds: readonly number[],
): Promise<GenerateResult[]> {
  const ops = deviceOps(opts);
  if (ops) return sampleOnDevice(model, prompts, opts, maxNew, seeds, ops);
  const { stops, rngs, adapter, results } = loopStart(model, prompts, opts, seeds);
  if (maxNew === 0 || prompts.length === 0) return results;
  // `rows[r]` is the prompt whose sequence sits in batch row r; `valid[r]` its cached length.
  let rows = prompts.map((_, i) => i);
  let valid = prompts.map((p) => p.length);
  let cache: KVCache | undefined;
  try {
    // Prefill: every prompt at once, right-padded; causal attention keeps a prompt's real
    // positions from seeing its padding, and only each prompt's last position is read.
    const width = Math.max(...valid);
    const ids = new Int32Array(rows.length * width);
    prompts.forEach((p, r) => {
      ids.set(p, r * width);
    });
    let out = tidyNested(() => {
      const o = model.forward({
        ids,
        batch: rows.length,
        seq: width,
        adapter,
        wantCache: true,
        outputRows: valid.map((v) => v - 1),
      });
      return { logits: model.head(o.hidden), cache: o.cache as KVCache };
    });
    cache = out.cache;
    for (;;) {
      const logits = (await out.logits.data()) as Float32Array;
      out.logits.dispose();
      const vocab = logits.length / rows.length;
      const next: number[] = [];
      const keep: number[] = [];
      rows.forEach((i, r) => {
        const row = logits.subarray(r * vocab, (r + 1) * vocab);
        const { token, samplerLogProb } = sampleToken(row, opts, rngs[i]!);
        const res = results[i]!;
        res.tokens.push(token);
        res.logProbs.push(logSoftmaxAt(row, token));
        res.samplerLogProbs.push(samplerLogProb);
        if (stops.has(token)) res.stopped = true;
        else if (res.tokens.length < maxNew) {
          keep.push(r);
          next.push(token);
        }
      });
      if (keep.length === 0) break;
      if (keep.length < rows.length) {
        const old = cache;
        cache = keepRows(cache, keep);
        disposeCache(old);
        rows = keep.map((r) => rows[r]!);
        valid = keep.map((r) => valid[r]!);
      }
      const pastValid = Int32Array.from(valid);
      const past = cache;
      out = tidyNested(() => {
        const o = model.forward({
          ids: Int32Array.from(next),
          batch: rows.length,
          seq: 1,
          past,
          pastValid,
          adapter,
          wantCache: true,
        });
        return {
          logits: model.head(o.hidden),
          cache: compactCache(o.cache as KVCache, valid),
        };
      });
      disposeCache(past);
      cache = out.cache;
      valid = valid.map((v) => v + 1);
    }
  } finally {
    disposeCache(cache);
  }
  return results;
}

/** The cache of batch rows `keep` only. */
function keepRows(cache: KVCache, keep: readonly number[]): KVCache {
  return tf.tidy(() => {
    const idx = tf.tensor1d([...keep], 'int32');
    return cache.map((e) => ({ k: tf.gather(e.k, idx), v: tf.gather(e.v, idx) }));
  }) as unknown as KVCache;
}

/**
 * After a step that appended one slot at the end of a right-padded cache: moves each row's new
 * slot to just after its `valid[r]` real slots, so that the real slots stay a prefix (what the
 * decoder's `pastValid` describes). Rows without padding need no move; when no row has any, the
 * cache is returned as it is.
 */
function compactCache(cache: KVCache, valid: readonly number[]): KVCache {
  const first = cache[0]?.k;
  if (!first) return cache;
  const [batch, heads, slots, dim] = first.shape;
  const last = slots - 1;
  if (valid.every((v) => v === last)) return cache;
  // One flat gather over [batch · heads · slots] rows of `dim`: tfjs-backend-wasm 4.22 gathers
  // wrong values with batchDims 1 (tensorflow/tfjs#8658), so no batched gather here.
  const idx = new Int32Array(batch * heads * slots);
  for (let b = 0; b < batch; b++) {
    const v = valid[b] as number;
    for (let h = 0; h < heads; h++) {
      const base = (b * heads + h) * slots;
      for (let s = 0; s < slots; s++) idx[base + s] = base + (s < v ? s : s === v ? last : s - 1);
    }
  }
  const index = tf.tensor1d(idx, 'int32');
  const move = (t: tf.Tensor4D) =>
    tf.reshape(tf.gather(tf.reshape(t, [batch * heads * slots, dim]), index), [
      batch,
      heads,
      slots,
      dim,
    ]) as tf.Tensor4D;
  return cache.map((e) => ({ k: move(e.k), v: move(e.v) }));
}

/**
 * The loop of {@link sampleBatch} on the device (webgpu): every row stays in the batch until the
 * ids are read (every `stopCheckEvery` tokens), the sampler's ids feed the next step without
 * leaving the GPU, and each step's keys and values are written into a {@link SlotCache} made
 * once from the prefill's cache. The host uploads one uniform per row and token (drawn from the
 * row's generator as the host sampler draws it: none when greedy) and reads
 * ⌈tokens / stopCheckEvery⌉ times.
 */
async function sampleOnDevice(
  model: CausalLM,
  prompts: readonly (readonly number[])[],
  opts: LoopOptions,
  maxNew: number,
  seeds: readonly number[],
  ops: DeviceOps,
): Promise<GenerateResult[]> {
  const { stops, rngs, adapter, results } = loopStart(model, prompts, opts, seeds);
  const n = prompts.length;
  if (maxNew === 0 || n === 0) return results;
  const every = opts.stopCheckEvery ?? 1;
  const temperature = opts.temperature ?? 1;
  const topK = opts.topK && opts.topK > 0 ? opts.topK : 0;
  const lens = prompts.map((p) => p.length);
  const width = Math.max(...lens);
  const finished = prompts.map(() => false);
  let logits: tf.Tensor2D | undefined;
  let ids: tf.Tensor1D | undefined;
  let slots: SlotCache | undefined;
  const pending: tf.Tensor1D[] = [];
  try {
    // Prefill as on the host path, then the cache moved into slots for the whole generation:
    // [batch, kvHeads, width, hd] → [width + maxNew − 1, batch, kvHeads·hd] (the last token
    // drawn is never fed back).
    const flat = new Int32Array(n * width);
    prompts.forEach((p, r) => {
      flat.set(p, r * width);
    });
    const pre = tidyNested(() => {
      const o = model.forward({
        ids: flat,
        batch: n,
        seq: width,
        adapter,
        wantCache: maxNew > 1,
        outputRows: lens.map((v) => v - 1),
      });
      return { logits: model.head(o.hidden), cache: o.cache };
    });
    logits = pre.logits;
    if (pre.cache) {
      const cache = pre.cache;
      slots = tidyNested(() => ({
        layers: cache.map((e) => ({ k: toSlots(e.k, maxNew - 1), v: toSlots(e.v, maxNew - 1) })),
        lens: tf.tensor1d(lens, 'int32'),
        prompt: width,
      }));
      disposeCache(cache);
    }
    for (let step = 0; step < maxNew; step++) {
      // Each row's uniform as its 32 bits (next() is k / 2^32: exact on the device too).
      const u = new Int32Array(n);
      if (temperature > 0) {
        for (let r = 0; r < n; r++) u[r] = ((rngs[r] as SeededRng).next() * 4294967296) | 0;
      }
      const drawn = tidyNested(() =>
        ops.sampleTokens(logits as tf.Tensor2D, tf.tensor1d(u, 'int32'), { temperature, topK }),
      );
      logits.dispose();
      logits = undefined;
      ids?.dispose();
      ids = drawn.ids;
      pending.push(drawn.record);
      const last = step === maxNew - 1;
      if (last || pending.length === every) {
        await readDrawn(pending, n, results, finished, stops, maxNew);
        tf.dispose(pending);
        pending.length = 0;
        if (finished.every((f) => f)) break;
      }
      if (last) break;
      const cache = slots as SlotCache;
      const stepIds = ids;
      logits = tidyNested(() => {
        const o = model.forward({
          ids: stepIds,
          batch: n,
          seq: 1,
          adapter,
          noGrad: true,
          slotStep: { cache, step, positions: lens.map((v) => v + step) },
        });
        return model.head(o.hidden);
      });
    }
  } finally {
    logits?.dispose();
    ids?.dispose();
    tf.dispose(pending);
    if (slots) {
      for (const e of slots.layers) tf.dispose([e.k, e.v]);
      slots.lens.dispose();
    }
  }
  return results;
}

/** A prefill cache entry [batch, kvHeads, len, hd] as slots [len + more, batch, kvHeads·hd]. */
function toSlots(t: tf.Tensor4D, more: number): tf.Tensor3D {
  const [batch, kvHeads, len, hd] = t.shape;
  const slots = tf.reshape(tf.transpose(t, [2, 0, 1, 3]), [len, batch, kvHeads * hd]);
  // A fresh tensor in every case (a pad of nothing could hand back its input).
  return (
    more > 0
      ? tf.pad(slots, [
          [0, more],
          [0, 0],
          [0, 0],
        ])
      : tf.clone(slots)
  ) as tf.Tensor3D;
}

/**
 * Reads the records of the steps drawn since the last read in one host read and appends each
 * row's tokens until its first stop token or `maxNew` tokens (later ones are dropped).
 */
async function readDrawn(
  records: readonly tf.Tensor1D[],
  n: number,
  results: GenerateResult[],
  finished: boolean[],
  stops: ReadonlySet<number>,
  maxNew: number,
): Promise<void> {
  let all: Int32Array;
  if (records.length === 1) {
    all = (await (records[0] as tf.Tensor1D).data()) as Int32Array;
  } else {
    const packed = tf
      .engine()
      .runKernel(MULTI_TENSOR_KERNELS.pack, records as unknown as tf.NamedTensorMap) as tf.Tensor;
    try {
      all = (await packed.data()) as Int32Array;
    } finally {
      packed.dispose();
    }
  }
  const floats = new Float32Array(all.buffer, all.byteOffset, all.length);
  records.forEach((_, j) => {
    const at = 3 * n * j;
    for (let r = 0; r < n; r++) {
      if (finished[r]) continue;
      const res = results[r] as GenerateResult;
      const token = all[at + r] as number;
      res.tokens.push(token);
      res.logProbs.push(floats[at + n + r] as number);
      res.samplerLogProbs.push(floats[at + 2 * n + r] as number);
      if (stops.has(token)) {
        res.stopped = true;
        finished[r] = true;
      } else if (res.tokens.length >= maxNew) finished[r] = true;
    }
  });
}
