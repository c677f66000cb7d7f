import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';

/** Makes temporary folders for one test file; see {@link tempDirs}. */
export interface TempDirs {
  /** A new empty folder under the system's temporary folder, named `prefix` and random letters. */
  (): string;
  /** Removes `path` (a folder made some other way) with the others; returns it. */
  track(path: string): string;
}

/**
 * Temporary folders for one test file, each removed after the test that made it (`afterEach`),
 * or with `until: 'file'` after the file's last test (`afterAll`: for folders `beforeAll` makes
 * or tests share). Call it at the top of the file, where vitest registers the hook.
 */
export function tempDirs(prefix: string, o: { until?: 'test' | 'file' } = {}): TempDirs {
  const made: string[] = [];
  (o.until === 'file' ? afterAll : afterEach)(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const track = (path: string) => {
    made.push(path);
    return path;
  };
  return Object.assign(() => track(mkdtempSync(join(tmpdir(), prefix))), { track });
}
