import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { type FakeHub, type FakeRepo, startFakeHub } from '@poad/dev-kit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readCheckpoint } from '../src/checkpoint.js';
import { HubError, isHubError } from '../src/errors.js';
import {
  type ModelSnapshot,
  type SnapshotDownloadOptions,
  snapshotDownload,
} from '../src/hub-download.js';
import type { DownloadProgress } from '../src/hub-progress.js';
import { hubModelFiles } from './hub-test-model.js';
import { f32Bits, withTempDir } from './test-helpers.js';

let hub: FakeHub;
let files: Record<string, Uint8Array | string>;
let model: FakeRepo;
const REPO = 'poad-test/tiny-llama';

beforeAll(async () => {
  hub = await startFakeHub();
  files = await hubModelFiles();
  model = hub.addRepo(REPO, files);
});
afterAll(async () => {
  await hub.close();
});
afterEach(() => {
  hub.log.length = 0;
  hub.cutAt.clear();
  hub.corrupt.clear();
  hub.ignoreRange = false;
});

/** An address on which nothing listens. */
async function closedEndpoint(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}`;
}

/** Options that point at the fake Hub and a fresh cache, ignoring the real environment. */
const opts = (cacheDir: string, extra: SnapshotDownloadOptions = {}): SnapshotDownloadOptions => ({
  cacheDir,
  env: { HF_ENDPOINT: hub.endpoint },
  token: null,
  retries: 0,
  ...extra,
});

const bytesOf = (name: string): Uint8Array => {
  const v = files[name]!;
  return typeof v === 'string' ? new TextEncoder().encode(v) : v;
};
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const shardNames = () =>
  [
    ...new Set(
      Object.values(
        JSON.parse(new TextDecoder().decode(bytesOf('model.safetensors.index.json')))
          .weight_map as Record<string, string>,
      ),
    ),
  ].sort();

async function errorOf(p: Promise<unknown>): Promise<HubError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HubError) return e;
    throw e;
  }
  throw new Error('expected a HubError, but the call succeeded');
}

/** Every file under `dir`, as `path` or `path -> target` for symlinks, sorted. */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isSymbolicLink()) out.push(`${relative(dir, p)} -> ${await readlink(p)}`);
      else if (e.isDirectory()) await walk(p);
      else out.push(relative(dir, p));
    }
  };
  await walk(dir);
  return out.sort();
}

/** Every blob named by a sha256 has that hash; no `.incomplete` file names a finished one. */
async function blobsAreVerified(cacheDir: string): Promise<string[]> {
  const blobs = join(cacheDir, 'models--poad-test--tiny-llama', 'blobs');
  if (!existsSync(blobs)) return [];
  const names = await readdir(blobs);
  for (const n of names.filter((x) => /^[0-9a-f]{64}$/.test(x))) {
    expect(sha256(new Uint8Array(await readFile(join(blobs, n)))), n).toBe(n);
  }
  return names;
}

const oneLine = (e: Error, id = REPO) => {
  expect(e.message).not.toContain('\n');
  expect(e.message.startsWith(id)).toBe(true);
};

describe('snapshotDownload from a fake Hub', () => {
  it('lays out the cache as Python does, fetches only what the model needs, config first', async () => {
    await withTempDir(async (cacheDir) => {
      const progress: DownloadProgress[] = [];
      const snap = await snapshotDownload(
        REPO,
        opts(cacheDir, { onProgress: (p) => progress.push(p) }),
      );
      const folder = join(cacheDir, 'models--poad-test--tiny-llama');
      expect(snap).toMatchObject({
        repo: REPO,
        revision: 'main',
        commit: model.commit,
        source: 'hub',
        folder: join(folder, 'snapshots', model.commit),
      });
      const shards = shardNames();
      expect(shards.length).toBe(3);
      const wanted = [
        'config.json',
        'generation_config.json',
        'model.safetensors.index.json',
        'tokenizer_config.json',
        ...shards,
      ].sort();
      expect(snap.files).toEqual(wanted);
      const etag = (f: string) =>
        model.files.get(f)!.lfs ? model.files.get(f)!.sha256 : model.files.get(f)!.oid;
      expect(await tree(folder)).toEqual(
        [
          ...wanted.map((f) => `blobs/${etag(f)}`),
          `refs/main`,
          ...wanted.map((f) => `snapshots/${model.commit}/${f} -> ../../blobs/${etag(f)}`),
        ].sort(),
      );
      expect(await readFile(join(folder, 'refs', 'main'), 'utf8')).toBe(model.commit);
      for (const s of shards) expect(etag(s)).toBe(sha256(bytesOf(s)));
      expect(snap.downloadedBytes).toBe(wanted.reduce((n, f) => n + bytesOf(f).length, 0));
      // Python's lock folder exists; this package's lock files are gone after release.
      expect(await tree(join(cacheDir, '.locks'))).toEqual([]);

      // Requests: info, tree, then HEAD+GET per file with config.json first; no README, .bin, onnx.
      const resolved = hub.log.filter((r) => r.file !== undefined && r.server === 'hub');
      expect(resolved[0]).toMatchObject({ method: 'HEAD', file: 'config.json' });
      expect(new Set(hub.log.filter((r) => r.file).map((r) => r.file))).toEqual(new Set(wanted));
      expect(hub.log.slice(0, 2).map((r) => r.path)).toEqual([
        `/api/models/${REPO}/revision/main`,
        `/api/models/${REPO}/tree/${model.commit}`,
      ]);
      // LFS files come from the CDN; small files from the Hub itself.
      for (const s of shards) expect(hub.gets(s).map((r) => r.server)).toEqual(['cdn']);
      expect(hub.gets('config.json').map((r) => r.server)).toEqual(['hub']);

      // The snapshot is a checkpoint folder: same tensors, bit for bit, as the files served.
      await withTempDir(async (plain) => {
        for (const f of wanted) await writeFile(join(plain, f), bytesOf(f));
        const a = await readCheckpoint(snap.folder);
        const b = await readCheckpoint(plain);
        expect([...a.tensors.keys()].sort()).toEqual([...b.tensors.keys()].sort());
        for (const [n, t] of a.tensors)
          expect(f32Bits(t.data), n).toEqual(f32Bits(b.tensors.get(n)!.data));
      });

      // Progress: bytes grow to the total, with a rate and an ETA; the last report says done.
      const total = snap.downloadedBytes;
      expect(progress.at(-1)).toMatchObject({
        phase: 'done',
        bytes: total,
        total,
        eta: 0,
        filesDone: wanted.length,
        files: wanted.length,
      });
      expect(
        progress.some((p) => p.phase === 'download' && p.rate > 0 && Number.isFinite(p.eta)),
      ).toBe(true);
      expect(new Set(progress.map((p) => p.total))).toEqual(new Set([total]));
      for (let i = 1; i < progress.length; i++)
        expect(progress[i]!.bytes).toBeGreaterThanOrEqual(progress[i - 1]!.bytes);
    });
  });

  it('uses the cache on the next call: one info request and no file request; none at all when asked', async () => {
    await withTempDir(async (cacheDir) => {
      await snapshotDownload(REPO, opts(cacheDir));
      hub.log.length = 0;
      const again = await snapshotDownload(REPO, opts(cacheDir));
      expect(again).toMatchObject({ commit: model.commit, source: 'hub', downloadedBytes: 0 });
      expect(hub.log.map((r) => r.path)).toEqual([`/api/models/${REPO}/revision/main`]);
      hub.log.length = 0;
      const noUpdate = await snapshotDownload(REPO, opts(cacheDir, { checkForUpdates: false }));
      expect(noUpdate).toMatchObject({
        commit: model.commit,
        source: 'cache',
        folder: again.folder,
      });
      const pinned = await snapshotDownload(`${REPO}@${model.commit}`, opts(cacheDir));
      expect(pinned).toMatchObject({
        commit: model.commit,
        source: 'cache',
        revision: model.commit,
      });
      expect(hub.log).toEqual([]);
    });
  });

  it('resumes a transfer cut halfway with a Range request, within one call and across calls', async () => {
    const shard = shardNames()[1]!;
    const sha = model.files.get(shard)!.sha256;
    const size = bytesOf(shard).length;
    const half = Math.floor(size / 2);
    await withTempDir(async (cacheDir) => {
      hub.cutAt.set(sha, half);
      const e = await errorOf(snapshotDownload(REPO, opts(cacheDir)));
      expect(e.code).toBe('network');
      oneLine(e);
      const blobs = join(cacheDir, 'models--poad-test--tiny-llama', 'blobs');
      // The partial file is kept as .incomplete, nothing is linked or named as complete.
      expect((await stat(join(blobs, `${sha}.incomplete`))).size).toBe(half);
      expect(existsSync(join(blobs, sha))).toBe(false);
      expect(
        existsSync(
          join(cacheDir, 'models--poad-test--tiny-llama', 'snapshots', model.commit, shard),
        ),
      ).toBe(false);
      expect(existsSync(join(cacheDir, 'models--poad-test--tiny-llama', 'refs', 'main'))).toBe(
        false,
      );
      await expect(snapshotDownload(REPO, opts(cacheDir, { offline: true }))).rejects.toMatchObject(
        { code: 'offline_not_cached' },
      );

      hub.log.length = 0;
      const snap = await snapshotDownload(REPO, opts(cacheDir));
      const gets = hub.gets(shard);
      expect(gets).toEqual([
        expect.objectContaining({ server: 'cdn', range: `bytes=${half}-`, status: 206 }),
      ]);
      expect(snap.downloadedBytes).toBe(size - half + bytesOf(shardNames()[2]!).length);
      expect(new Uint8Array(await readFile(join(snap.folder, shard)))).toEqual(bytesOf(shard));
      expect((await blobsAreVerified(cacheDir)).some((n) => n.endsWith('.incomplete'))).toBe(false);
    });
    hub.log.length = 0;
    await withTempDir(async (cacheDir) => {
      hub.cutAt.set(sha, half);
      const snap = await snapshotDownload(REPO, opts(cacheDir, { retries: 2 }));
      expect(hub.gets(shard).map((r) => r.range)).toEqual([undefined, `bytes=${half}-`]);
      expect(new Uint8Array(await readFile(join(snap.folder, shard)))).toEqual(bytesOf(shard));
    });
  });

  it('starts over when the server ignores the Range header', async () => {
    const shard = shardNames()[0]!;
    const sha = model.files.get(shard)!.sha256;
    await withTempDir(async (cacheDir) => {
      hub.cutAt.set(sha, 1000);
      await expect(snapshotDownload(REPO, opts(cacheDir))).rejects.toMatchObject({
        code: 'network',
      });
      hub.ignoreRange = true;
      const snap = await snapshotDownload(REPO, opts(cacheDir));
      expect(hub.gets(shard).at(-1)).toMatchObject({ range: 'bytes=1000-', status: 200 });
      expect(new Uint8Array(await readFile(join(snap.folder, shard)))).toEqual(bytesOf(shard));
    });
  });

  it('refuses a download whose sha256 differs from the ETag and keeps nothing of it', async () => {
    const shard = shardNames()[2]!;
    const sha = model.files.get(shard)!.sha256;
    await withTempDir(async (cacheDir) => {
      hub.corrupt.add(sha);
      const e = await errorOf(snapshotDownload(REPO, opts(cacheDir)));
      expect(e.code).toBe('checksum');
      expect(e.message).toMatch(
        new RegExp(`${shard} arrived with sha256 [0-9a-f]{64} but the Hub lists ${sha}`),
      );
      oneLine(e);
      const names = await blobsAreVerified(cacheDir);
      expect(names.filter((n) => n.startsWith(sha))).toEqual([]);
      expect(
        existsSync(
          join(cacheDir, 'models--poad-test--tiny-llama', 'snapshots', model.commit, shard),
        ),
      ).toBe(false);
    });
  });

  it('works offline from the cache with the Hub gone, and says how to fix a model not cached', async () => {
    await withTempDir(async (cacheDir) => {
      await snapshotDownload(REPO, opts(cacheDir));
      hub.log.length = 0;
      const env = { HF_HUB_OFFLINE: '1', HF_ENDPOINT: await closedEndpoint() };
      const snap = await snapshotDownload(REPO, { cacheDir, env });
      expect(snap).toMatchObject({ source: 'cache', commit: model.commit });
      expect(hub.log).toEqual([]);
      const e = await errorOf(snapshotDownload('poad-test/not-downloaded', { cacheDir, env }));
      expect(e.code).toBe('offline_not_cached');
      oneLine(e, 'poad-test/not-downloaded');
      expect(e.message).toContain('HF_HUB_OFFLINE');
      expect(e.message).toContain(cacheDir);
      // A revision never resolved online is not in the cache either.
      await expect(snapshotDownload(`${REPO}@v2`, { cacheDir, env })).rejects.toMatchObject({
        code: 'offline_not_cached',
      });
    });
  });

  it('falls back to a complete cached copy when the Hub cannot be reached, and fails clearly otherwise', async () => {
    await withTempDir(async (cacheDir) => {
      const down = { HF_ENDPOINT: await closedEndpoint() };
      const e = await errorOf(snapshotDownload(REPO, { cacheDir, env: down, token: null }));
      expect(e.code).toBe('network');
      expect(e.message).toMatch(
        /cannot reach http:\/\/127\.0\.0\.1:\d+ .*\(ECONNREFUSED\).*HF_HUB_OFFLINE=1/,
      );
      oneLine(e);
      await snapshotDownload(REPO, opts(cacheDir));
      const snap = await snapshotDownload(REPO, { cacheDir, env: down, token: null });
      expect(snap.source).toBe('cache');
      expect(snap.warning).toContain('ECONNREFUSED');
    });
  });
});

describe('snapshotDownload errors', () => {
  let gated: FakeRepo;
  beforeAll(async () => {
    hub.tokens.add('hf_granted');
    hub.tokens.add('hf_other');
    gated = hub.addRepo('poad-test/gated', files, { gated: true, granted: ['hf_granted'] });
    hub.addRepo('poad-test/bin-only', {
      'config.json': files['config.json']!,
      'pytorch_model.bin': new Uint8Array(1000),
      'tokenizer_config.json': '{}',
    });
    hub.addRepo('poad-test/gpt2', {
      ...files,
      'config.json': JSON.stringify({ model_type: 'gpt2', n_embd: 64, n_layer: 2 }),
    });
    const big = hub.addRepo('poad-test/huge', files);
    for (const s of shardNames()) big.files.get(s)!.claimedSize = 1e15;
  });

  const cases: [string, string, SnapshotDownloadOptions, string, RegExp][] = [
    [
      'an unknown repository',
      'poad-test/nope',
      {},
      'repo_not_found',
      /no such model repository on .*HTTP 401.*set HF_TOKEN if it is private/,
    ],
    [
      'an unknown repository with a token',
      'poad-test/nope',
      { token: 'hf_other' },
      'repo_not_found',
      /HTTP 404/,
    ],
    [
      'a gated repository without a token',
      'poad-test/gated',
      {},
      'gated',
      /gated model and no token was sent \(HTTP 401\); accept its conditions at http:.*\/poad-test\/gated and set HF_TOKEN/,
    ],
    [
      'a gated repository with a token not granted',
      'poad-test/gated',
      { token: 'hf_other' },
      'gated',
      /token in the token option has no access to it \(HTTP 403\)/,
    ],
    [
      'a rejected token',
      REPO,
      { token: 'hf_revoked' },
      'unauthorized',
      /rejected the token .*HTTP 401.*settings\/tokens/,
    ],
    [
      'an unknown revision',
      `${REPO}@no-such-branch`,
      {},
      'revision_not_found',
      /has no revision "no-such-branch" \(HTTP 404\)/,
    ],
    [
      'weights only as .bin',
      'poad-test/bin-only',
      {},
      'no_safetensors',
      /weights only as pytorch_model\.bin; only safetensors is read/,
    ],
    [
      'an unsupported architecture',
      'poad-test/gpt2',
      {},
      'unknown_model_type',
      /config\.json: model_type "gpt2" is not supported; supported types: .*; no weights were downloaded/,
    ],
    [
      'weights larger than the free disk',
      'poad-test/huge',
      {},
      'cache_write',
      /no space left on the disk of the cache .* while writing the weights \(3\.00 PB needed\)/,
    ],
  ];
  for (const [what, id, extra, code, message] of cases) {
    it(`${what}: ${code}, one line, nothing partial`, async () => {
      await withTempDir(async (cacheDir) => {
        const e = await errorOf(snapshotDownload(id, opts(cacheDir, extra)));
        expect(e.code).toBe(code);
        expect(e.message).toMatch(message);
        expect(isHubError(e, code as HubError['code'])).toBe(true);
        oneLine(e, id);
        // No weights were requested, and no weight file exists in the cache.
        expect(
          hub.log.filter((r) => r.file?.endsWith('.safetensors') || r.file?.endsWith('.bin')),
        ).toEqual([]);
        const found = existsSync(cacheDir) ? await tree(cacheDir) : [];
        expect(found.filter((f) => /\.safetensors(?!\.index)|\.bin|refs\//.test(f))).toEqual([]);
      });
    });
  }

  it('a granted token downloads the gated model and is sent only to the Hub, never to the CDN', async () => {
    await withTempDir(async (cacheDir) => {
      const snap = await snapshotDownload('poad-test/gated', {
        cacheDir,
        env: { HF_ENDPOINT: hub.endpoint, HF_TOKEN: 'hf_granted' },
      });
      expect(snap.commit).toBe(gated.commit);
      const hubReqs = hub.log.filter((r) => r.server === 'hub');
      expect(hubReqs.length).toBeGreaterThan(0);
      for (const r of hubReqs) expect(r.authorization).toBe('Bearer hf_granted');
      const cdn = hub.log.filter((r) => r.server === 'cdn');
      expect(cdn.length).toBe(3);
      for (const r of cdn) expect(r.authorization).toBeUndefined();
    });
  });

  it('a full disk while writing: cache_write, and the partial file is not taken as complete', async () => {
    if (!existsSync('/dev/full')) return;
    const shard = shardNames()[0]!;
    const sha = model.files.get(shard)!.sha256;
    await withTempDir(async (cacheDir) => {
      const blobs = join(cacheDir, 'models--poad-test--tiny-llama', 'blobs');
      await mkdir(blobs, { recursive: true });
      // Writes to /dev/full fail with ENOSPC, as on a full disk.
      await symlink('/dev/full', join(blobs, `${sha}.incomplete`));
      const e = await errorOf(snapshotDownload(REPO, opts(cacheDir)));
      expect(e.code).toBe('cache_write');
      expect(e.message).toMatch(
        new RegExp(
          `no space left on the disk of the cache .* while writing ${shard}.*ENOSPC.*HF_HUB_CACHE`,
        ),
      );
      oneLine(e);
      expect(existsSync(join(blobs, sha))).toBe(false);
      expect(
        existsSync(
          join(cacheDir, 'models--poad-test--tiny-llama', 'snapshots', model.commit, shard),
        ),
      ).toBe(false);
    });
  });

  it('a cache that cannot be written: cache_write naming HF_HUB_CACHE', async () => {
    await withTempDir(async (dir) => {
      const cacheDir = join(dir, 'not-a-folder');
      await writeFile(cacheDir, 'a file where the cache should be');
      const e = await errorOf(snapshotDownload(REPO, opts(cacheDir)));
      expect(e.code).toBe('cache_write');
      expect(e.message).toMatch(/cannot write to the cache .*\(ENOTDIR\).*HF_HUB_CACHE/);
      oneLine(e);
    });
  });

  it('refuses ids that are not Hub ids', async () => {
    for (const id of ['default', './models/x', 'a/b/c', 'org/na me']) {
      const e = await errorOf(snapshotDownload(id, opts('/nonexistent')));
      expect(e.code).toBe('invalid_model_id');
    }
  });
});

describe('the environment', () => {
  it('honours HF_ENDPOINT, HF_HOME, HF_HUB_CACHE and HF_TOKEN', async () => {
    await withTempDir(async (dir) => {
      const home = join(dir, 'hf-home');
      const snap = await snapshotDownload(REPO, {
        env: { HF_ENDPOINT: `${hub.endpoint}/`, HF_HOME: home, HF_TOKEN: 'hf_granted' },
      });
      expect(snap.cacheDir).toBe(join(home, 'hub'));
      expect(snap.folder.startsWith(join(home, 'hub', 'models--poad-test--tiny-llama'))).toBe(true);
      expect(snap.endpoint).toBe(hub.endpoint);
      expect(
        hub.log
          .filter((r) => r.server === 'hub')
          .every((r) => r.authorization === 'Bearer hf_granted'),
      ).toBe(true);
      hub.log.length = 0;
      const cache = join(dir, 'elsewhere');
      const other = await snapshotDownload(REPO, {
        env: { HF_ENDPOINT: hub.endpoint, HF_HOME: home, HF_HUB_CACHE: cache },
      });
      expect(other.cacheDir).toBe(cache);
      expect(existsSync(join(cache, 'models--poad-test--tiny-llama', 'refs', 'main'))).toBe(true);
      expect(hub.log.every((r) => r.authorization === undefined)).toBe(true);
      // The token file that `huggingface-cli login` writes is read when HF_TOKEN is unset.
      await writeFile(join(home, 'token'), 'hf_granted\n');
      hub.log.length = 0;
      await snapshotDownload(REPO, { env: { HF_ENDPOINT: hub.endpoint, HF_HOME: home } });
      expect(hub.log[0]!.authorization).toBe('Bearer hf_granted');
    });
  });
});

describe('a cache written by Python', () => {
  it('is found without any request, and an incomplete one is not taken for complete', async () => {
    await withTempDir(async (cacheDir) => {
      // The layout huggingface_hub writes: blobs by etag, relative symlinks, refs/main.
      const commit = 'a'.repeat(40);
      const folder = join(cacheDir, 'models--Some-Org--py-model');
      const names = [
        'config.json',
        'model.safetensors.index.json',
        'tokenizer_config.json',
        ...shardNames(),
      ];
      await mkdir(join(folder, 'refs'), { recursive: true });
      await writeFile(join(folder, 'refs', 'main'), commit);
      for (const n of names) {
        const f = model.files.get(n)!;
        const etag = f.lfs ? f.sha256 : f.oid;
        await mkdir(join(folder, 'blobs'), { recursive: true });
        await writeFile(join(folder, 'blobs', etag), bytesOf(n));
        await mkdir(join(folder, 'snapshots', commit), { recursive: true });
        await symlink(`../../blobs/${etag}`, join(folder, 'snapshots', commit, n));
      }
      const noFetch = (() => {
        throw new Error('no request expected');
      }) as unknown as typeof fetch;
      for (const o of [
        { offline: true },
        { checkForUpdates: false },
      ] as SnapshotDownloadOptions[]) {
        const snap: ModelSnapshot = await snapshotDownload('Some-Org/py-model', {
          cacheDir,
          fetch: noFetch,
          env: {},
          ...o,
        });
        expect(snap).toMatchObject({
          commit,
          source: 'cache',
          folder: join(folder, 'snapshots', commit),
        });
        expect(snap.files).toEqual([...names].sort());
        expect((await lstat(join(snap.folder, 'config.json'))).isSymbolicLink()).toBe(true);
      }
      const ckpt = await readCheckpoint(join(folder, 'snapshots', commit));
      expect(ckpt.config.hidden_size).toBe(64);
      // Remove one shard: the snapshot is incomplete, so offline mode says so.
      await rm(join(folder, 'snapshots', commit, shardNames()[1]!));
      const e = await errorOf(
        snapshotDownload('Some-Org/py-model', { cacheDir, fetch: noFetch, env: {}, offline: true }),
      );
      expect(e.code).toBe('offline_not_cached');
      expect(e.message).toContain(
        `only partly in the cache ${cacheDir} (missing ${shardNames()[1]})`,
      );
    });
  });
});
