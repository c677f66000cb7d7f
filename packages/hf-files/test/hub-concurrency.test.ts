import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type FakeHub, type FakeRepo, startFakeHub } from '@poad/dev-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelSnapshot } from '../src/hub-download.js';
import { hubModelFiles } from './hub-test-model.js';
import { withTempDir } from './test-helpers.js';

const CHILD = fileURLToPath(new URL('./hub-download.child.ts', import.meta.url));
const PKG = fileURLToPath(new URL('..', import.meta.url));
const REPO = 'poad-test/shared';

let hub: FakeHub;
let model: FakeRepo;

beforeAll(async () => {
  hub = await startFakeHub();
  model = hub.addRepo(REPO, await hubModelFiles());
});
afterAll(async () => {
  await hub.close();
});

function run(cacheDir: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, REPO], {
      cwd: PKG,
      env: { ...process.env, HF_ENDPOINT: hub.endpoint, HF_HUB_CACHE: cacheDir, HF_TOKEN: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('two processes fetching the same model at once', () => {
  it('share one download per blob through the lock and both get the complete snapshot', async () => {
    await withTempDir(async (cacheDir) => {
      // Hold every CDN transfer until both processes have asked for that file (HEAD), so the
      // two really overlap; the one holding the blob's lock downloads, the other waits and reuses.
      hub.beforeBlob = async (file) => {
        const deadline = Date.now() + 20_000;
        while (
          hub.log.filter((r) => r.method === 'HEAD' && r.file === file).length < 2 &&
          Date.now() < deadline
        ) {
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      hub.chunkDelayMs = 5;
      const [a, b] = await Promise.all([run(cacheDir), run(cacheDir)]);
      hub.beforeBlob = undefined;
      hub.chunkDelayMs = 0;
      expect(a.err).toBe('');
      expect(b.err).toBe('');
      expect([a.code, b.code]).toEqual([0, 0]);
      const snaps = [a, b].map((r) => JSON.parse(r.out) as ModelSnapshot);
      expect(snaps[0]!.folder).toBe(snaps[1]!.folder);
      expect(snaps.map((s) => s.commit)).toEqual([model.commit, model.commit]);
      // Both processes asked about every weight file; each was transferred exactly once.
      const shards = [...model.files.keys()].filter((f) => /^model-.*\.safetensors$/.test(f));
      for (const s of shards) {
        expect(hub.log.filter((r) => r.method === 'HEAD' && r.file === s).length, s).toBe(2);
        expect(hub.gets(s).length, s).toBe(1);
      }
      // Together they downloaded each byte once.
      const total = snaps[0]!.downloadedBytes + snaps[1]!.downloadedBytes;
      expect(total).toBe(snaps[0]!.files.reduce((n, f) => n + model.files.get(f)!.bytes.length, 0));
      // One blob per file, no partial file and no lock left behind.
      const blobs = await readdir(join(cacheDir, 'models--poad-test--shared', 'blobs'));
      expect(blobs.length).toBe(snaps[0]!.files.length);
      expect(blobs.filter((n) => n.endsWith('.incomplete'))).toEqual([]);
      expect(await readdir(join(cacheDir, '.locks', 'models--poad-test--shared'))).toEqual([]);
      for (const f of snaps[0]!.files) {
        expect(new Uint8Array(await readFile(join(snaps[0]!.folder, f))), f).toEqual(
          model.files.get(f)!.bytes,
        );
      }
    });
  });
});
