import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CheckpointError,
  type DownloadProgress,
  loadTokenizer,
  peftKey,
  readCheckpoint,
  readPeftAdapter,
  readSafetensorsFile,
  resolveModelId,
  type SnapshotDownloadOptions,
  snapshotDownload,
  writeCheckpoint,
  writePeftAdapter,
  writeSafetensorsFile,
} from '@poad/hf-files';
import {
  type CausalLM,
  type CausalLMOptions,
  causalLMFromTensors,
  type ModelSource,
} from './causal-lm.js';
import type { ModelConfig } from './config.js';
import { ModelConfigError } from './errors.js';
import { featureSize, type ValueFeatures } from './features.js';
import { LoraAdapter } from './lora.js';
import {
  llamaConfigOf,
  peftAdapterOf,
  type SaveAdapterOptions,
  VALUE_HEAD_FILE,
} from './model-files.js';
import { ValueHead, valueHeadKey } from './value-head.js';
import {
  type HostTensor,
  MODULE_NAMES,
  type ModuleName,
  modulePath,
  moduleShape,
  readFloats,
  transposeHost,
} from './weights.js';

/** Options of {@link loadCausalLM}. */
export interface LoadCausalLMOptions extends Omit<CausalLMOptions, 'initStd'> {
  /** Load a PEFT adapter from this folder after the base model. */
  adapterDir?: string;
  /** Load `value_head.safetensors` from this folder. */
  valueHeadDir?: string;
  /** Load `tokenizer.json` (when present) into `model.tokenizer`. Default true. */
  tokenizer?: boolean;
  /**
   * Download progress of a model named by Hub id (bytes, rate, ETA; `@poad/hf-files`'
   * `DownloadProgress`), for a progress bar. Nothing is reported when the cache has the model.
   */
  onProgress?: (progress: DownloadProgress) => void;
  /**
   * How a model named by Hub id is fetched (`@poad/hf-files`' `snapshotDownload` options: cache
   * folder, endpoint, token, offline, …); unset fields come from `HF_HUB_CACHE`, `HF_HOME`,
   * `HF_ENDPOINT`, `HF_TOKEN` and `HF_HUB_OFFLINE`, as in Python's `huggingface_hub`.
   */
  hub?: Omit<SnapshotDownloadOptions, 'onProgress'>;
}

/**
 * The folder a model reference names: an existing folder as it is (a folder wins over a Hub id
 * of the same text, as in Python's `from_pretrained`), `ORG/NAME[@REVISION]` downloaded into the
 * Hub cache (its snapshot folder), anything else a folder relative to the working directory.
 */
async function modelFolder(
  ref: string,
  options: LoadCausalLMOptions,
): Promise<{ folder: string; source: ModelSource }> {
  const id = await resolveModelId(ref);
  if (id.kind !== 'hub') {
    const folder = id.kind === 'path' ? id.path : join(process.cwd(), id.name);
    return { folder, source: { folder } };
  }
  const snapshot = await snapshotDownload(ref, {
    ...options.hub,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  return { folder: snapshot.folder, source: { folder: snapshot.folder, snapshot } };
}

/**
 * Load a Hugging Face LLaMA-family model: a checkpoint folder (`config.json`, `model.safetensors`
 * or shards, optional `tokenizer.json`, loaded through the `tokenizers` package), or a model on
 * the Hugging Face Hub by id, `ORG/NAME` or `ORG/NAME@REVISION` (branch, tag or commit), which is
 * downloaded first into the cache that Python's `huggingface_hub` shares (`@poad/hf-files`'
 * `snapshotDownload`: only config, tokenizer and safetensors files; resumable, verified; a
 * cached model is not fetched again, and `HF_HUB_OFFLINE=1` loads it with no request).
 * `model.source` says which folder was read and, for a Hub id, the snapshot (repository and
 * commit). F16/BF16 frozen weights stay in 16-bit storage on webgpu (`weightDtype` "auto", the
 * default) and become float32 elsewhere or with `weightDtype: 'float32'`. Errors are `CheckpointError`s naming the file and
 * tensor; a Hub failure is a `HubError` (one of them) naming the model id and the fix.
 */
export async function loadCausalLM(
  ref: string,
  options: LoadCausalLMOptions = {},
): Promise<CausalLM> {
  const { folder: dir, source } = await modelFolder(ref, options);
  // 16-bit tensors come as their bits: a frozen matrix kept in 16 bits is packed from them
  // without a float32 copy on the host (half the host memory of an 8B checkpoint's load).
  const ckpt = await readCheckpoint(dir, { halfBits: true });
  const model = causalLMFromTensors(ckpt.config, ckpt.tensors, options);
  try {
    model.source = source;
    model.sourceConfig = { ...ckpt.config };
    model.tokenizerJson = ckpt.tokenizerJson;
    if (ckpt.tokenizerJson !== undefined && options.tokenizer !== false) {
      model.tokenizer = await loadTokenizer(dir);
    }
    if (options.adapterDir) await loadAdapter(model, options.adapterDir);
    if (options.valueHeadDir) await loadValueHead(model, options.valueHeadDir);
  } catch (e) {
    model.dispose();
    throw e;
  }
  return model;
}

/** Options of {@link saveCausalLM}. */
export interface SaveCausalLMOptions {
  /** Write base weights with the adapter folded in (the model itself is unchanged). */
  merged?: boolean;
  /** Tokenizer text to write as `tokenizer.json` (default: the one the model was loaded with). */
  tokenizerJson?: string;
}

async function addAdapterDelta(
  c: ModelConfig,
  tensors: Map<string, HostTensor>,
  adapter: LoraAdapter,
): Promise<void> {
  for (const [layer, entry] of adapter.layers.entries()) {
    for (const m of MODULE_NAMES) {
      const pair = entry[m];
      if (!pair) continue;
      const [inD, outD] = moduleShape(c, m);
      const r = adapter.config.r;
      const a = await readFloats(pair.A); // [in, r]
      const b = await readFloats(pair.B); // [r, out]
      const w = tensors.get(`${modulePath(layer, m)}.weight`);
      if (!w) continue;
      const data = new Float32Array(w.data); // [out, in]
      for (let o = 0; o < outD; o++) {
        for (let i = 0; i < inD; i++) {
          let s = 0;
          for (let k = 0; k < r; k++) s += (a[i * r + k] as number) * (b[k * outD + o] as number);
          data[o * inD + i] = (data[o * inD + i] as number) + s * adapter.scale;
        }
      }
      tensors.set(`${modulePath(layer, m)}.weight`, { ...w, data });
    }
  }
}

/**
 * Write the model as a Hugging Face checkpoint folder (`config.json`, float32 `model.safetensors`,
 * `tokenizer.json` when known), atomically file by file. The adapter and value head are not
 * included; save them with {@link saveAdapter} and {@link saveValueHead}, or pass `merged`.
 */
export async function saveCausalLM(
  model: CausalLM,
  dir: string,
  options: SaveCausalLMOptions = {},
): Promise<void> {
  const tensors = await model.exportWeights();
  if (options.merged && model.adapter) await addAdapterDelta(model.config, tensors, model.adapter);
  const tokenizerJson = options.tokenizerJson ?? model.tokenizerJson;
  await writeCheckpoint(
    dir,
    llamaConfigOf(model),
    tensors,
    tokenizerJson === undefined ? {} : { tokenizerJson },
  );
}

/**
 * Write the attached LoRA adapter (or `options.adapter`) in PEFT's format
 * (`adapter_config.json` + `adapter_model.safetensors`, [r, in] and [out, r] weights) so Python
 * PEFT can load it.
 */
export async function saveAdapter(
  model: CausalLM,
  dir: string,
  options: SaveAdapterOptions = {},
): Promise<void> {
  const { config, tensors } = await peftAdapterOf(model, options);
  await writePeftAdapter(dir, config, tensors, { baseConfig: llamaConfigOf(model) });
}

/** Load a PEFT LoRA adapter folder into the model, replacing any attached adapter. */
export async function loadAdapter(model: CausalLM, dir: string): Promise<LoraAdapter> {
  const adapter = await readAdapter(model, dir);
  model.adapter?.dispose();
  model.adapter = adapter;
  return adapter;
}

/**
 * Read a PEFT LoRA adapter folder for `model` without attaching it (e.g. a second adapter passed
 * to `forward({ adapter })`); the caller disposes it.
 */
export async function readAdapter(model: CausalLM, dir: string): Promise<LoraAdapter> {
  const { config, tensors } = await readPeftAdapter(dir, { baseConfig: llamaConfigOf(model) });
  const file = join(dir, 'adapter_model.safetensors');
  const modules = config.target_modules as ModuleName[];
  const layers = config.layers_to_transform ?? null;
  const adapter = LoraAdapter.fromHost(
    model.config,
    {
      r: config.r,
      alpha: config.lora_alpha,
      dropout: config.lora_dropout,
      targetModules: modules,
      layers,
      useRslora: config.use_rslora === true,
    },
    (layer, m) => {
      const [inD, outD] = moduleShape(model.config, m);
      const get = (which: 'A' | 'B'): Float32Array => {
        const key = peftKey(layer, m, which);
        const t = tensors.get(key);
        if (!t) throw new CheckpointError('missing_tensor', file, 'missing from the adapter', key);
        return t.data;
      };
      return {
        A: transposeHost(get('A'), config.r, inD),
        B: transposeHost(get('B'), outD, config.r),
      };
    },
  );
  return adapter;
}

/** Write the value head as `value_head.safetensors` (`v_head.{0,2,4}.weight`, [out, in]). */
export async function saveValueHead(model: CausalLM, dir: string): Promise<void> {
  if (!model.valueHead) {
    throw new ModelConfigError(
      'valueHead',
      'the model has no value head to save; call addValueHead() first',
    );
  }
  await mkdir(dir, { recursive: true });
  await writeSafetensorsFile(join(dir, VALUE_HEAD_FILE), await model.valueHead.toHost());
}

/**
 * Load `value_head.safetensors` from a folder, replacing any attached value head. Its input width
 * says which features it reads: the hidden size (`last`) or layers × hidden size (`layers`).
 */
export async function loadValueHead(model: CausalLM, dir: string): Promise<ValueHead> {
  const file = join(dir, VALUE_HEAD_FILE);
  const { tensors } = await readSafetensorsFile(file);
  let head: ValueHead;
  try {
    const features = valueFeaturesOf(model.config, tensors.get(valueHeadKey(0))?.shape);
    head = ValueHead.fromHost(tensors, featureSize(model.config, features), features);
  } catch (e) {
    if (e instanceof ModelConfigError) {
      throw new CheckpointError('shape_mismatch', file, e.message, e.field, { cause: e });
    }
    throw e;
  }
  model.valueHead?.dispose();
  model.valueHead = head;
  return head;
}

/**
 * The features a saved head reads, from its first layer's input width (`last` where the hidden
 * size and layers × hidden size are one, a one-layer model, whose two kinds are the same numbers).
 * A missing first layer is left to `ValueHead.fromHost` to name.
 */
function valueFeaturesOf(config: ModelConfig, shape: readonly number[] | undefined): ValueFeatures {
  const inD = shape?.[1];
  if (inD === undefined || inD === featureSize(config, 'last')) return 'last';
  if (inD === featureSize(config, 'layers')) return 'layers';
  throw new ModelConfigError(
    valueHeadKey(0),
    `input width ${inD} fits neither the final hidden state (${config.hiddenSize}) nor every layer's (${config.numLayers} × ${config.hiddenSize}); the head was saved for another model`,
  );
}
