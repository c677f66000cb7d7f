import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Whether the tests run under CI: `CI` set to anything but empty, `0` or `false`. `.ci/run` sets
 * `CI=true` and turbo passes it to the test tasks (`passThroughEnv` in turbo.json). A test that
 * needs something of the machine (a GPU adapter, a browser, a Python package, native kernels)
 * fails under CI where it is missing, instead of skipping.
 */
export function inCI(): boolean {
  return !['', '0', 'false'].includes(process.env.CI ?? '');
}

/**
 * Resolves once `condition()` holds, checking every `intervalMs`. The wait ends at the event;
 * `timeoutMs` only stops a hang, and the error names `what` was awaited.
 */
export async function waitUntil(
  condition: () => boolean,
  what: string,
  o: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const timeoutMs = o.timeoutMs ?? 120_000;
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`waited ${timeoutMs} ms for ${what}, in vain`);
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 100));
  }
}

/**
 * A fingerprint of everything under `dir` (paths, sizes and modification times): it changes
 * whenever a run there writes something, e.g. a metrics row, a checkpoint or a log line.
 */
export function folderProgress(dir: string): string {
  const parts: string[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch {
      return; // not there (yet), or removed while we looked
    }
    for (const name of names) {
      const path = join(d, name);
      try {
        const s = statSync(path);
        if (s.isDirectory()) walk(path);
        else parts.push(`${path}:${s.size}:${s.mtimeMs}`);
      } catch {
        // removed while we looked
      }
    }
  };
  walk(dir);
  return parts.join('\n');
}

/**
 * Awaits `work` for as long as it makes progress: it fails only when `progress()` (e.g.
 * {@link folderProgress} of the runs' folder, or the length of the output so far) stays the same
 * for `stallMs`, naming `what` stalled. So a long job on a loaded machine passes as long as each
 * of its steps (an iteration, a checkpoint, an evaluation) ends within `stallMs`, where a cap on
 * the whole job would fail it.
 */
export async function withProgress<T>(
  work: Promise<T>,
  progress: () => string,
  o: { what: string; stallMs?: number; intervalMs?: number },
): Promise<T> {
  const stallMs = o.stallMs ?? 180_000;
  let last = progress();
  let since = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      const now = progress();
      if (now !== last) {
        last = now;
        since = Date.now();
      } else if (Date.now() - since > stallMs) {
        reject(new Error(`${o.what} made no progress for ${stallMs} ms`));
      }
    }, o.intervalMs ?? 1000);
  });
  try {
    return await Promise.race([work, stalled]);
  } finally {
    clearInterval(timer);
  }
}
