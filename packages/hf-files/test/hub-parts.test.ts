import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { getHFHubCachePath } from '@huggingface/hub';
import { describe, expect, it } from 'vitest';
import { HubError } from '../src/errors.js';
import { DEFAULT_HUB_ENDPOINT, hubEnvironment } from '../src/hub-env.js';
import { isCommitHash, parseModelId } from '../src/hub-id.js';
import { withFileLock } from '../src/hub-lock.js';
import { planModelFiles } from '../src/hub-plan.js';
import { DownloadMeter, type DownloadProgress, formatBytes } from '../src/hub-progress.js';
import { resolveModelId } from '../src/model-id.js';
import { withTempDir } from './test-helpers.js';

describe('model ids', () => {
  it('tells Hub ids, folders and embedded names apart', () => {
    expect(parseModelId('Qwen/Qwen2.5-0.5B-Instruct')).toEqual({
      kind: 'hub',
      repo: 'Qwen/Qwen2.5-0.5B-Instruct',
      revision: undefined,
      spec: 'Qwen/Qwen2.5-0.5B-Instruct',
    });
    expect(parseModelId('meta-llama/Llama-3.2-1B-Instruct@refs/pr/3')).toMatchObject({
      kind: 'hub',
      repo: 'meta-llama/Llama-3.2-1B-Instruct',
      revision: 'refs/pr/3',
    });
    expect(parseModelId(`org/name@${'a'.repeat(40)}`)).toMatchObject({ revision: 'a'.repeat(40) });
    for (const name of ['default', 'default-code', 'informative-prior', 'gpt2']) {
      expect(parseModelId(name)).toEqual({ kind: 'name', name, spec: name });
    }
    for (const path of [
      './models/x',
      '../x',
      '/abs/dir',
      '~/m',
      'C:\\m',
      'a/b/c',
      'org/na me',
      'org/-x',
      'org/a--b',
    ]) {
      expect(parseModelId(path).kind, path).toBe('path');
    }
    expect(() => parseModelId('')).toThrow(HubError);
    expect(isCommitHash('a'.repeat(40))).toBe(true);
    expect(isCommitHash('main')).toBe(false);
  });

  it('prefers an existing folder over the Hub, and explains a malformed id', async () => {
    await withTempDir(async (dir) => {
      await mkdir(join(dir, 'org', 'name'), { recursive: true });
      expect(await resolveModelId('org/name', { cwd: dir })).toEqual({
        kind: 'path',
        path: join(dir, 'org', 'name'),
        spec: 'org/name',
      });
      expect(await resolveModelId('org/other', { cwd: dir })).toMatchObject({ kind: 'hub' });
      expect(await resolveModelId('default', { cwd: dir })).toMatchObject({ kind: 'name' });
      expect(await resolveModelId('./org/name', { cwd: dir })).toMatchObject({ kind: 'path' });
      await expect(resolveModelId('org/na me', { cwd: dir })).rejects.toMatchObject({
        code: 'invalid_model_id',
        message: expect.stringMatching(
          /^org\/na me: is neither an existing folder nor a Hub model id/,
        ),
      });
      await expect(resolveModelId('org/name@bad rev', { cwd: dir })).rejects.toMatchObject({
        code: 'invalid_model_id',
      });
    });
  });
});

describe('hubEnvironment', () => {
  it('follows huggingface_hub: HF_HUB_CACHE, then HF_HOME/hub, then XDG_CACHE_HOME, then ~/.cache', () => {
    expect(hubEnvironment({}).cacheDir).toBe(join(homedir(), '.cache', 'huggingface', 'hub'));
    expect(hubEnvironment({ XDG_CACHE_HOME: '/x' }).cacheDir).toBe('/x/huggingface/hub');
    expect(hubEnvironment({ HF_HOME: '/h', XDG_CACHE_HOME: '/x' }).cacheDir).toBe('/h/hub');
    expect(hubEnvironment({ HF_HOME: '/h', HF_HUB_CACHE: '/c' }).cacheDir).toBe('/c');
    expect(hubEnvironment({ HUGGINGFACE_HUB_CACHE: '/old' }).cacheDir).toBe('/old');
    expect(hubEnvironment({ HF_HUB_CACHE: '~/c' }).cacheDir).toBe(join(homedir(), 'c'));
    expect(hubEnvironment({}).endpoint).toBe(DEFAULT_HUB_ENDPOINT);
    expect(hubEnvironment({ HF_ENDPOINT: 'https://mirror.example/' }).endpoint).toBe(
      'https://mirror.example',
    );
    expect(hubEnvironment({ HF_HOME: '/none', HF_TOKEN: ' hf_x ' })).toMatchObject({
      token: 'hf_x',
      tokenSource: 'HF_TOKEN',
    });
    expect(hubEnvironment({ HF_HOME: '/none' }).token).toBeUndefined();
    for (const v of ['1', 'on', 'YES', 'true'])
      expect(hubEnvironment({ HF_HUB_OFFLINE: v }).offline).toBe(true);
    for (const v of ['0', '', 'no'])
      expect(hubEnvironment({ HF_HUB_OFFLINE: v }).offline).toBe(false);
  });

  it('agrees with @huggingface/hub on the cache folder', () => {
    const saved = { ...process.env };
    try {
      for (const env of [
        {},
        { HF_HOME: '/h' },
        { XDG_CACHE_HOME: '/x' },
        { HF_HOME: '/h', HF_HUB_CACHE: '/c' },
      ]) {
        for (const k of ['HF_HOME', 'HF_HUB_CACHE', 'HUGGINGFACE_HUB_CACHE', 'XDG_CACHE_HOME'])
          delete process.env[k];
        Object.assign(process.env, env);
        expect(hubEnvironment(process.env).cacheDir).toBe(getHFHubCachePath());
      }
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});

describe('withFileLock', () => {
  it('serialises holders and takes over the lock of a dead process', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'locks', 'x.poad-lock');
      const order: string[] = [];
      const hold = (name: string, ms: number) =>
        withFileLock(path, async () => {
          order.push(`${name}+`);
          await new Promise((r) => setTimeout(r, ms));
          order.push(`${name}-`);
        });
      await Promise.all([hold('a', 50), hold('b', 10), hold('c', 10)]);
      for (let i = 0; i < order.length; i += 2)
        expect(order[i]!.slice(0, 1)).toBe(order[i + 1]!.slice(0, 1));
      expect(await readdir(join(dir, 'locks'))).toEqual([]);
      // A lock left by a process that no longer exists on this host is taken over at once.
      await writeFile(path, JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), nonce: 'x' }));
      let waited = false;
      await withFileLock(path, async () => undefined, { onWait: () => (waited = true) });
      expect(waited).toBe(false);
    });
  });
});

describe('planModelFiles', () => {
  it('takes config, tokenizer files, generation config and safetensors, and nothing else', () => {
    expect(
      planModelFiles([
        'config.json',
        'tokenizer.json',
        'tokenizer_config.json',
        'generation_config.json',
        'model.safetensors',
        'pytorch_model.bin',
        'README.md',
        'onnx/model.onnx',
        'vocab.json',
      ]),
    ).toEqual({
      hasConfig: true,
      small: ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json'],
      weights: { kind: 'single', file: 'model.safetensors' },
    });
    expect(
      planModelFiles(['config.json', 'consolidated.00.pth', 'pytorch_model.bin']).weights,
    ).toEqual({
      kind: 'none',
      others: ['consolidated.00.pth', 'pytorch_model.bin'],
    });
  });
});

describe('DownloadMeter', () => {
  it('reports bytes, rate and ETA, leaving resumed bytes out of the rate', () => {
    let t = 0;
    const seen: DownloadProgress[] = [];
    const m = new DownloadMeter(
      'o/n',
      (p) => seen.push(p),
      () => t,
      0,
    );
    m.total = 1000;
    m.files = 1;
    m.resumed(400);
    m.received(100);
    t = 1000;
    m.received(100);
    m.report('f', 'download', 600, 1000);
    expect(seen.at(-1)).toMatchObject({ bytes: 600, total: 1000, rate: 200, eta: 2 });
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1_536_000)).toBe('1.54 MB');
    expect(formatBytes(988_000_000)).toBe('988 MB');
  });
});
