import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../src/atomic.js';
import { withTempDir } from './test-helpers.js';

describe('writeFileAtomic', () => {
  it('writes strings and bytes and replaces existing files, leaving no temporary files', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'a.json');
      await writeFile(path, 'old');
      await writeFileAtomic(path, '{"x":1}');
      expect(await readFile(path, 'utf8')).toBe('{"x":1}');
      await writeFileAtomic(path, new Uint8Array([1, 2, 3]));
      expect([...(await readFile(path))]).toEqual([1, 2, 3]);
      expect(await readdir(dir)).toEqual(['a.json']);
    });
  });

  it('concurrent writers never leave a mixed file', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'big.bin');
      const versions = [1, 2, 3, 4, 5, 6].map((v) => new Uint8Array(1 << 18).fill(v));
      await Promise.all(versions.map((v) => writeFileAtomic(path, v)));
      const got = await readFile(path);
      expect(got.length).toBe(1 << 18);
      expect(got.every((b) => b === got[0])).toBe(true);
      expect(await readdir(dir)).toEqual(['big.bin']);
    });
  });

  it('on failure keeps the old target and removes the temporary file', async () => {
    await withTempDir(async (dir) => {
      const target = join(dir, 'is-a-folder');
      await mkdir(target);
      await writeFile(join(target, 'inside'), 'keep');
      await expect(writeFileAtomic(target, 'x')).rejects.toThrow();
      expect((await readdir(dir)).sort()).toEqual(['is-a-folder']);
      expect(await readFile(join(target, 'inside'), 'utf8')).toBe('keep');
      await expect(writeFileAtomic(join(dir, 'missing', 'f'), 'x')).rejects.toMatchObject({
        code: 'ENOENT',
      });
    });
  });
});
