import { ModelInputError } from './errors.js';

/** Check that `ids` is a non-empty-able list of integer token ids below `vocab`. */
export function checkIds(
  name: string,
  ids: readonly number[],
  vocab: number,
  allowEmpty = true,
): void {
  if (!Array.isArray(ids)) throw new ModelInputError(name, 'expected an array of token ids');
  if (!allowEmpty && ids.length === 0) {
    throw new ModelInputError(name, 'must contain at least one token id');
  }
  for (let i = 0; i < ids.length; i++) {
    const t = ids[i];
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 0 || t >= vocab) {
      throw new ModelInputError(
        `${name}[${i}]`,
        `token id ${String(t)} is not an integer in [0, ${vocab}); check the tokenizer matches the model`,
      );
    }
  }
}

/**
 * A right-padded batch of `prompt ++ action` sequences plus, for every action token, the flat row
 * whose output predicts it (position promptLen − 1 + k) and the token itself.
 */
export interface TeacherBatch {
  ids: Int32Array;
  batch: number;
  seq: number;
  /** Flat row (b·seq + position) predicting each action token, all samples concatenated. */
  rows: Int32Array;
  /** The action tokens, aligned with `rows`. */
  targets: Int32Array;
  /** Sample i owns entries offsets[i] .. offsets[i+1] of `rows` / `targets`. */
  offsets: number[];
}

/** Build a {@link TeacherBatch}; only prompt + action minus its last token is fed. */
export function teacherBatch(
  prompts: readonly (readonly number[])[],
  actions: readonly (readonly number[])[],
  vocab: number,
): TeacherBatch {
  if (!Array.isArray(prompts) || prompts.length === 0) {
    throw new ModelInputError('prompts', 'expected a non-empty array of token id arrays');
  }
  if (!Array.isArray(actions) || actions.length !== prompts.length) {
    throw new ModelInputError(
      'actions',
      `expected one action per prompt (${prompts.length}), got ${Array.isArray(actions) ? actions.length : typeof actions}`,
    );
  }
  let seq = 1;
  let total = 0;
  prompts.forEach((p, i) => {
    checkIds(`prompts[${i}]`, p as number[], vocab, false);
    const a = actions[i] as number[];
    checkIds(`actions[${i}]`, a, vocab);
    seq = Math.max(seq, p.length + Math.max(a.length - 1, 0));
    total += a.length;
  });
  const batch = prompts.length;
  const ids = new Int32Array(batch * seq);
  const rows = new Int32Array(total);
  const targets = new Int32Array(total);
  const offsets = [0];
  let n = 0;
  prompts.forEach((p, b) => {
    const a = actions[b] as number[];
    ids.set(p, b * seq);
    if (a.length > 1) ids.set(a.slice(0, a.length - 1), b * seq + p.length);
    for (let k = 0; k < a.length; k++) {
      rows[n] = b * seq + p.length - 1 + k;
      targets[n] = a[k] as number;
      n++;
    }
    offsets.push(n);
  });
  return { ids, batch, seq, rows, targets, offsets };
}

/** Split a flat array into per-sample number arrays by offsets. */
export function splitByOffsets(flat: ArrayLike<number>, offsets: readonly number[]): number[][] {
  const all = Array.from(flat);
  const out: number[][] = [];
  for (let i = 0; i + 1 < offsets.length; i++) out.push(all.slice(offsets[i], offsets[i + 1]));
  return out;
}
