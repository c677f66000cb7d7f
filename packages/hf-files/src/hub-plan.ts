/** Whether `name` is a plain `*.safetensors` file name of the checkpoint folder (no path, not hidden). */
export function isPlainShardName(name: unknown): name is string {
  return (
    typeof name === 'string' &&
    name.endsWith('.safetensors') &&
    !name.includes('/') &&
    !name.includes('\\') &&
    !name.startsWith('.')
  );
}

/** Files of a model repository that {@link planModelFiles} picks, besides config and weights. */
export const HUB_TOKENIZER_FILES: readonly string[] = Object.freeze([
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'chat_template.jinja',
]);

/** `config.json`: always fetched first. */
export const HUB_CONFIG_FILE = 'config.json';
/** Fetched when present. */
export const HUB_GENERATION_CONFIG_FILE = 'generation_config.json';
/** A single weights file. */
export const HUB_WEIGHTS_FILE = 'model.safetensors';
/** The index of sharded weights. */
export const HUB_WEIGHTS_INDEX_FILE = 'model.safetensors.index.json';

const OTHER_WEIGHTS = /\.(bin|pth|pt|ckpt|h5|msgpack|gguf|onnx|npz|pkl)$/i;

/** Which weights a repository has, as far as this package reads them. */
export type WeightsPlan =
  | { kind: 'index'; file: string }
  | { kind: 'single'; file: string }
  /** No safetensors; `others` lists weight files in other formats (maybe none). */
  | { kind: 'none'; others: string[] };

/** The files of one model to fetch, in order: config, small files, weights. */
export interface ModelFilePlan {
  /** Whether the repository has `config.json`. */
  hasConfig: boolean;
  /** Tokenizer files and `generation_config.json` that the repository has. */
  small: string[];
  /** The weights. */
  weights: WeightsPlan;
}

/**
 * Choose what to fetch from the top-level file names of a repository: `config.json`, the
 * tokenizer files and `generation_config.json` that exist, and the safetensors index (whose shards
 * come next) or the single `model.safetensors`, as `readCheckpoint` reads them. Nothing else
 * (README, `.bin` duplicates, ONNX or GGUF exports, images) is fetched.
 */
export function planModelFiles(names: Iterable<string>): ModelFilePlan {
  const top = new Set([...names].filter((n) => !n.includes('/')));
  const small = [...HUB_TOKENIZER_FILES, HUB_GENERATION_CONFIG_FILE].filter((f) => top.has(f));
  const weights: WeightsPlan = top.has(HUB_WEIGHTS_INDEX_FILE)
    ? { kind: 'index', file: HUB_WEIGHTS_INDEX_FILE }
    : top.has(HUB_WEIGHTS_FILE)
      ? { kind: 'single', file: HUB_WEIGHTS_FILE }
      : { kind: 'none', others: [...top].filter((n) => OTHER_WEIGHTS.test(n)).sort() };
  return { hasConfig: top.has(HUB_CONFIG_FILE), small, weights };
}

/**
 * The shard files named by a `model.safetensors.index.json` (its `weight_map` values), each a plain
 * `*.safetensors` name; throws a plain `Error` describing the first bad entry.
 */
export function shardsOfIndex(index: unknown): string[] {
  const map = (index as { weight_map?: unknown } | null)?.weight_map;
  if (typeof map !== 'object' || map === null || Array.isArray(map)) {
    throw new Error(`${HUB_WEIGHTS_INDEX_FILE} has no "weight_map" object`);
  }
  const shards = new Set<string>();
  for (const v of Object.values(map)) {
    if (!isPlainShardName(v)) {
      throw new Error(
        `${HUB_WEIGHTS_INDEX_FILE} names shard ${JSON.stringify(v)}, which is not a plain *.safetensors file name`,
      );
    }
    shards.add(v);
  }
  return [...shards].sort();
}
