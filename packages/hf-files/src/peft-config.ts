import { CheckpointError } from './errors.js';
import { LORA_MODULES } from './peft-keys.js';

/** File names of a PEFT adapter folder. */
export const ADAPTER_FILES = Object.freeze({
  config: 'adapter_config.json',
  weights: 'adapter_model.safetensors',
});

/**
 * The fields of PEFT's `adapter_config.json` this package reads and writes. Only fields present
 * since early PEFT releases are written, so older PEFT versions load the file.
 */
export interface PeftAdapterConfig {
  /** Always `LORA`. */
  peft_type: 'LORA';
  /** Always `CAUSAL_LM`. */
  task_type: 'CAUSAL_LM';
  /** Rank r of every adapter. */
  r: number;
  /** LoRA alpha; the update is scaled by alpha / r (alpha / √r with `use_rslora`). */
  lora_alpha: number;
  /** Dropout on the adapter input during training. */
  lora_dropout: number;
  /** Module names that carry adapters, e.g. `["q_proj", "v_proj"]`. */
  target_modules: string[];
  /** Always `none`: no bias terms are trained. */
  bias: 'none';
  /** Always false: weights are in PyTorch's [out, in] layout. */
  fan_in_fan_out: false;
  /** The base checkpoint the adapter was trained on. */
  base_model_name_or_path?: string | null;
  /** Layers that carry adapters; null means all. */
  layers_to_transform?: number[] | null;
  /** Scale by alpha / √r instead of alpha / r. */
  use_rslora?: boolean;
  /** Other fields, kept as read. */
  [key: string]: unknown;
}

/** The factor LoRA's B·A update is multiplied by: alpha / r, or alpha / √r with rsLoRA. */
export function loraScaling(
  config: Pick<PeftAdapterConfig, 'r' | 'lora_alpha' | 'use_rslora'>,
): number {
  return config.use_rslora === true
    ? config.lora_alpha / Math.sqrt(config.r)
    : config.lora_alpha / config.r;
}

const isEmpty = (v: unknown): boolean =>
  v == null ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && Object.keys(v as object).length === 0);

/**
 * Validate a parsed `adapter_config.json`, filling PEFT's defaults (r 8, alpha 8, dropout 0).
 * Features this package cannot reproduce (DoRA, per-module ranks, trained biases, extra saved
 * modules, `fan_in_fan_out`) raise a {@link CheckpointError}. A string `target_modules` (a regex
 * or `"all-linear"`) is kept as an empty list here and resolved from the tensor keys on read.
 */
export function parsePeftAdapterConfig(
  json: unknown,
  fileName: string = ADAPTER_FILES.config,
): PeftAdapterConfig {
  const bad = (field: string, msg: string): CheckpointError =>
    new CheckpointError('invalid_config', fileName, `field "${field}" ${msg}`);
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new CheckpointError('invalid_config', fileName, 'adapter config must be a JSON object');
  }
  const c = json as Record<string, unknown>;
  if (c.peft_type !== 'LORA')
    throw bad('peft_type', `must be "LORA", got ${JSON.stringify(c.peft_type)}`);
  const task = c.task_type ?? 'CAUSAL_LM';
  if (task !== 'CAUSAL_LM')
    throw bad('task_type', `must be "CAUSAL_LM", got ${JSON.stringify(task)}`);
  const r = c.r ?? 8;
  if (typeof r !== 'number' || !Number.isSafeInteger(r) || r <= 0) {
    throw bad('r', `must be a positive integer, got ${JSON.stringify(r)}`);
  }
  const alpha = c.lora_alpha ?? 8;
  if (typeof alpha !== 'number' || !Number.isFinite(alpha)) {
    throw bad('lora_alpha', `must be a number, got ${JSON.stringify(alpha)}`);
  }
  const dropout = c.lora_dropout ?? 0;
  if (typeof dropout !== 'number' || !(dropout >= 0 && dropout < 1)) {
    throw bad('lora_dropout', `must be a number in [0, 1), got ${JSON.stringify(dropout)}`);
  }
  let targets: string[];
  if (Array.isArray(c.target_modules) && c.target_modules.every((t) => typeof t === 'string')) {
    targets = [...(c.target_modules as string[])];
    for (const t of targets) {
      if (!(LORA_MODULES as readonly string[]).includes(t)) {
        throw bad('target_modules', `names "${t}", which is not one of ${LORA_MODULES.join(', ')}`);
      }
    }
  } else if (typeof c.target_modules === 'string' || c.target_modules == null) {
    targets = [];
  } else {
    throw bad(
      'target_modules',
      `must be a list of module names, got ${JSON.stringify(c.target_modules)}`,
    );
  }
  if ((c.bias ?? 'none') !== 'none')
    throw bad('bias', `must be "none", got ${JSON.stringify(c.bias)}`);
  if (c.fan_in_fan_out === true) throw bad('fan_in_fan_out', 'must be false ([out, in] weights)');
  if (c.use_dora === true) throw bad('use_dora', 'is true, but DoRA adapters are not supported');
  if (c.lora_bias === true) throw bad('lora_bias', 'is true, but LoRA biases are not supported');
  for (const f of ['rank_pattern', 'alpha_pattern', 'modules_to_save']) {
    if (!isEmpty(c[f]))
      throw bad(
        f,
        `is ${JSON.stringify(c[f])}, which is not supported; only uniform r and alpha without extra saved modules`,
      );
  }
  const layers = c.layers_to_transform;
  let layersToTransform: number[] | null = null;
  if (typeof layers === 'number') layersToTransform = [layers];
  else if (Array.isArray(layers) && layers.every((l) => Number.isSafeInteger(l) && l >= 0)) {
    layersToTransform = [...(layers as number[])];
  } else if (layers != null) {
    throw bad(
      'layers_to_transform',
      `must be a layer index or a list of them, got ${JSON.stringify(layers)}`,
    );
  }
  if (c.use_rslora != null && typeof c.use_rslora !== 'boolean') {
    throw bad('use_rslora', `must be true or false, got ${JSON.stringify(c.use_rslora)}`);
  }
  return {
    ...c,
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    r,
    lora_alpha: alpha,
    lora_dropout: dropout,
    target_modules: targets,
    bias: 'none',
    fan_in_fan_out: false,
    layers_to_transform: layersToTransform,
    use_rslora: c.use_rslora === true,
  };
}
