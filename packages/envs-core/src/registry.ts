import { DuplicateEnvError, EnvArgumentError, UnknownEnvError } from './errors.js';
import type { EnvFactory, EnvMeta, TextEnv } from './types.js';

/** A registry entry as returned by `envSpec`. */
export interface EnvSpec {
  readonly id: string;
  readonly meta: Readonly<EnvMeta>;
}

interface Entry {
  factory: (options?: unknown) => TextEnv;
  meta: EnvMeta;
}

const entries = new Map<string, Entry>();
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._\-/]*$/;

/**
 * Registers an environment factory under `id` (e.g. `virtualhome/food-preparation`).
 * Registering the same factory twice is a no-op (register functions are idempotent); a
 * different factory under a taken id throws `DuplicateEnvError` unless `meta.override` is set.
 */
export function registerEnv<O>(id: string, factory: EnvFactory<O>, meta: EnvMeta = {}): void {
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    throw new EnvArgumentError(
      'registerEnv(id)',
      `expected letters, digits, ".", "_", "-" and "/" (starting with a letter or digit), got ${JSON.stringify(id)}.`,
    );
  }
  if (typeof factory !== 'function') {
    throw new EnvArgumentError('registerEnv(factory)', 'expected a function returning a TextEnv.');
  }
  const existing = entries.get(id);
  const f = factory as (options?: unknown) => TextEnv;
  if (existing && existing.factory !== f && !meta.override) throw new DuplicateEnvError(id);
  const { override: _ignored, ...rest } = meta;
  entries.set(id, { factory: f, meta: rest });
}

/** Creates a new instance of the environment registered under `id`. */
export function makeEnv<O = Record<string, unknown>>(id: string, options?: O): TextEnv {
  const entry = entries.get(id);
  if (!entry) throw new UnknownEnvError(id, listEnvs());
  return entry.factory(options);
}

/** All registered ids, sorted. */
export function listEnvs(): string[] {
  return [...entries.keys()].sort();
}

/** The registration of `id`, or `undefined` when none. */
export function envSpec(id: string): EnvSpec | undefined {
  const entry = entries.get(id);
  return entry ? { id, meta: { ...entry.meta } } : undefined;
}

/** Removes a registration; returns whether one existed. */
export function unregisterEnv(id: string): boolean {
  return entries.delete(id);
}
