import {
  ADAPTER_FILES,
  CheckpointError,
  checkTokenizerVocab,
  type LlamaConfig,
  type PeftAdapterConfig,
  parseLlamaConfig,
  parseSafetensors,
  peftAdapterFiles,
  peftKey,
  serializeSafetensors,
  tokenizerFromJson,
  validateLlamaTensors,
} from '@poad/hf-files';
import { readTensors } from '@poad/tfjs-kernels';
import { type CausalLM, type CausalLMOptions, causalLMFromTensors } from './causal-lm.js';
import { toHFConfig } from './config.js';
import { ModelConfigError } from './errors.js';
import type { LoraAdapter } from './lora.js';
import { type HostTensor, MODULE_NAMES, moduleShape, transposeHost } from './weights.js';

// Model files as bytes and text in memory: what the folder functions of checkpoint.ts read and
// write, without a file system (browsers, downloads, uploads).

/** File name of the saved critic head. */
export const VALUE_HEAD_FILE = 'value_head.safetensors';

/** The model's configuration as a validated Hugging Face `config.json` object. */
export function llamaConfigOf(model: CausalLM): LlamaConfig {
  return parseLlamaConfig({ ...model.sourceConfig, ...toHFConfig(model.config) }, 'config.json');
}

/** Options of {@link saveAdapter} and {@link peftAdapterOf}. */
export interface SaveAdapterOptions {
  /** Recorded as `base_model_name_or_path` in `adapter_config.json`. */
  baseModelNameOrPath?: string | null;
  /**
   * The adapter to write, when not the attached one (e.g. ETPO's critic, a second adapter on the
   * same base model).
   */
  adapter?: LoraAdapter;
}

/**
 * The attached LoRA adapter (or `options.adapter`) in PEFT's layout: `adapter_config.json`'s
 * object and the `[r, in]` / `[out, r]` tensors of `adapter_model.safetensors`.
 */
export async function peftAdapterOf(
  model: CausalLM,
  options: SaveAdapterOptions = {},
): Promise<{ config: PeftAdapterConfig; tensors: Map<string, HostTensor> }> {
  const ad = options.adapter ?? model.adapter;
  if (!ad)
    throw new ModelConfigError(
      'adapter',
      'the model has no LoRA adapter to save; call addLora() first',
    );
  const tensors = new Map<string, HostTensor>();
  const r = ad.config.r;
  const pairs = [...ad.layers.entries()].flatMap(([layer, entry]) =>
    MODULE_NAMES.flatMap((m) => {
      const pair = entry[m];
      return pair ? [{ layer, m, pair }] : [];
    }),
  );
  // All matrices in one read (one host read on webgpu).
  const data = await readTensors(pairs.flatMap(({ pair }) => [pair.A, pair.B]));
  pairs.forEach(({ layer, m }, k) => {
    const [inD, outD] = moduleShape(model.config, m);
    tensors.set(peftKey(layer, m, 'A'), {
      shape: [r, inD],
      data: transposeHost(data[2 * k]!, inD, r),
    });
    tensors.set(peftKey(layer, m, 'B'), {
      shape: [outD, r],
      data: transposeHost(data[2 * k + 1]!, r, outD),
    });
  });
  const config: PeftAdapterConfig = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    r,
    lora_alpha: ad.config.alpha,
    lora_dropout: ad.config.dropout,
    target_modules: [...ad.config.targetModules],
    bias: 'none',
    fan_in_fan_out: false,
    base_model_name_or_path: options.baseModelNameOrPath ?? null,
    layers_to_transform: ad.config.layers ?? null,
    use_rslora: ad.config.useRslora === true,
  };
  return { config, tensors };
}

/**
 * The files of a PEFT adapter folder as their contents: `adapter_config.json` (text) and
 * `adapter_model.safetensors` (bytes), e.g. to offer for download. Python PEFT loads them.
 */
export async function adapterFiles(
  model: CausalLM,
  options: SaveAdapterOptions = {},
): Promise<Record<string, string | Uint8Array>> {
  const { config, tensors } = await peftAdapterOf(model, options);
  const files = peftAdapterFiles(config, tensors, { baseConfig: llamaConfigOf(model) });
  return { [ADAPTER_FILES.config]: files.config, [ADAPTER_FILES.weights]: files.weights };
}

/** `value_head.safetensors`'s bytes (`v_head.{0,2,4}.weight`, [out, in]). */
export async function valueHeadFile(model: CausalLM): Promise<Uint8Array> {
  if (!model.valueHead) {
    throw new ModelConfigError(
      'valueHead',
      'the model has no value head to save; call addValueHead() first',
    );
  }
  return serializeSafetensors(await model.valueHead.toHost());
}

/** The contents of a Hugging Face model folder, for {@link causalLMFromFiles}. */
export interface ModelFiles {
  /** `config.json`: its text or parsed object. */
  config: string | Record<string, unknown>;
  /** `model.safetensors` (or every shard). */
  weights: Uint8Array | readonly Uint8Array[];
  /** `tokenizer.json`'s text, when the model has one. */
  tokenizer?: string;
  /** `tokenizer_config.json`'s text or object (special token names). */
  tokenizerConfig?: string | Record<string, unknown>;
  /** Where the files came from (e.g. a URL), for error messages and `model.source`. */
  source?: string;
}

/**
 * A model from the contents of its files (no file system): the checks of `loadCausalLM`
 * (config, tensor names and shapes, tokenizer ids within the vocabulary) and the tokenizer
 * through `@poad/hf-files`' `tokenizerFromJson` (byte-level BPE in plain TypeScript).
 */
export function causalLMFromFiles(
  files: ModelFiles,
  options: Omit<CausalLMOptions, 'initStd'> = {},
): CausalLM {
  const at = (name: string) => (files.source ? `${files.source.replace(/\/$/, '')}/${name}` : name);
  let rawConfig: unknown = files.config;
  if (typeof rawConfig === 'string') {
    try {
      rawConfig = JSON.parse(rawConfig);
    } catch (cause) {
      throw new CheckpointError(
        'invalid_config',
        at('config.json'),
        'is not valid JSON',
        undefined,
        {
          cause,
        },
      );
    }
  }
  const config = parseLlamaConfig(rawConfig, at('config.json'));
  const tensors = new Map<string, HostTensor>();
  const shards = files.weights instanceof Uint8Array ? [files.weights] : files.weights;
  shards.forEach((bytes, i) => {
    const name = at(shards.length === 1 ? 'model.safetensors' : `model shard ${i + 1}`);
    for (const [k, t] of parseSafetensors(bytes, { fileName: name }).tensors) {
      if (tensors.has(k)) throw new CheckpointError('corrupt', name, 'tensor appears twice', k);
      tensors.set(k, t);
    }
  });
  validateLlamaTensors(config, tensors, () => at('model.safetensors'));
  let tokenizer: CausalLM['tokenizer'];
  if (files.tokenizer !== undefined) {
    checkTokenizerVocab(files.tokenizer, config.vocab_size, at('tokenizer.json'));
    const tc = files.tokenizerConfig;
    tokenizer = tokenizerFromJson(files.tokenizer, {
      fileName: at('tokenizer.json'),
      ...(tc === undefined
        ? {}
        : {
            tokenizerConfig:
              typeof tc === 'string' ? (JSON.parse(tc) as Record<string, unknown>) : tc,
          }),
    });
  }
  const model = causalLMFromTensors(config, tensors, options);
  model.sourceConfig = { ...config };
  model.tokenizerJson = files.tokenizer;
  model.tokenizer = tokenizer;
  if (files.source !== undefined) model.source = { folder: files.source };
  return model;
}
