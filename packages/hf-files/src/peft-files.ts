import { CheckpointError } from './errors.js';
import type { LlamaConfig } from './llama-config.js';
import { ADAPTER_FILES, type PeftAdapterConfig, parsePeftAdapterConfig } from './peft-config.js';
import {
  LORA_MODULES,
  type LoraModule,
  loraModuleShape,
  parsePeftKey,
  peftKey,
} from './peft-keys.js';
import {
  serializeSafetensors,
  sortedTensorEntries,
  type TensorInputs,
} from './safetensors-write.js';

// PEFT LoRA adapters in memory: validation and the contents of the two files (peft.ts reads and
// writes the folder).

/**
 * Check adapter tensors against their config (and the base model's config, when given): every key
 * a PEFT LoRA key, A and B in pairs, A [r, in] and B [out, r], modules among `target_modules`, and
 * with a base config every targeted layer present. Returns the adapted (layer, module) pairs.
 */
export function validatePeftTensors(
  config: PeftAdapterConfig,
  tensors: ReadonlyMap<string, { shape: readonly number[] }>,
  baseConfig?: LlamaConfig,
  fileName: string = ADAPTER_FILES.weights,
): { layer: number; module: LoraModule }[] {
  const pairs = new Map<string, { layer: number; module: LoraModule; A?: string; B?: string }>();
  for (const [key, t] of tensors) {
    const p = parsePeftKey(key);
    if (p === null) {
      throw new CheckpointError(
        'invalid_tensor',
        fileName,
        'is not a LoRA weight of a LLaMA layer (expected base_model.model.model.layers.<i>.<self_attn|mlp>.<module>.lora_<A|B>.weight)',
        key,
      );
    }
    if (config.target_modules.length > 0 && !config.target_modules.includes(p.module)) {
      throw new CheckpointError(
        'invalid_config',
        fileName,
        `module ${p.module} is not in target_modules [${config.target_modules.join(', ')}]`,
        key,
      );
    }
    const id = `${p.layer}.${p.module}`;
    const entry = pairs.get(id) ?? { layer: p.layer, module: p.module };
    entry[p.which] = key;
    pairs.set(id, entry);
    const dims = baseConfig === undefined ? undefined : loraModuleShape(baseConfig, p.module);
    if (baseConfig !== undefined && p.layer >= baseConfig.num_hidden_layers) {
      throw new CheckpointError(
        'shape_mismatch',
        fileName,
        `layer ${p.layer} does not exist: the base model has ${baseConfig.num_hidden_layers} layers`,
        key,
      );
    }
    const want =
      p.which === 'A' ? [config.r, dims?.in ?? t.shape[1]] : [dims?.out ?? t.shape[0], config.r];
    if (t.shape.length !== 2 || t.shape[0] !== want[0] || t.shape[1] !== want[1]) {
      throw new CheckpointError(
        'shape_mismatch',
        fileName,
        `shape [${t.shape.join(', ')}] does not match [${want.join(', ')}] (lora_${p.which} is ${p.which === 'A' ? '[r, in]' : '[out, r]'} with r = ${config.r})`,
        key,
      );
    }
  }
  for (const e of pairs.values()) {
    for (const w of ['A', 'B'] as const) {
      if (e[w] === undefined) {
        throw new CheckpointError(
          'missing_tensor',
          fileName,
          `lora_${w} is missing for this adapter pair`,
          peftKey(e.layer, e.module, w),
        );
      }
    }
  }
  if (baseConfig !== undefined) {
    const layers = config.layers_to_transform ?? [...Array(baseConfig.num_hidden_layers).keys()];
    for (const layer of layers) {
      for (const m of config.target_modules) {
        if (!pairs.has(`${layer}.${m}`)) {
          throw new CheckpointError(
            'missing_tensor',
            fileName,
            `target_modules names ${m} but layer ${layer} has no adapter for it`,
            peftKey(layer, m, 'A'),
          );
        }
      }
    }
  }
  return [...pairs.values()]
    .map(({ layer, module }) => ({ layer, module }))
    .sort(
      (a, b) =>
        a.layer - b.layer || LORA_MODULES.indexOf(a.module) - LORA_MODULES.indexOf(b.module),
    );
}

/**
 * The contents of a PEFT LoRA adapter folder that Python PEFT loads: `adapter_model.safetensors`
 * (float32, PEFT keys, A [r, in] and B [out, r]) and a minimal `adapter_config.json` with only
 * long-standing fields. Validates everything first (see {@link validatePeftTensors});
 * `options.dir` names the folder in error messages.
 */
export function peftAdapterFiles(
  config: PeftAdapterConfig,
  tensors: TensorInputs,
  options: { baseConfig?: LlamaConfig; dir?: string } = {},
): { config: string; weights: Uint8Array } {
  const at = (name: string) => (options.dir ? `${options.dir.replace(/\/$/, '')}/${name}` : name);
  const configPath = at(ADAPTER_FILES.config);
  const c = parsePeftAdapterConfig(config, configPath);
  const map = new Map(sortedTensorEntries(tensors));
  const pairs = validatePeftTensors(c, map, options.baseConfig, at(ADAPTER_FILES.weights));
  for (const key of map.keys()) {
    const p = parsePeftKey(key)!;
    if (key !== peftKey(p.layer, p.module, p.which)) {
      throw new CheckpointError(
        'invalid_tensor',
        at(ADAPTER_FILES.weights),
        `write keys without the adapter name, as ${peftKey(p.layer, p.module, p.which)}`,
        key,
      );
    }
  }
  const targets =
    c.target_modules.length > 0
      ? c.target_modules
      : LORA_MODULES.filter((m) => pairs.some((p) => p.module === m));
  const out: Record<string, unknown> = {
    base_model_name_or_path: c.base_model_name_or_path ?? null,
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layers_pattern: null,
    layers_to_transform: c.layers_to_transform ?? null,
    lora_alpha: c.lora_alpha,
    lora_dropout: c.lora_dropout,
    modules_to_save: null,
    peft_type: 'LORA',
    r: c.r,
    revision: null,
    target_modules: targets,
    task_type: 'CAUSAL_LM',
  };
  if (c.use_rslora === true) out.use_rslora = true;
  return {
    config: `${JSON.stringify(out, null, 2)}\n`,
    weights: serializeSafetensors(new Map(map)),
  };
}
