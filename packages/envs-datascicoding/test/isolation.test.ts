import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseIsolation, probeIsolation, SandboxUnavailableError } from '../src/index.js';
import { PYTHON } from './helpers.js';

const scratch = mkdtempSync(join(tmpdir(), 'poad-dsc-isolation-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const runningAsRoot = process.geteuid?.() === 0;

describe('choosing the isolation', () => {
  it('uses namespaces on this machine when they work', async () => {
    const probe = await probeIsolation(PYTHON);
    if (!probe.namespaces) {
      // Documented fallback: auto resolves to basic and the reason is reported.
      expect(probe.detail.length).toBeGreaterThan(0);
      expect(await chooseIsolation('auto', PYTHON)).toBe('basic');
      await expect(chooseIsolation('namespaces', PYTHON)).rejects.toThrow(SandboxUnavailableError);
      return;
    }
    expect(await chooseIsolation('auto', PYTHON)).toBe('namespaces');
    expect(await chooseIsolation('basic', PYTHON)).toBe('basic');
  }, 30_000);

  it.runIf(runningAsRoot)(
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
