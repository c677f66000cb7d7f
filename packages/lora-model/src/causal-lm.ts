import type { ModelSnapshot, TextTokenizer } from '@poad/hf-files';
import {
  type ProductChoice,
  type ProductPlan,
  type ProductWeight,
  registerGradients,
  registerSegmentSumKernel,
  type TuneOptions,
  tuneProducts,
  unpackWeight,
} from '@poad/tfjs-kernels';
import * as tf from '@tensorflow/tfjs-core';
import { checkIds } from './batch.js';
import { type HFModelConfig, type ModelConfig, resolveModelConfig } from './config.js';
import { type DecoderInput, type DecoderOutput, decoderForward, lmHead } from './decoder.js';
import { ModelInputError } from './errors.js';
import {
  type BaseFeatures,
  baseFeatures,
  featureSize,
  promptFeatures,
  promptValues,
  tokenValues,
  valuesOf,
} from './features.js';
import {
  type GenerateBatchOptions,
  type GenerateOptions,
  type GenerateResult,
  generate,
  generateBatch,
} from './generate.js';
import { frozenWeight, type LinearWeight } from './linear.js';
import { LoraAdapter, type LoraConfig } from './lora.js';
import { type ScoreOptions, scoreContinuations } from './scoring.js';
import { scoreTokens, type TokenStats, type TokenStatsOptions, tokenStats } from './token-stats.js';
import { ValueHead, type ValueHeadOptions } from './value-head.js';
import {
  buildWeights,
  exportWeights,
  FUSED_MODULES,
  type HostTensor,
  type ModelWeights,
  moduleShape,
  randomDeviceWeights,
  randomHostTensors,
  resolveWeightDtype,
  type WeightDtype,
  weightTensors,
} from './weights.js';

/** Options when building a model. */
export interface CausalLMOptions {
  /** Seed for random initialisation (weights, adapter, value head). Default 0. */
  seed?: number;
  /** Attach a fresh LoRA adapter (`true` for the defaults). */
  lora?: Partial<LoraConfig> | boolean;
  /** Attach a fresh value head (`true` for the default sizes). */
  valueHead?: ValueHeadOptions | boolean;
  /** Make every base weight trainable (full fine-tuning; tiny models only). */
  fullFineTune?: boolean;
  /** Standard deviation of random weights (createCausalLM only). Default 0.02. */
  initStd?: number;
  /**
   * Precision of the frozen base weights on the device (`WeightDtype`): `auto` (default) keeps a
   * bfloat16/float16 checkpoint packed on webgpu and uses float32 on CPU backends.
   */
  weightDtype?: WeightDtype;
}

/**
 * Where a model was loaded from: the folder (or, in a browser, the URL) that was read, and for a
 * model named by Hub id the snapshot it resolved to (repository, revision, commit, cache).
 */
export interface ModelSource {
  folder: string;
  snapshot?: ModelSnapshot;
}

/** Per-call switch for the adapter. */
export interface AdapterOption {
  /** Run the LoRA adapter. Default true when the model has one. */
  adapter?: boolean;
}

/**
 * A LLaMA-family causal language model in TF.js, with an optional LoRA adapter and an optional
 * value head. Linear weights live in [in, out] layout; on CPU backends frozen weights also keep
 * their transpose so gradients use plain matmuls only; on webgpu a bfloat16/float16 checkpoint's
 * frozen matrices stay in 16-bit storage (`weightDtype`). Activations are float32.
 */
export class CausalLM {
  readonly config: ModelConfig;
  weights: ModelWeights;
  adapter: LoraAdapter | null = null;
  valueHead: ValueHead | null = null;
  /** Tokenizer loaded with the checkpoint (`loadCausalLM`), when the folder has one. */
  tokenizer: TextTokenizer | undefined = undefined;
  /** Text of `tokenizer.json` when the model was loaded from a folder that has one. */
  tokenizerJson: string | undefined = undefined;
  /** Fields of the `config.json` the model came from, kept so a save writes them back. */
  sourceConfig: Record<string, unknown> = {};
  /** Where `loadCausalLM` read the model from (undefined for a model built in memory). */
  source: ModelSource | undefined = undefined;
  private seed: number;
  private disposed = false;
  private productChoice: ProductChoice = 'tfjs';

  constructor(config: ModelConfig, weights: ModelWeights, seed = 0) {
    this.config = config;
    this.weights = weights;
    this.seed = seed;
  }

  /** Whether every base weight is trainable. */
  get fullFineTune(): boolean {
    return this.weights.trainable;
  }

  /** Attach a fresh LoRA adapter (A kaiming-uniform from `seed`, B zero), replacing any other. */
  addLora(opts: Partial<LoraConfig> = {}, seed = this.seed + 1): LoraAdapter {
    this.assertLive();
    this.adapter?.dispose();
    this.adapter = LoraAdapter.create(this.config, opts, seed);
    return this.adapter;
  }

  /**
   * Attach a fresh value head, replacing any other: on the final hidden states, or on every
   * layer's with `opts.features` `layers` (its input then `numLayers × hidden` wide).
   */
  addValueHead(opts: ValueHeadOptions = {}, seed = this.seed + 2): ValueHead {
    this.assertLive();
    this.valueHead?.dispose();
    const width = featureSize(this.config, opts.features ?? 'last');
    this.valueHead = ValueHead.create(width, opts, seed);
    return this.valueHead;
  }

  /** Variables the policy optimiser updates: every base weight in full fine-tuning, else the adapter's. */
  policyVariables(): tf.Variable[] {
    const vars: tf.Variable[] = [];
    if (this.weights.trainable) {
      for (const t of weightTensors(this.weights)) vars.push(t as tf.Variable);
    }
    if (this.adapter) vars.push(...this.adapter.variables());
    return vars;
  }

  /** Variables of the value head (the critic optimiser's). */
  valueVariables(): tf.Variable[] {
    return this.valueHead ? this.valueHead.variables() : [];
  }

  /** Resolve the per-call adapter switch. */
  useAdapter(opts?: AdapterOption): LoraAdapter | undefined {
    if (opts?.adapter === false) return undefined;
    return this.adapter ?? undefined;
  }

  /**
   * Low-level pass (call inside `tf.tidy` or a gradient function). Registers the row-scatter
   * kernel the gather gradient needs on wasm before any differentiable pass.
   */
  forward(input: DecoderInput): DecoderOutput {
    this.assertLive();
    registerSegmentSumKernel();
    registerGradients();
    return decoderForward(this.config, this.weights, input);
  }

  /** Vocabulary logits for hidden rows [n, hidden]. */
  head(hidden: tf.Tensor2D): tf.Tensor2D {
    return lmHead(this.weights, hidden);
  }

  /**
   * Logits for a batch of equal-length token sequences, row-major [batch, seq, vocab].
   * Uses the adapter when one is attached (pass `{ adapter: false }` for the base model).
   */
  async logits(batch: number[][], opts?: AdapterOption): Promise<Float32Array> {
    this.assertLive();
    if (!Array.isArray(batch) || batch.length === 0) {
      throw new ModelInputError('batch', 'expected a non-empty array of token id arrays');
    }
    const seq = batch[0]?.length ?? 0;
    batch.forEach((row, i) => {
      checkIds(`batch[${i}]`, row, this.config.vocabSize, false);
      if (row.length !== seq) {
        throw new ModelInputError(
          `batch[${i}]`,
          `length ${row.length} differs from batch[0] length ${seq}; logits() needs equal lengths`,
        );
      }
    });
    const ids = new Int32Array(batch.length * seq);
    for (let i = 0; i < batch.length; i++) ids.set(batch[i] as number[], i * seq);
    const out = tf.tidy(() => {
      const { hidden } = this.forward({
        ids,
        batch: batch.length,
        seq,
        adapter: this.useAdapter(opts),
      });
      return this.head(hidden);
    });
    const data = (await out.data()) as Float32Array;
    out.dispose();
    return data;
  }

  /**
   * Per-token log-probs of each candidate continuing its prompt, result[i][j][k]. Each prompt is
   * run once and its KV cache shared by its candidates (equal to full-sequence scoring).
   */
  scoreContinuations(
    prompts: readonly (readonly number[])[],
    candidatesPerPrompt: readonly (readonly (readonly number[])[])[],
    opts?: ScoreOptions,
  ): Promise<number[][][]> {
    return scoreContinuations(this, prompts, candidatesPerPrompt, opts);
  }

  /**
   * Teacher-forced per-token log-probs and entropies of `actions[i]` after `prompts[i]`,
   * differentiable w.r.t. {@link policyVariables}. Use inside a gradient function.
   */
  tokenStats(
    prompts: readonly (readonly number[])[],
    actions: readonly (readonly number[])[],
    opts?: TokenStatsOptions,
  ): TokenStats {
    return tokenStats(this, prompts, actions, opts);
  }

  /** {@link tokenStats} as numbers (behaviour log-probs of a rollout). */
  scoreTokens(
    prompts: readonly (readonly number[])[],
    actions: readonly (readonly number[])[],
    opts?: AdapterOption & Pick<TokenStatsOptions, 'allowed'>,
  ): Promise<{ logProbs: number[][]; entropies: number[][] }> {
    return scoreTokens(this, prompts, actions, opts);
  }

  /** Frozen-base features before every action token; compute once per rollout, reuse per epoch. */
  baseFeatures(
    prompts: readonly (readonly number[])[],
    actions: readonly (readonly number[])[],
  ): Promise<BaseFeatures> {
    return baseFeatures(this, prompts, actions);
  }

  /** Frozen-base features at the last token of each prompt, [prompts, hidden]. */
  promptFeatures(prompts: readonly (readonly number[])[]): Promise<Float32Array> {
    return promptFeatures(this, prompts);
  }

  /** Value head on feature rows; differentiable w.r.t. {@link valueVariables}. */
  values(features: tf.Tensor2D | BaseFeatures): tf.Tensor1D {
    return valuesOf(this, features);
  }

  /** Per-token values V(o, w_<k) for every action token. */
  tokenValues(
    prompts: readonly (readonly number[])[],
    actions: readonly (readonly number[])[],
  ): Promise<number[][]> {
    return tokenValues(this, prompts, actions);
  }

  /** Bootstrap values V(o) at the end of each prompt. */
  promptValues(prompts: readonly (readonly number[])[]): Promise<number[]> {
    return promptValues(this, prompts);
  }

  /** Sample a continuation with a KV cache (seeded); ids plus their log-probs. */
  generate(prompt: readonly number[], opts?: GenerateOptions): Promise<GenerateResult> {
    return generate(this, prompt, opts);
  }

  /** {@link generate} for several prompts at once, one decoder pass per token for all rows. */
  generateBatch(
    prompts: readonly (readonly number[])[],
    opts?: GenerateBatchOptions,
  ): Promise<GenerateResult[]> {
    return generateBatch(this, prompts, opts);
  }

  /**
   * The frozen float32 weights whose products may run on the package's tiled program instead of
   * TF.js's matmul (webgpu; none on CPU backends, and none packed: those always run tiled), each
   * with the form the model multiplies by it. What `tuneProducts` of `@poad/tfjs-kernels` times.
   */
  frozenProducts(): ProductWeight[] {
    return this.choosable().map((lw) => ({ w: lw.kernel, transposed: lw.transposed === true }));
  }

  /** How the products of {@link frozenProducts} run now (default `tfjs`). */
  get products(): ProductChoice {
    return this.productChoice;
  }

  /**
   * Runs the products of {@link frozenProducts} as `choice` says: TF.js's matmul, the tiled
   * program, or per shape and row count as a measured plan says. Values change only in the last
   * bits of float32 sums; a run that must repeat exactly keeps its plan (the trainer writes it).
   */
  useProducts(choice: ProductChoice): void {
    this.assertLive();
    this.productChoice = choice;
    for (const lw of this.choosable()) lw.products = choice;
  }

  /**
   * Times TF.js's matmul against the tiled program for every shape of {@link frozenProducts} on
   * the active webgpu device, uses the resulting plan and returns it (to save and reuse).
   */
  async tuneProducts(opts: TuneOptions = {}): Promise<ProductPlan> {
    this.assertLive();
    const plan = await tuneProducts(this.frozenProducts(), opts);
    this.useProducts(plan);
    return plan;
  }

  private choosable(): LinearWeight[] {
    const w = this.weights;
    const all = w.layers.flatMap((l) => [l.qkv, l.o, l.gateUp, l.down]);
    if (w.lmHead) all.push(w.lmHead);
    return all.filter((lw) => lw.frozen === true && !lw.packed && !lw.kernelT);
  }

  /**
   * Fold the adapter into the base weights (W ← W + A·B·alpha/r) and drop it. The merged model
   * computes what the adapted model computed. A weight kept in 16-bit storage becomes float32 when
   * merged: rounding W + ΔW back to bfloat16 would lose most of a small LoRA update.
   */
  mergeAdapter(): void {
    this.assertLive();
    const ad = this.adapter;
    if (!ad) return;
    ad.layers.forEach((entry, i) => {
      const layer = this.weights.layers[i];
      if (!layer) return;
      for (const name of ['qkv', 'o', 'gateUp', 'down'] as const) {
        const mods = FUSED_MODULES[name];
        if (!mods.some((m) => entry[m])) continue;
        const lw = layer[name];
        const merged = tf.tidy(() => {
          const deltas = mods.map((m) => {
            const pair = entry[m];
            const [inD, outD] = moduleShape(this.config, m);
            return pair ? tf.mul(tf.matMul(pair.A, pair.B), ad.scale) : tf.zeros([inD, outD]);
          });
          const base = lw.packed ? unpackWeight(lw.kernel, lw.packed) : lw.kernel;
          return tf.add(
            base,
            deltas.length === 1 ? (deltas[0] as tf.Tensor) : tf.concat(deltas, 1),
          );
        }) as tf.Tensor2D;
        if (this.weights.trainable) {
          (lw.kernel as unknown as tf.Variable).assign(merged);
          merged.dispose();
        } else {
          lw.kernel.dispose();
          lw.kernelT?.dispose();
          const frozen = frozenWeight(merged);
          lw.kernel = frozen.kernel;
          lw.kernelT = frozen.kernelT;
          lw.frozen = frozen.frozen;
          delete lw.packed;
          if (!lw.kernelT) lw.products = this.productChoice;
        }
      }
    });
    ad.dispose();
    this.adapter = null;
  }

  /** Base weights as Hugging Face named host tensors ([out, in] linear weights), read asynchronously. */
  exportWeights(): Promise<Map<string, HostTensor>> {
    this.assertLive();
    return exportWeights(this.config, this.weights);
  }

  /** Free every tensor the model owns. */
  dispose(): void {
    if (this.disposed) return;
    for (const t of weightTensors(this.weights)) t.dispose();
    this.adapter?.dispose();
    this.valueHead?.dispose();
    this.adapter = null;
    this.valueHead = null;
    this.disposed = true;
  }

  private assertLive(): void {
    if (this.disposed) throw new ModelInputError('model', 'this model was disposed');
  }
}

/** Build a model from Hugging Face named host tensors and a config. */
export function causalLMFromTensors(
  config: HFModelConfig | ModelConfig,
  tensors: ReadonlyMap<string, HostTensor>,
  opts: CausalLMOptions = {},
): CausalLM {
  const c =
    'hiddenSize' in config ? (config as ModelConfig) : resolveModelConfig(config as HFModelConfig);
  const seed = opts.seed ?? 0;
  const trainable = opts.fullFineTune === true;
  const storage = resolveWeightDtype(opts.weightDtype ?? 'auto', tensors, trainable);
  return withParts(new CausalLM(c, buildWeights(c, tensors, trainable, storage), seed), opts);
}

/** Attach the adapter and value head `opts` ask for. */
function withParts(model: CausalLM, opts: CausalLMOptions): CausalLM {
  const seed = opts.seed ?? 0;
  if (opts.lora) model.addLora(opts.lora === true ? {} : opts.lora, seed + 1);
  if (opts.valueHead) model.addValueHead(opts.valueHead === true ? {} : opts.valueHead, seed + 2);
  return model;
}

/**
 * A randomly initialised model (seeded): linear weights and embeddings N(0, 0.02), norm weights
 * 1 + N(0, 0.02), biases N(0, 0.02). For tests, benchmarks and tiny experiments. With
 * `weightDtype` `bfloat16` or `float16` (webgpu) the weights are drawn and packed on the device,
 * so that billion-parameter shapes need no host copy (other numbers than the float32 model of the
 * same seed).
 */
export function createCausalLM(config: HFModelConfig, opts: CausalLMOptions = {}): CausalLM {
  const c = resolveModelConfig(config);
  const seed = opts.seed ?? 0;
  const std = opts.initStd ?? 0.02;
  const requested = opts.weightDtype ?? 'auto';
  if (requested === 'bfloat16' || requested === 'float16') {
    // 16-bit storage: drawn and packed on the device, no host copy of the whole model.
    const storage = resolveWeightDtype(requested, new Map(), opts.fullFineTune === true);
    if (storage !== 'float32') {
      return withParts(new CausalLM(c, randomDeviceWeights(c, seed, std, storage), seed), opts);
    }
  }
  return causalLMFromTensors(c, randomHostTensors(c, seed, std), opts);
}
