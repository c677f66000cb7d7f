import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { CheckpointError } from './errors.js';
import { isFile, readJsonFile } from './json-file.js';
import type { LlamaConfig } from './llama-config.js';
import { ADAPTER_FILES, type PeftAdapterConfig, parsePeftAdapterConfig } from './peft-config.js';
import { peftAdapterFiles, validatePeftTensors } from './peft-files.js';
import { LORA_MODULES, parsePeftKey, peftKey } from './peft-keys.js';
import { readSafetensorsFile } from './safetensors-file.js';
import type { NamedTensor } from './safetensors-read.js';
import type { TensorInputs } from './safetensors-write.js';

/** A PEFT adapter read from a folder. */
export interface PeftAdapter {
  /** The validated config, with `target_modules` resolved to a list. */
  config: PeftAdapterConfig;
  /** LoRA weights under PEFT keys (adapter name stripped), float32, [r, in] and [out, r]. */
  tensors: Map<string, NamedTensor>;
}

/**
 * Read a PEFT LoRA adapter folder (`adapter_config.json` + `adapter_model.safetensors`). With
 * `baseConfig`, shapes and layer indices are checked against the base model.
 */
export async function readPeftAdapter(
  dir: string,
  options: { baseConfig?: LlamaConfig } = {},
): Promise<PeftAdapter> {
  const configPath = join(dir, ADAPTER_FILES.config);
  const config = parsePeftAdapterConfig(
    await readJsonFile(configPath, 'adapter config'),
    configPath,
  );
  const weightsPath = join(dir, ADAPTER_FILES.weights);
  if (!(await isFile(weightsPath)) && (await isFile(join(dir, 'adapter_model.bin')))) {
    throw new CheckpointError(
      'missing_file',
      weightsPath,
      'not found (only adapter_model.bin is present: save the adapter with safe_serialization=True)',
    );
  }
  const { tensors: raw } = await readSafetensorsFile(weightsPath);
  const tensors = new Map<string, NamedTensor>();
  for (const [key, t] of raw) {
    const p = parsePeftKey(key);
    tensors.set(p === null ? key : peftKey(p.layer, p.module, p.which), t);
  }
  const pairs = validatePeftTensors(config, tensors, options.baseConfig, weightsPath);
  if (config.target_modules.length === 0) {
    config.target_modules = LORA_MODULES.filter((m) => pairs.some((p) => p.module === m));
  }
  return { config, tensors };
}

/**
 * Write a PEFT LoRA adapter folder that Python PEFT loads: `adapter_model.safetensors` (float32,
 * PEFT keys, A [r, in] and B [out, r]) and a minimal `adapter_config.json` with only long-standing
 * fields (see {@link peftAdapterFiles}). Everything is validated before anything is written; each
 * file is written atomically.
 */
export async function writePeftAdapter(
  dir: string,
  config: PeftAdapterConfig,
  tensors: TensorInputs,
  options: { baseConfig?: LlamaConfig } = {},
): Promise<void> {
  const files = peftAdapterFiles(config, tensors, { ...options, dir });
  await mkdir(dir, { recursive: true });
  await writeFileAtomic(join(dir, ADAPTER_FILES.weights), files.weights);
  await writeFileAtomic(join(dir, ADAPTER_FILES.config), files.config);
}
