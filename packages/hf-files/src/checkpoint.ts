import { mkdir, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import type { StoreDType } from './dtype.js';
import { CheckpointError } from './errors.js';
import { isPlainShardName } from './hub-plan.js';
import { isFile, readJsonFile, readTextFile } from './json-file.js';
import { type LlamaConfig, parseLlamaConfig } from './llama-config.js';
import { validateLlamaTensors } from './llama-tensors.js';
import { readSafetensorsFile, writeSafetensorsFile } from './safetensors-file.js';
import type { NamedTensor, ParseSafetensorsOptions } from './safetensors-read.js';
import {
  sortedTensorEntries,
  storedByteLength,
  type TensorInput,
  type TensorInputs,
} from './safetensors-write.js';
import { checkTokenizerVocab } from './tokenizer-vocab.js';

/** File names of a Hugging Face checkpoint folder. */
export const CHECKPOINT_FILES = Object.freeze({
  config: 'config.json',
  weights: 'model.safetensors',
  index: 'model.safetensors.index.json',
  tokenizer: 'tokenizer.json',
});

const SHARD_NAME = /^model-\d{5}-of-\d{5}\.safetensors$/;

/** A checkpoint read from a folder. */
export interface Checkpoint {
  /** The validated configuration. */
  config: LlamaConfig;
  /** All tensors of all weight files, converted to float32. */
  tensors: Map<string, NamedTensor>;
  /** The text of `tokenizer.json`, when the folder has one. */
  tokenizerJson?: string;
  /** Tensors present in the files that the architecture does not use. */
  unexpectedTensors: string[];
}

/** Options for {@link readCheckpoint}. */
export interface ReadCheckpointOptions
  extends Pick<ParseSafetensorsOptions, 'maxHeaderBytes' | 'halfBits'> {
  /** Check names and shapes against the config (default true). */
  validate?: boolean;
}

function safeShardName(name: unknown, indexFile: string): string {
  if (!isPlainShardName(name)) {
    throw new CheckpointError(
      'invalid_config',
      indexFile,
      `weight_map names shard ${JSON.stringify(name)}, which is not a plain *.safetensors file name in the checkpoint folder`,
    );
  }
  return name;
}

async function readShards(
  dir: string,
  options: ReadCheckpointOptions,
): Promise<{ tensors: Map<string, NamedTensor>; fileOf: (t: string) => string }> {
  const indexPath = join(dir, CHECKPOINT_FILES.index);
  const single = join(dir, CHECKPOINT_FILES.weights);
  const tensors = new Map<string, NamedTensor>();
  const owner = new Map<string, string>();
  const readOpts = { maxHeaderBytes: options.maxHeaderBytes, halfBits: options.halfBits };
  if (!(await isFile(indexPath))) {
    if (!(await isFile(single))) {
      const bin = (await isFile(join(dir, 'pytorch_model.bin')))
        ? ' (found pytorch_model.bin: convert it to safetensors first)'
        : '';
      throw new CheckpointError(
        'missing_file',
        single,
        `weights not found: expected ${CHECKPOINT_FILES.weights} or ${CHECKPOINT_FILES.index} with shards${bin}`,
      );
    }
    const { tensors: t } = await readSafetensorsFile(single, readOpts);
    return { tensors: t, fileOf: () => single };
  }
  const index = await readJsonFile(indexPath, 'shard index');
  const map = (index as { weight_map?: unknown } | null)?.weight_map;
  if (typeof map !== 'object' || map === null || Array.isArray(map)) {
    throw new CheckpointError('invalid_config', indexPath, 'has no "weight_map" object');
  }
  const byShard = new Map<string, string[]>();
  for (const [name, shard] of Object.entries(map)) {
    const s = safeShardName(shard, indexPath);
    byShard.set(s, [...(byShard.get(s) ?? []), name]);
  }
  for (const shard of [...byShard.keys()].sort()) {
    const path = join(dir, shard);
    const { tensors: t } = await readSafetensorsFile(path, readOpts);
    for (const name of byShard.get(shard)!) {
      if (!t.has(name)) {
        throw new CheckpointError(
          'missing_tensor',
          path,
          `${CHECKPOINT_FILES.index} places this tensor in ${shard}, but the shard does not hold it`,
          name,
        );
      }
    }
    for (const [name, value] of t) {
      const prev = owner.get(name);
      if (prev !== undefined) {
        throw new CheckpointError('corrupt', path, `tensor also appears in ${prev}`, name);
      }
      owner.set(name, path);
      tensors.set(name, value);
    }
  }
  return { tensors, fileOf: (t) => owner.get(t) ?? indexPath };
}

/**
 * Read a Hugging Face LLaMA-family checkpoint folder: `config.json`, then `model.safetensors` or
 * the shards listed in `model.safetensors.index.json`, and `tokenizer.json` when present. The
 * tensors are checked against the config (every tensor present with its [out, in] shape; the
 * tokenizer's ids within `vocab_size`). Failures raise a {@link CheckpointError} naming the file
 * and the tensor.
 */
export async function readCheckpoint(
  dir: string,
  options: ReadCheckpointOptions = {},
): Promise<Checkpoint> {
  const configPath = join(dir, CHECKPOINT_FILES.config);
  const config = parseLlamaConfig(await readJsonFile(configPath, 'model config'), configPath);
  const { tensors, fileOf } = await readShards(dir, options);
  const unexpectedTensors =
    options.validate === false ? [] : validateLlamaTensors(config, tensors, fileOf).unexpected;
  const tokenizerPath = join(dir, CHECKPOINT_FILES.tokenizer);
  const out: Checkpoint = { config, tensors, unexpectedTensors };
  if (await isFile(tokenizerPath)) {
    const text = await readTextFile(tokenizerPath, 'tokenizer');
    if (options.validate !== false) checkTokenizerVocab(text, config.vocab_size, tokenizerPath);
    out.tokenizerJson = text;
  }
  return out;
}

/** Options for {@link writeCheckpoint}. */
export interface WriteCheckpointOptions {
  /** Also write this text as `tokenizer.json`. */
  tokenizerJson?: string;
  /** Split the weights into shards plus an index above this many bytes (default 5e9, as HF). */
  maxShardBytes?: number;
  /** Stored dtype for tensors that do not set their own `storeAs` (default `'F32'`). */
  storeAs?: StoreDType;
}

const TORCH_DTYPE: Record<StoreDType, string> = {
  F32: 'float32',
  F16: 'float16',
  BF16: 'bfloat16',
};

function toMap(tensors: TensorInputs): Map<string, TensorInput> {
  return new Map(sortedTensorEntries(tensors));
}

/** Split sorted tensors into shards of at most `max` bytes (a larger tensor gets a shard alone). */
function planShards(entries: [string, TensorInput][], max: number): [string, TensorInput][][] {
  const shards: [string, TensorInput][][] = [];
  let current: [string, TensorInput][] = [];
  let size = 0;
  for (const e of entries) {
    const b = storedByteLength(e[1]);
    if (current.length > 0 && size + b > max) {
      shards.push(current);
      current = [];
      size = 0;
    }
    current.push(e);
    size += b;
  }
  if (current.length > 0 || shards.length === 0) shards.push(current);
  return shards;
}

/**
 * Write a checkpoint folder that Hugging Face `from_pretrained` and {@link readCheckpoint} load:
 * `config.json`, `model.safetensors` (or `model-0000i-of-0000N.safetensors` shards plus
 * `model.safetensors.index.json` when the weights exceed `maxShardBytes`) and optionally
 * `tokenizer.json`. The config and tensors are validated first, so bad input never replaces a good
 * checkpoint; each file is written atomically, and weight files of an earlier layout are removed.
 * With a tied head, `lm_head.weight` is not written.
 */
export async function writeCheckpoint(
  dir: string,
  config: LlamaConfig,
  tensors: TensorInputs,
  options: WriteCheckpointOptions = {},
): Promise<void> {
  const configPath = join(dir, CHECKPOINT_FILES.config);
  const storeAs = options.storeAs ?? 'F32';
  const checked = parseLlamaConfig({ ...config, torch_dtype: TORCH_DTYPE[storeAs] }, configPath);
  const all = toMap(tensors);
  validateLlamaTensors(checked, all, join(dir, CHECKPOINT_FILES.weights));
  if (options.tokenizerJson !== undefined) {
    checkTokenizerVocab(
      options.tokenizerJson,
      checked.vocab_size,
      join(dir, CHECKPOINT_FILES.tokenizer),
    );
  }
  if (checked.tie_word_embeddings) all.delete('lm_head.weight');
  const entries = [...all].map(([n, t]): [string, TensorInput] => [
    n,
    { ...t, storeAs: t.storeAs ?? storeAs },
  ]);
  const max = options.maxShardBytes ?? 5e9;
  if (!(max > 0)) {
    throw new CheckpointError('invalid_config', dir, `maxShardBytes must be positive, got ${max}`);
  }
  await mkdir(dir, { recursive: true });
  const total = entries.reduce((s, [, t]) => s + storedByteLength(t), 0);
  const keep = new Set<string>();
  if (total <= max) {
    await writeSafetensorsFile(join(dir, CHECKPOINT_FILES.weights), new Map(entries));
    keep.add(CHECKPOINT_FILES.weights);
  } else {
    const shards = planShards(entries, max);
    const n = String(shards.length).padStart(5, '0');
    const weightMap: Record<string, string> = {};
    for (let i = 0; i < shards.length; i++) {
      const name = `model-${String(i + 1).padStart(5, '0')}-of-${n}.safetensors`;
      await writeSafetensorsFile(join(dir, name), new Map(shards[i]));
      for (const [t] of shards[i]!)
        Object.defineProperty(weightMap, t, { value: name, enumerable: true });
      keep.add(name);
    }
    const index = { metadata: { total_size: total }, weight_map: weightMap };
    await writeFileAtomic(join(dir, CHECKPOINT_FILES.index), `${JSON.stringify(index, null, 2)}\n`);
    keep.add(CHECKPOINT_FILES.index);
  }
  for (const f of await readdir(dir)) {
    const stale =
      f === CHECKPOINT_FILES.weights || f === CHECKPOINT_FILES.index || SHARD_NAME.test(f);
    if (stale && !keep.has(f)) await unlink(join(dir, f));
  }
  if (options.tokenizerJson !== undefined) {
    await writeFileAtomic(join(dir, CHECKPOINT_FILES.tokenizer), options.tokenizerJson);
  }
  await writeFileAtomic(configPath, `${JSON.stringify(checked, null, 2)}\n`);
}
