import { createHash } from 'node:crypto';
import type { Dataset } from './datasets.js';
import { DataSciOptionError } from './errors.js';

/**
 * How a program's randomness is seeded when it is scored.
 *
 * - `seeded-v1` (the default): every source of randomness a program reaches without choosing
 *   its own seed draws from a seed derived from the program's text and the data it is scored on
 *   (see {@link programSeed} and the runner), and string hashing uses one fixed hash seed, so the
 *   same program on the same data gets the same score every time, in either sandbox, forked
 *   from the fork server or not.
 * - `os-seeded`: the rule of runs recorded before `seeded-v1` existed: numpy's global state and
 *   Python's `random` seeded from the operating system for every program, a random hash seed per
 *   interpreter (a program without its own `random_state` can score differently each time).
 */
export type ScoringRule = 'seeded-v1' | 'os-seeded';

/** Every rule, newest first. */
export const SCORING_RULES: readonly ScoringRule[] = Object.freeze(['seeded-v1', 'os-seeded']);

/** The rule new scorings use. */
export const DEFAULT_SCORING: ScoringRule = 'seeded-v1';

/** The rule of rewards recorded without one (runs and prior files older than the field). */
export const LEGACY_SCORING: ScoringRule = 'os-seeded';

/**
 * The hash seed (`PYTHONHASHSEED`) of every `seeded-v1` interpreter. It is one fixed value rather
 * than one per program because a fork server's hash secret is set when it starts and every run
 * it forks shares it; a fresh interpreter gets the same value, so both launches hash alike.
 */
export const SCORING_HASH_SEED = '0';

/** `rule` as a {@link ScoringRule}, or a DataSciOptionError naming the choices. */
export function checkScoringRule(rule: unknown, option = 'scoring'): ScoringRule {
  if (typeof rule === 'string' && (SCORING_RULES as readonly string[]).includes(rule)) {
    return rule as ScoringRule;
  }
  throw new DataSciOptionError(
    option,
    `expected one of ${SCORING_RULES.join(', ')}, got ${JSON.stringify(rule)}.`,
  );
}

/** What the sandbox reads of a dataset. */
export type SandboxData = Pick<Dataset, 'n' | 'd' | 'x' | 'y' | 'splits'>;

const digests = new WeakMap<object, string>();

/**
 * SHA-256 (hex) of everything the sandbox reads of `data`: its shape, the features' float64
 * bytes, the labels and the splits. Two datasets with equal digests are scored alike. Cached per
 * object (a dataset is not changed after it is loaded).
 */
export function datasetDigest(data: SandboxData): string {
  const known = digests.get(data);
  if (known) return known;
  const hash = createHash('sha256');
  hash.update(`poad-dsc-data\0${data.n}\0${data.d}\0`);
  hash.update(new Uint8Array(data.x.buffer, data.x.byteOffset, data.x.byteLength));
  const y = Int32Array.from(data.y);
  hash.update(new Uint8Array(y.buffer));
  hash.update(JSON.stringify(data.splits));
  const digest = hash.digest('hex');
  digests.set(data, digest);
  return digest;
}

/**
 * The seed a program is scored with under `rule`: SHA-256 (hex, 256 bits) of the rule, the data's
 * digest and the complete module text; null under `os-seeded` (the runner then seeds from the
 * operating system). The runner derives its generators' seeds from it (runner-source.ts).
 */
export function programSeed(rule: ScoringRule, source: string, dataDigest: string): string | null {
  if (rule === 'os-seeded') return null;
  return createHash('sha256')
    .update(`poad-dsc-seed\0${rule}\0${dataDigest}\0`)
    .update(source)
    .digest('hex');
}
