import { CheckpointError } from './errors.js';
import { specialTokenIds } from './special-tokens.js';
import type { SpecialTokenOptions, TextTokenizer } from './tokenizer.js';

// A byte-level BPE tokenizer in plain TypeScript (no native code, no Node built-ins), for
// browsers and other runtimes without the `tokenizers` package. It reads the same
// `tokenizer.json` and gives the same ids as the native library for the pipelines it accepts:
// no normalizer, a ByteLevel pre-tokenizer (GPT-2 split pattern), a BPE model, an optional
// ByteLevel or TemplateProcessing post-processor, and a ByteLevel decoder. Anything else is
// refused with an error naming the component.

type Json = Record<string, unknown>;

/** The GPT-2 split pattern of the ByteLevel pre-tokenizer. */
const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** GPT-2's reversible map of the 256 byte values onto printable characters. */
function byteAlphabet(): { toChar: string[]; toByte: Map<string, number> } {
  const printable = (b: number) =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const toChar: string[] = new Array(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    toChar[b] = String.fromCodePoint(printable(b) ? b : 256 + extra++);
  }
  const toByte = new Map<string, number>();
  toChar.forEach((c, b) => {
    toByte.set(c, b);
  });
  return { toChar, toByte };
}

const BYTES = byteAlphabet();

interface AddedToken {
  id: number;
  content: string;
  special: boolean;
}

function unsupported(file: string, what: string): CheckpointError {
  return new CheckpointError(
    'tokenizer',
    file,
    `${what} is not supported by the built-in byte-level BPE tokenizer (it reads byte-level BPE files such as GPT-2's and the default models'); in Node, loadTokenizer uses the native tokenizers package, which reads every tokenizer.json`,
  );
}

/** Options of {@link tokenizerFromJson}. */
export interface TokenizerFromJsonOptions extends SpecialTokenOptions {
  /** The parsed `tokenizer_config.json`, for the BOS/EOS/padding token names. */
  tokenizerConfig?: Record<string, unknown>;
  /** Name of the source in error messages (default `tokenizer.json`). */
  fileName?: string;
}

/**
 * A {@link TextTokenizer} from `tokenizer.json` text (or its parsed object) without native code:
 * byte-level BPE as GPT-2, the embedded default models and many small LLaMA-family models use.
 * Ids match the native `tokenizers` package for the files it accepts; other pipelines (a
 * normalizer, a Metaspace or Split pre-tokenizer, WordPiece or Unigram models, …) are refused
 * with a `CheckpointError` naming the component.
 */
export function tokenizerFromJson(
  source: string | Record<string, unknown>,
  options: TokenizerFromJsonOptions = {},
): TextTokenizer {
  const file = options.fileName ?? 'tokenizer.json';
  let json: Json;
  if (typeof source === 'string') {
    try {
      json = JSON.parse(source) as Json;
    } catch (cause) {
      throw new CheckpointError('tokenizer', file, 'tokenizer is not valid JSON', undefined, {
        cause,
      });
    }
  } else json = source;
  const model = json.model as Json | undefined;
  if (typeof model !== 'object' || model === null) {
    throw new CheckpointError('tokenizer', file, 'tokenizer JSON has no "model" object');
  }
  if (model.type !== undefined && model.type !== 'BPE')
    throw unsupported(file, `model ${model.type}`);
  if (model.byte_fallback === true) throw unsupported(file, 'BPE byte_fallback');
  if (
    typeof model.continuing_subword_prefix === 'string' ||
    typeof model.end_of_word_suffix === 'string'
  ) {
    throw unsupported(file, 'a BPE continuing_subword_prefix or end_of_word_suffix');
  }
  if (json.normalizer != null) {
    throw unsupported(file, `normalizer ${(json.normalizer as Json).type ?? '(unknown)'}`);
  }
  const pre = json.pre_tokenizer as Json | null | undefined;
  if (pre == null || pre.type !== 'ByteLevel') {
    throw unsupported(file, `pre-tokenizer ${pre == null ? 'none' : String(pre.type)}`);
  }
  const addPrefixSpace = pre.add_prefix_space === true;
  const useRegex = pre.use_regex !== false;
  const decoder = json.decoder as Json | null | undefined;
  if (decoder != null && decoder.type !== 'ByteLevel' && decoder.type !== 'BPEDecoder') {
    throw unsupported(file, `decoder ${String(decoder.type)}`);
  }

  // Vocabulary and merge ranks.
  const vocab = new Map<string, number>();
  for (const [token, id] of Object.entries((model.vocab ?? {}) as Record<string, number>)) {
    vocab.set(token, id);
  }
  const ranks = new Map<string, number>();
  const merges = (model.merges ?? []) as (string | [string, string])[];
  merges.forEach((m, rank) => {
    const [a, b] = typeof m === 'string' ? splitMerge(m) : m;
    ranks.set(`${a} ${b}`, rank);
  });
  const ignoreMerges = model.ignore_merges === true;
  const unkName = typeof model.unk_token === 'string' ? model.unk_token : undefined;

  // Added tokens, matched literally before pre-tokenization (longest first at each position).
  const added: AddedToken[] = [];
  for (const t of (json.added_tokens ?? []) as Json[]) {
    if (t.lstrip === true || t.rstrip === true || t.single_word === true) {
      throw unsupported(
        file,
        `added token ${JSON.stringify(t.content)} with lstrip/rstrip/single_word`,
      );
    }
    if (t.special !== true && t.normalized === true && json.normalizer != null) {
      throw unsupported(file, 'normalized added tokens');
    }
    added.push({ id: t.id as number, content: t.content as string, special: t.special === true });
  }
  const addedByContent = new Map(added.map((t) => [t.content, t]));
  const addedById = new Map(added.map((t) => [t.id, t]));
  const byLength = [...added]
    .filter((t) => t.content.length > 0)
    .sort((a, b) => b.content.length - a.content.length);

  const idToTokenMap = new Map<number, string>();
  for (const [t, id] of vocab) idToTokenMap.set(id, t);
  for (const t of added) idToTokenMap.set(t.id, t.content);
  const vocabSize = idToTokenMap.size;
  const tokenToId = (token: string): number | undefined =>
    addedByContent.get(token)?.id ?? vocab.get(token);
  const unkId = unkName === undefined ? undefined : tokenToId(unkName);

  // Post-processor: special tokens added around a single sequence.
  const post = json.post_processor as Json | null | undefined;
  const prefix: number[] = [];
  const suffix: number[] = [];
  if (post != null && post.type === 'TemplateProcessing') {
    const single = (post.single ?? []) as Json[];
    const specials = (post.special_tokens ?? {}) as Record<string, { ids: number[] }>;
    let seenSequence = false;
    for (const piece of single) {
      if (piece.Sequence) {
        seenSequence = true;
        continue;
      }
      const sp = piece.SpecialToken as { id: string } | undefined;
      if (!sp)
        throw unsupported(file, 'a TemplateProcessing piece other than SpecialToken/Sequence');
      const ids = specials[sp.id]?.ids ?? [tokenToId(sp.id)];
      if (ids.some((i) => i === undefined)) {
        throw new CheckpointError(
          'tokenizer',
          file,
          `template token "${sp.id}" is not in the vocabulary`,
        );
      }
      (seenSequence ? suffix : prefix).push(...(ids as number[]));
    }
  } else if (post != null && post.type !== 'ByteLevel') {
    throw unsupported(file, `post-processor ${String(post.type)}`);
  }

  const cache = new Map<string, number[]>();
  const bpeWord = (word: string): number[] => {
    const hit = cache.get(word);
    if (hit) return hit;
    let ids: number[];
    const whole = vocab.get(word);
    if (ignoreMerges && whole !== undefined) ids = [whole];
    else {
      let parts = Array.from(word);
      while (parts.length > 1) {
        let best = -1;
        let bestRank = Number.POSITIVE_INFINITY;
        for (let i = 0; i + 1 < parts.length; i++) {
          const r = ranks.get(`${parts[i]} ${parts[i + 1]}`);
          if (r !== undefined && r < bestRank) {
            bestRank = r;
            best = i;
          }
        }
        if (best < 0) break;
        // Merge every occurrence of the best pair, left to right.
        const a = parts[best]!;
        const b = parts[best + 1]!;
        const next: string[] = [];
        for (let i = 0; i < parts.length; i++) {
          if (i + 1 < parts.length && parts[i] === a && parts[i + 1] === b) {
            next.push(a + b);
            i++;
          } else next.push(parts[i]!);
        }
        parts = next;
      }
      ids = [];
      for (const p of parts) {
        const id = vocab.get(p);
        if (id !== undefined) ids.push(id);
        else if (unkId !== undefined) ids.push(unkId);
        else {
          throw new CheckpointError(
            'tokenizer',
            file,
            `the symbol ${JSON.stringify(p)} is not in the vocabulary and the model has no unk_token`,
          );
        }
      }
    }
    if (cache.size < 100_000) cache.set(word, ids);
    return ids;
  };

  const encoder = new TextEncoder();
  const encodeText = (text: string): number[] => {
    if (text.length === 0) return [];
    let t = text;
    if (addPrefixSpace && !t.startsWith(' ')) t = ` ${t}`;
    const words = useRegex ? (t.match(GPT2_SPLIT) ?? []) : [t];
    const out: number[] = [];
    for (const w of words) {
      let mapped = '';
      for (const b of encoder.encode(w)) mapped += BYTES.toChar[b];
      out.push(...bpeWord(mapped));
    }
    return out;
  };

  const encodeOne = (text: string, addSpecial: boolean): number[] => {
    const ids: number[] = [];
    let start = 0;
    let i = 0;
    while (i < text.length) {
      const match = byLength.find((t) => text.startsWith(t.content, i));
      if (match) {
        ids.push(...encodeText(text.slice(start, i)), match.id);
        i += match.content.length;
        start = i;
      } else i++;
    }
    ids.push(...encodeText(text.slice(start)));
    return addSpecial ? [...prefix, ...ids, ...suffix] : ids;
  };

  // A BPEDecoder or no decoder on a byte-level file decodes as ByteLevel (see withByteLevelDecoder).
  const decoderText = new TextDecoder('utf-8', { fatal: false });
  const decodeIds = (ids: readonly number[], skipSpecial: boolean): string => {
    const bytes: number[] = [];
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k]!;
      if (!Number.isSafeInteger(id) || id < 0 || !idToTokenMap.has(id)) {
        throw new RangeError(`decode: ids[${k}] = ${id} is outside the vocabulary of ${vocabSize}`);
      }
      if (skipSpecial && addedById.get(id)?.special) continue;
      const token = idToTokenMap.get(id)!;
      const own: number[] = [];
      let mappable = true;
      for (const c of token) {
        const b = BYTES.toByte.get(c);
        if (b === undefined) {
          mappable = false;
          break;
        }
        own.push(b);
      }
      bytes.push(...(mappable ? own : encoder.encode(token)));
    }
    return decoderText.decode(new Uint8Array(bytes));
  };

  // Special token ids, as loadTokenizer finds them.
  const { bosId, eosId, padId } = specialTokenIds(
    options,
    options.tokenizerConfig ?? {},
    tokenToId,
    vocabSize,
    file,
  );
  const text = typeof source === 'string' ? source : JSON.stringify(source);

  return {
    vocabSize,
    bosId,
    eosId,
    padId,
    async encode(t, opts = {}) {
      return encodeOne(t, opts.addSpecialTokens ?? true);
    },
    async encodeBatch(texts, opts = {}) {
      return texts.map((t) => encodeOne(t, opts.addSpecialTokens ?? true));
    },
    async decode(ids, opts = {}) {
      return decodeIds(ids, opts.skipSpecialTokens ?? false);
    },
    tokenToId,
    idToToken: (id) => idToTokenMap.get(id),
    toJSON: () => text,
  };
}

function splitMerge(m: string): [string, string] {
  const at = m.indexOf(' ', 1);
  return [m.slice(0, at), m.slice(at + 1)];
}
