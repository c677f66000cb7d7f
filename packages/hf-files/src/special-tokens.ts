import { CheckpointError } from './errors.js';
import type { SpecialTokenOptions } from './tokenizer.js';

function tokenName(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as { content?: unknown }).content === 'string'
  ) {
    return (v as { content: string }).content;
  }
  return undefined;
}

/**
 * The BOS, EOS and padding ids of a tokenizer: each given in `options` (as its string or id),
 * else named in `tokenizer_config.json` (`config`), else undefined. A name missing from the
 * vocabulary or an id outside it is a `CheckpointError` naming `file`.
 */
export function specialTokenIds(
  options: SpecialTokenOptions,
  config: Record<string, unknown>,
  tokenToId: (token: string) => number | undefined,
  vocabSize: number,
  file: string,
): { bosId: number | undefined; eosId: number | undefined; padId: number | undefined } {
  const idOf = (given: string | number | undefined, fromConfig: unknown, what: string) => {
    if (typeof given === 'number') {
      if (!Number.isSafeInteger(given) || given < 0 || given >= vocabSize) {
        throw new CheckpointError(
          'tokenizer',
          file,
          `${what} id ${given} is outside the vocabulary of ${vocabSize}`,
        );
      }
      return given;
    }
    const name = given ?? tokenName(fromConfig);
    if (name === undefined) return undefined;
    const id = tokenToId(name);
    if (id === undefined) {
      throw new CheckpointError('tokenizer', file, `${what} "${name}" is not in the vocabulary`);
    }
    return id;
  };
  return {
    bosId: idOf(options.bosToken, config.bos_token, 'BOS token'),
    eosId: idOf(options.eosToken, config.eos_token, 'EOS token'),
    padId: idOf(options.padToken, config.pad_token, 'padding token'),
  };
}
