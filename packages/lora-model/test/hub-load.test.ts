// loadCausalLM('ORG/NAME[@REVISION]'): a small random model served by the fake Hub of
// @poad/dev-kit, downloaded into a temporary Hub cache and loaded; the same numbers as the folder.
import { cp, lstat, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultModelPath } from '@poad/default-model';
import { type FakeHub, type FakeRepo, startFakeHub } from '@poad/dev-kit';
import { type DownloadProgress, HubError, writeCheckpoint } from '@poad/hf-files';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCausalLM, llamaConfigOf, loadCausalLM } from '../src/index.js';
import { SeededRng } from '../src/rng.js';
import { tinyConfig } from './configs.js';
import { randomIds, tempDir, useTestBackend } from './helpers.js';

const REPO = 'poad-test/tiny-hub';
const VOCAB = 832; // the default model's tokenizer
let hub: FakeHub;
let repo: FakeRepo;
let folder: string;
const temps: string[] = [];

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));
const ids = [randomIds(new SeededRng(5), 9, VOCAB), randomIds(new SeededRng(6), 9, VOCAB)];

async function cacheDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'poad-hub-cache-'));
  temps.push(dir);
  return dir;
}

const hubOptions = (cache: string) => ({
  cacheDir: cache,
  endpoint: hub.endpoint,
  token: null,
  retries: 0,
});

beforeAll(async () => {
  await useTestBackend();
  hub = await startFakeHub();
  // A random model (sharded weights) with the default model's tokenizer, as a Hub repository
  // holds it, plus files a download must leave alone.
  const model = createCausalLM(
    tinyConfig({ vocab_size: VOCAB, hidden_size: 32, intermediate_size: 48 }),
    { seed: 17 },
  );
  folder = await tempDir('poad-hub-model-');
  temps.push(folder);
  await writeCheckpoint(folder, llamaConfigOf(model), await model.exportWeights(), {
    tokenizerJson: await readFile(join(defaultModelPath, 'tokenizer.json'), 'utf8'),
    maxShardBytes: 60_000,
  });
  model.dispose();
  const files: Record<string, Uint8Array | string> = {};
  for (const f of await readdir(folder)) files[f] = new Uint8Array(await readFile(join(folder, f)));
  files['README.md'] = '# a test model\n';
  files['pytorch_model.bin'] = new Uint8Array(20_000).fill(7);
  repo = hub.addRepo(REPO, files);
});

afterAll(async () => {
  await hub.close();
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

describe('loadCausalLM of a Hub model id', () => {
  it('downloads into the Hub cache as Python lays it out and loads the numbers of the folder', async () => {
    const cache = await cacheDir();
    const progress: DownloadProgress[] = [];
    const fromHub = await loadCausalLM(REPO, {
      hub: hubOptions(cache),
      onProgress: (p) => progress.push(p),
    });
    const fromFolder = await loadCausalLM(folder);
    try {
      const snap = fromHub.source?.snapshot;
      expect(snap).toMatchObject({ repo: REPO, revision: 'main', commit: repo.commit });
      const root = join(cache, 'models--poad-test--tiny-hub');
      expect(fromHub.source?.folder).toBe(join(root, 'snapshots', repo.commit));
      expect(fromFolder.source).toEqual({ folder });
      expect((await readFile(join(root, 'refs', 'main'), 'utf8')).trim()).toBe(repo.commit);
      // Only the model's files; each a relative link into blobs/.
      const shards = (await readdir(folder)).filter((f) => /^model-.*\.safetensors$/.test(f));
      expect(shards.length).toBeGreaterThan(1);
      const snapshotFiles = (await readdir(snap!.folder)).sort();
      expect(snapshotFiles).toEqual(
        ['config.json', 'model.safetensors.index.json', 'tokenizer.json', ...shards].sort(),
      );
      for (const f of snapshotFiles) {
        expect((await lstat(join(snap!.folder, f))).isSymbolicLink(), f).toBe(true);
        expect(await readlink(join(snap!.folder, f))).toMatch(/^\.\.\/\.\.\/blobs\/[0-9a-f]+$/);
      }
      expect(hub.gets().map((r) => r.file)).not.toContain('pytorch_model.bin');
      expect(hub.gets().map((r) => r.file)).not.toContain('README.md');
      // Progress with bytes, rate and ETA, ending at the total.
      const last = progress.filter((p) => p.phase === 'download').at(-1)!;
      expect(last.bytes).toBe(last.total);
      expect(last.total).toBeGreaterThan(100_000);
      expect(progress.at(-1)?.phase).toBe('done');
      // The same model, bit for bit, with its tokenizer.
      expect(bits(await fromHub.logits(ids))).toEqual(bits(await fromFolder.logits(ids)));
      expect(fromHub.tokenizer?.vocabSize).toBe(fromFolder.tokenizer?.vocabSize);
      expect(await fromHub.tokenizer?.encode('open the fridge')).toEqual(
        await fromFolder.tokenizer?.encode('open the fridge'),
      );
    } finally {
      fromHub.dispose();
      fromFolder.dispose();
    }
  });

  it('loads a cached model again without downloading; pinned to a commit, with no request at all', async () => {
    const cache = await cacheDir();
    (await loadCausalLM(REPO, { hub: hubOptions(cache) })).dispose();
    hub.log.length = 0;
    // A branch: one small request for the commit it points at now (as huggingface_hub does), no file.
    const again = await loadCausalLM(REPO, { hub: hubOptions(cache) });
    again.dispose();
    expect(hub.log.map((r) => r.path)).toEqual([`/api/models/${REPO}/revision/main`]);
    expect(again.source?.snapshot).toMatchObject({ source: 'hub', downloadedBytes: 0 });
    hub.log.length = 0;
    // A commit (what a resumed training run asks for), or checkForUpdates false: nothing at all.
    const pinned = await loadCausalLM(`${REPO}@${repo.commit}`, { hub: hubOptions(cache) });
    pinned.dispose();
    const noCheck = await loadCausalLM(REPO, {
      hub: { ...hubOptions(cache), checkForUpdates: false },
    });
    noCheck.dispose();
    expect(hub.log).toEqual([]);
    expect(pinned.source?.snapshot).toMatchObject({ commit: repo.commit, source: 'cache' });
  });

  it('HF_HUB_OFFLINE=1 loads from the cache (HF_HUB_CACHE) with the Hub stopped', async () => {
    const cache = await cacheDir();
    const own = await startFakeHub();
    own.addRepo(REPO, Object.fromEntries([...repo.files].map(([k, f]) => [k, f.bytes])));
    (await loadCausalLM(REPO, { hub: { cacheDir: cache, endpoint: own.endpoint } })).dispose();
    await own.close();
    const saved = { ...process.env };
    process.env.HF_HUB_OFFLINE = '1';
    process.env.HF_HUB_CACHE = cache;
    process.env.HF_ENDPOINT = own.endpoint;
    try {
      const offline = await loadCausalLM(REPO);
      const fromFolder = await loadCausalLM(folder);
      expect(offline.source?.snapshot).toMatchObject({ source: 'cache' });
      expect(bits(await offline.logits(ids))).toEqual(bits(await fromFolder.logits(ids)));
      offline.dispose();
      fromFolder.dispose();
      // Not in that cache: one line naming the model and the fix.
      const e = await loadCausalLM('poad-test/not-cached').catch((err: unknown) => err);
      expect(e).toBeInstanceOf(HubError);
      expect((e as HubError).code).toBe('offline_not_cached');
      expect((e as Error).message).toMatch(/^poad-test\/not-cached: .*HF_HUB_OFFLINE/);
    } finally {
      for (const k of ['HF_HUB_OFFLINE', 'HF_HUB_CACHE', 'HF_ENDPOINT']) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });

  it('an existing folder wins over a Hub id of the same text', async () => {
    const cwd = process.cwd();
    const work = await tempDir('poad-hub-cwd-');
    temps.push(work);
    await cp(folder, join(work, REPO), { recursive: true });
    process.chdir(work);
    hub.log.length = 0;
    try {
      const local = await loadCausalLM(REPO);
      expect(local.source).toEqual({ folder: join(work, REPO) });
      local.dispose();
      expect(hub.log).toEqual([]);
    } finally {
      process.chdir(cwd);
    }
  });

  it('refuses an unknown repository with one line naming it', async () => {
    const e = await loadCausalLM('poad-test/nope', { hub: hubOptions(await cacheDir()) }).catch(
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(HubError);
    expect((e as HubError).code).toBe('repo_not_found');
    expect((e as Error).message).toMatch(/^poad-test\/nope: /);
    expect((e as Error).message).not.toContain('\n');
  });
});
