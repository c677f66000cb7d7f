import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CheckpointError, checkpointErrorFrom } from './errors.js';
import { isFile, readTextFile } from './json-file.js';
import { specialTokenIds } from './special-tokens.js';

/** A text tokenizer: text ↔ token ids, plus the ids of its special tokens. */
export interface TextTokenizer {
  /** Token ids of `text`; special tokens (e.g. BOS) are added unless `addSpecialTokens` is false. */
  encode(text: string, options?: { addSpecialTokens?: boolean }): Promise<number[]>;
  /** {@link TextTokenizer.encode} over many texts at once (parallel inside the native library). */
  encodeBatch(
    texts: readonly string[],
    options?: { addSpecialTokens?: boolean },
  ): Promise<number[][]>;
  /** Text of `ids`; special tokens are kept unless `skipSpecialTokens` is true. */
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): Promise<string>;
  /** Number of ids, added tokens included. */
  readonly vocabSize: number;
  /** Beginning-of-sequence id, when known. */
  readonly bosId: number | undefined;
  /** End-of-sequence id, when known. */
  readonly eosId: number | undefined;
  /** Padding id, when known. */
  readonly padId: number | undefined;
  /** Id of a token string, or undefined when it is not in the vocabulary. */
  tokenToId(token: string): number | undefined;
  /** Token string of an id, or undefined when out of range. */
  idToToken(id: number): string | undefined;
  /** The tokenizer as `tokenizer.json` text (after the decoder fix described in {@link loadTokenizer}). */
  toJSON(): string;
}

/** Names of special tokens; each may be given as its string or its id. */
export interface SpecialTokenOptions {
  /** Beginning-of-sequence token. */
  bosToken?: string | number;
  /** End-of-sequence token. */
  eosToken?: string | number;
  /** Padding token. */
  padToken?: string | number;
}

type Json = Record<string, unknown>;

function usesByteLevel(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  const n = node as Json;
  if (n.type === 'ByteLevel') return true;
  const children = n.pretokenizers ?? n.decoders;
  return Array.isArray(children) && children.some(usesByteLevel);
}

/**
 * A byte-level BPE tokenizer needs a ByteLevel decoder to turn `Ġ`-style byte symbols back into
 * text. Files written by the JS `tokenizers` binding lack one (it exports no ByteLevel decoder),
 * so add it when the pre-tokenizer is byte-level and the decoder is absent or a plain BPE decoder.
 */
export function withByteLevelDecoder(json: Json): Json {
  const decoder = json.decoder as Json | null | undefined;
  const plain = decoder == null || decoder.type === 'BPEDecoder';
  if (!plain || !usesByteLevel(json.pre_tokenizer)) return json;
  return {
    ...json,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  };
}

async function resolveSource(
  source: string,
): Promise<{ text: string; file: string; dir?: string }> {
  if (source.trimStart().startsWith('{')) return { text: source, file: '<tokenizer json>' };
  let file = source;
  try {
    if ((await stat(source)).isDirectory()) file = join(source, 'tokenizer.json');
  } catch {
    // Reported as a missing file below.
  }
  return { text: await readTextFile(file, 'tokenizer'), file, dir: dirname(file) };
}

/**
 * Load a Hugging Face `tokenizer.json` through the `tokenizers` package. `source` is the JSON
 * text, a path to the file, or a checkpoint folder holding it. Special token ids come from
 * `options`, else from `tokenizer_config.json` next to the file. Byte-level BPE files without a
 * decoder get a ByteLevel decoder (see {@link withByteLevelDecoder}) so decoding is exact.
 */
export async function loadTokenizer(
  source: string,
  options: SpecialTokenOptions = {},
): Promise<TextTokenizer> {
  const { text, file, dir } = await resolveSource(source);
  let json: Json;
  try {
    json = JSON.parse(text) as Json;
  } catch (cause) {
    throw new CheckpointError('tokenizer', file, 'tokenizer is not valid JSON', undefined, {
      cause,
    });
  }
  if (typeof json !== 'object' || json === null || typeof json.model !== 'object') {
    throw new CheckpointError('tokenizer', file, 'tokenizer JSON has no "model" object');
  }
  const fixed = JSON.stringify(withByteLevelDecoder(json));
  const { Tokenizer } = await import('tokenizers');
  let tok: InstanceType<typeof Tokenizer>;
  try {
    tok = Tokenizer.fromString(fixed);
  } catch (cause) {
    throw checkpointErrorFrom('tokenizer', file, 'the tokenizers library rejected the file', cause);
  }

  let special: Json = {};
  if (dir !== undefined && (await isFile(join(dir, 'tokenizer_config.json')))) {
    try {
      special = JSON.parse(
        await readTextFile(join(dir, 'tokenizer_config.json'), 'tokenizer config'),
      ) as Json;
    } catch (cause) {
      throw new CheckpointError(
        'tokenizer',
        join(dir, 'tokenizer_config.json'),
        'is not valid JSON',
        undefined,
        { cause },
      );
    }
  }
  const vocabSize = tok.getVocabSize(true);
  const { bosId, eosId, padId } = specialTokenIds(
    options,
    special,
    (t) => tok.tokenToId(t) ?? undefined,
    vocabSize,
    file,
  );

  const checkIds = (ids: readonly number[]): number[] => {
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (!Number.isSafeInteger(id) || id < 0 || id >= vocabSize) {
        throw new RangeError(`decode: ids[${i}] = ${id} is outside the vocabulary of ${vocabSize}`);
      }
    }
    return [...ids];
  };

  return {
    vocabSize,
    bosId,
    eosId,
    padId,
    async encode(text, opts = {}) {
      const enc = await tok.encode(text, null, { addSpecialTokens: opts.addSpecialTokens ?? true });
      return enc.getIds();
    },
    async encodeBatch(texts, opts = {}) {
      const encs = await tok.encodeBatch([...texts], {
        addSpecialTokens: opts.addSpecialTokens ?? true,
      });
      return encs.map((e) => e.getIds());
    },
    async decode(ids, opts = {}) {
      return await tok.decode(checkIds(ids), opts.skipSpecialTokens ?? false);
    },
    tokenToId(token) {
      return tok.tokenToId(token) ?? undefined;
    },
    idToToken(id) {
      return tok.idToToken(id) ?? undefined;
    },
    toJSON() {
      return fixed;
    },
  };
}
