import { CreditArgumentError } from './errors.js';

/**
 * The position of the token that decides which label an action is: the first token at which the
 * chosen label's ids stop being the beginning of any other label's ids. Labels that share their
 * first words ("put the dirty cup on the shelf", "put the clean cup on the shelf") are decided by
 * the first word where they part (`dirty` / `clean`, position 2 if each word is one token); labels
 * that differ from their first token are decided there (0).
 *
 * A token-level method's credit for the decision an action made is its advantage at this token:
 * before it, every token is shared with other labels, so the BAD backup gives those tokens the
 * same value whichever label follows. When the chosen ids are the whole beginning of another
 * label's (no token of the chosen label separates them), the last token is returned.
 *
 * @param candidates every valid label's token ids, as the policy scored them
 * @param chosen the index of the chosen label in `candidates`
 * @throws CreditArgumentError when `chosen` is not an index of `candidates` or its label has no tokens
 */
export function decidingToken(candidates: readonly ArrayLike<number>[], chosen: number): number {
  if (!Number.isInteger(chosen) || chosen < 0 || chosen >= candidates.length) {
    throw new CreditArgumentError(
      'decidingToken(chosen)',
      `expected an index of the ${candidates.length} candidates, got ${String(chosen)}.`,
    );
  }
  const ids = candidates[chosen]!;
  if (ids.length === 0) {
    throw new CreditArgumentError(
      `decidingToken(candidates[${chosen}])`,
      'the chosen label has no tokens; pass the ids the policy scored.',
    );
  }
  // The others that still share every token so far.
  let sharing = candidates.filter((_, k) => k !== chosen);
  for (let p = 0; p < ids.length; p++) {
    sharing = sharing.filter((c) => p < c.length && c[p] === ids[p]);
    if (sharing.length === 0) return p;
  }
  return ids.length - 1;
}
