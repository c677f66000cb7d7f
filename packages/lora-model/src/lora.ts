import * as tf from '@tensorflow/tfjs-core';
import type { ModelConfig } from './config.js';
import { ModelConfigError } from './errors.js';
import { SeededRng } from './rng.js';
import { toVariable } from './variable.js';
import { MODULE_NAMES, type ModuleName, moduleShape } from './weights.js';

/** LoRA hyper-parameters (PEFT names in comments). */
export interface LoraConfig {
  /** Rank `r`. Default 8. */
  r: number;
  /** `lora_alpha`. Default 16; the update is scaled by alpha / r. */
  alpha: number;
  /** `lora_dropout`, applied to the adapter input in training passes only. Default 0. */
  dropout: number;
  /** `target_modules`. Default q_proj and v_proj. */
  targetModules: ModuleName[];
  /** `layers_to_transform`: layers that carry adapters; null (default) means every layer. */
  layers?: number[] | null;
  /** `use_rslora`: scale by alpha / √r instead of alpha / r. Default false. */
  useRslora?: boolean;
}

/** The defaults used by the POAD paper: r 8, alpha 16, dropout 0, q_proj and v_proj. */
export const DEFAULT_LORA_CONFIG: Readonly<LoraConfig> = Object.freeze({
  r: 8,
  alpha: 16,
  dropout: 0,
  targetModules: ['q_proj', 'v_proj'] as ModuleName[],
});

/** One low-rank pair in TF.js layout: A is [in, r], B is [r, out]. */
export interface LoraPair {
  A: tf.Variable;
  B: tf.Variable;
}

/** Fill in and check LoRA options. */
export function resolveLoraConfig(opts: Partial<LoraConfig> = {}): LoraConfig {
  const c: LoraConfig = {
    r: opts.r ?? DEFAULT_LORA_CONFIG.r,
    alpha: opts.alpha ?? DEFAULT_LORA_CONFIG.alpha,
    dropout: opts.dropout ?? DEFAULT_LORA_CONFIG.dropout,
    targetModules: [...(opts.targetModules ?? DEFAULT_LORA_CONFIG.targetModules)],
    layers: opts.layers == null ? null : [...opts.layers],
    useRslora: opts.useRslora === true,
  };
  if (!Number.isInteger(c.r) || c.r <= 0) {
    throw new ModelConfigError('lora.r', `must be a positive integer, got ${c.r}`);
  }
  if (!(c.alpha > 0)) throw new ModelConfigError('lora.alpha', `must be > 0, got ${c.alpha}`);
  if (!(c.dropout >= 0 && c.dropout < 1)) {
    throw new ModelConfigError('lora.dropout', `must be in [0, 1), got ${c.dropout}`);
  }
  if (c.layers?.some((l) => !Number.isInteger(l) || l < 0)) {
    throw new ModelConfigError(
      'lora.layers',
      `layer indices must be integers >= 0, got ${c.layers}`,
    );
  }
  if (c.targetModules.length === 0) {
    throw new ModelConfigError('lora.targetModules', 'name at least one module');
  }
  for (const m of c.targetModules) {
    if (!MODULE_NAMES.includes(m)) {
      throw new ModelConfigError(
        'lora.targetModules',
        `unknown module "${m}"; choose from ${MODULE_NAMES.join(', ')}`,
      );
    }
  }
  return c;
}

/**
 * A LoRA adapter over every decoder layer: `y = x·W + (x·A)·B · alpha/r`. A starts
 * kaiming-uniform (a = √5, i.e. U(±1/√in), as PEFT) and B at zero, so a fresh adapter leaves the
 * model unchanged.
 */
export class LoraAdapter {
  readonly config: LoraConfig;
  readonly scale: number;
  readonly layers: Array<Partial<Record<ModuleName, LoraPair>>>;
  private dropoutRng: SeededRng;

  private constructor(
    config: LoraConfig,
    layers: Array<Partial<Record<ModuleName, LoraPair>>>,
    seed: number,
  ) {
    this.config = config;
    this.scale = config.useRslora ? config.alpha / Math.sqrt(config.r) : config.alpha / config.r;
    this.layers = layers;
    this.dropoutRng = new SeededRng(seed ^ 0x5bd1e995);
  }

  /** A fresh adapter for a model configuration. */
  static create(model: ModelConfig, opts: Partial<LoraConfig> = {}, seed = 0): LoraAdapter {
    const cfg = resolveLoraConfig(opts);
    const rng = new SeededRng(seed);
    const layers: Array<Partial<Record<ModuleName, LoraPair>>> = [];
    for (let i = 0; i < model.numLayers; i++) {
      const entry: Partial<Record<ModuleName, LoraPair>> = {};
      layers.push(entry);
      if (cfg.layers && !cfg.layers.includes(i)) continue;
      for (const m of MODULE_NAMES) {
        if (!cfg.targetModules.includes(m)) continue;
        const [inD, outD] = moduleShape(model, m);
        const a = rng.fillUniform(new Float32Array(inD * cfg.r), 1 / Math.sqrt(inD));
        entry[m] = {
          A: toVariable(tf.tensor2d(a, [inD, cfg.r])),
          B: toVariable(tf.zeros([cfg.r, outD])),
        };
      }
    }
    return new LoraAdapter(cfg, layers, seed);
  }

  /**
   * Build from host weights in TF.js layout (A [in, r], B [r, out]) keyed by layer and module.
   */
  static fromHost(
    model: ModelConfig,
    opts: Partial<LoraConfig>,
    get: (layer: number, module: ModuleName) => { A: Float32Array; B: Float32Array },
    seed = 0,
  ): LoraAdapter {
    const cfg = resolveLoraConfig(opts);
    const layers: Array<Partial<Record<ModuleName, LoraPair>>> = [];
    for (let i = 0; i < model.numLayers; i++) {
      const entry: Partial<Record<ModuleName, LoraPair>> = {};
      layers.push(entry);
      if (cfg.layers && !cfg.layers.includes(i)) continue;
      for (const m of cfg.targetModules) {
        const [inD, outD] = moduleShape(model, m);
        const { A, B } = get(i, m);
        entry[m] = {
          A: toVariable(tf.tensor2d(A, [inD, cfg.r])),
          B: toVariable(tf.tensor2d(B, [cfg.r, outD])),
        };
      }
    }
    return new LoraAdapter(cfg, layers, seed);
  }

  /** The trainable variables, layer by layer, A before B. */
  variables(): tf.Variable[] {
    const out: tf.Variable[] = [];
    for (const l of this.layers) {
      for (const m of MODULE_NAMES) {
        const p = l[m];
        if (p) out.push(p.A, p.B);
      }
    }
    return out;
  }

  /** A fresh seed for one dropout mask (deterministic sequence). */
  nextDropoutSeed(): number {
    return this.dropoutRng.nextUint32();
  }

  /** Free every variable. */
  dispose(): void {
    for (const v of this.variables()) v.dispose();
  }
}
