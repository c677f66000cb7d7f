import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseIsolation, probeIsolation, SandboxUnavailableError } from '../src/index.js';
import { namespaceSupport, PYTHON } from './helpers.js';

const scratch = mkdtempSync(join(tmpdir(), 'poad-dsc-isolation-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const runningAsRoot = process.geteuid?.() === 0;
// Under CI, missing namespaces fail here unless .ci/run found the machine has none.
const probe = await probeIsolation(PYTHON);
const support = namespaceSupport(probe);

describe('choosing the isolation', () => {
  it.runIf(support === 'namespaces')(
    'uses namespaces on this machine, where they work',
    async () => {
      expect(probe.detail).toBe('');
      expect(await chooseIsolation('auto', PYTHON)).toBe('namespaces');
      expect(await chooseIsolation('namespaces', PYTHON)).toBe('namespaces');
      expect(await chooseIsolation('basic', PYTHON)).toBe('basic');
    },
    30_000,
  );

  it.runIf(support === 'fallback')(
    'falls back to basic on this machine without namespaces, and says why when they are demanded',
    async () => {
      expect(probe.detail.length).toBeGreaterThan(0);
      expect(await chooseIsolation('auto', PYTHON)).toBe('basic');
      const error = await chooseIsolation('namespaces', PYTHON).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SandboxUnavailableError);
      expect((error as Error).message).toContain(probe.detail);
    },
    30_000,
  );

  // As root the sandbox drops to nobody before it creates the namespaces, so it needs them.
  it.runIf(runningAsRoot && support === 'namespaces')(
    'as root, refuses namespaces when nobody cannot reach the temp directory, and says why',
    async () => {
      const hidden = join(scratch, 'private');
      mkdirSync(hidden);
      chmodSync(scratch, 0o700);
      const probe = await probeIsolation(PYTHON, hidden);
      expect(probe.namespaces).toBe(false);
      expect(probe.detail).toMatch(/Permission denied/);
      const error = await chooseIsolation('namespaces', PYTHON, hidden).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SandboxUnavailableError);
      expect((error as Error).message).toMatch(/Permission denied/);
      expect(await chooseIsolation('auto', PYTHON, hidden)).toBe('basic');
    },
    30_000,
  );
});
