import { mkdir, readdir, readFile, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { HubApiError, type ListFileEntry, listFiles, modelInfo } from '@huggingface/hub';
import { CheckpointError, HubError } from './errors.js';
import {
  blobPath,
  fileExists,
  linkPointer,
  lockPath,
  pointerPath,
  type RepoCache,
  readRef,
  repoCache,
  snapshotPath,
  writeRef,
} from './hub-cache.js';
import { hubEnvironment } from './hub-env.js';
import {
  cacheWriteError,
  type HubContext,
  headFile,
  hubFetch,
  isNetworkFailure,
  networkError,
  responseError,
} from './hub-http.js';
import { isCommitHash, isValidRevision, parseModelId } from './hub-id.js';
import { withFileLock } from './hub-lock.js';
import {
  HUB_CONFIG_FILE,
  HUB_WEIGHTS_FILE,
  HUB_WEIGHTS_INDEX_FILE,
  planModelFiles,
  shardsOfIndex,
} from './hub-plan.js';
import { DownloadMeter, type DownloadProgress } from './hub-progress.js';
import { downloadBlob } from './hub-transfer.js';
import { parseLlamaConfig } from './llama-config.js';

/** Options for {@link snapshotDownload}. Unset fields come from the environment ({@link hubEnvironment}). */
export interface SnapshotDownloadOptions {
  /** Branch, tag or commit (default: the id's `@REVISION`, else `main`). */
  revision?: string;
  /** The cache root (default `HF_HUB_CACHE`, `$HF_HOME/hub`, `~/.cache/huggingface/hub`). */
  cacheDir?: string;
  /** The Hub or a mirror (default `HF_ENDPOINT`, else https://huggingface.co). */
  endpoint?: string;
  /** Access token for gated and private models (default `HF_TOKEN` or the login token file); null sends none. */
  token?: string | null;
  /** Resolve from the cache only, with no request (default `HF_HUB_OFFLINE`). */
  offline?: boolean;
  /** Where the defaults above are read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
  /**
   * Progress reports (bytes, rate, ETA), at most ten a second plus one per phase change; they start
   * once every file to fetch is known, so `total` is the same in all of them.
   */
  onProgress?: (progress: DownloadProgress) => void;
  /**
   * Called with the parsed `config.json` before anything else is downloaded; throw to refuse the
   * model (a `CheckpointError` keeps its code). Default: `parseLlamaConfig` (refuses architectures
   * the model code does not implement). `false` checks nothing.
   */
  checkConfig?: ((config: unknown) => void) | false;
  /**
   * For a branch or tag: ask the Hub which commit it points at now (one small request; default
   * true). False uses the cached commit without any request when the cache has a complete copy.
   */
  checkForUpdates?: boolean;
  /** Attempts after the first when a transfer breaks (each resumes where it stopped; default 3). */
  retries?: number;
  /** Timeout of metadata requests in ms (default 30 000). */
  timeoutMs?: number;
  /** Abort a transfer that receives nothing for this long, in ms (default 60 000). */
  idleTimeoutMs?: number;
}

/** A model in the cache, ready to read as a folder. */
export interface ModelSnapshot {
  /** `<cacheDir>/models--ORG--NAME/snapshots/<commit>`: a checkpoint folder `readCheckpoint` reads. */
  folder: string;
  /** `ORG/NAME`. */
  repo: string;
  /** The revision asked for (`main` when none was). */
  revision: string;
  /** The commit it resolved to (40 hex digits): record it to reproduce a run. */
  commit: string;
  /** The model's files in the folder (config, tokenizer files, weights), sorted. */
  files: string[];
  /** `hub` when the Hub was asked for the commit, `cache` when the cache alone answered. */
  source: 'hub' | 'cache';
  /** Bytes downloaded by this call. */
  downloadedBytes: number;
  /** The cache root used. */
  cacheDir: string;
  /** The Hub address used. */
  endpoint: string;
  /** Set when the Hub could not be reached and the cached copy was used instead. */
  warning?: string;
}

interface SnapshotStatus {
  complete: boolean;
  missing: string[];
  files: string[];
  otherWeights: string[];
}

/** What a snapshot folder holds of the model: config, tokenizer files and every weight file. */
async function snapshotStatus(cache: RepoCache, commit: string): Promise<SnapshotStatus> {
  const dir = snapshotPath(cache, commit);
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch {
    return { complete: false, missing: [HUB_CONFIG_FILE], files: [], otherWeights: [] };
  }
  const present: string[] = [];
  for (const n of names) if (await fileExists(`${dir}/${n}`)) present.push(n);
  const plan = planModelFiles(present);
  const missing: string[] = [];
  const files = [...plan.small];
  if (!plan.hasConfig) missing.push(HUB_CONFIG_FILE);
  else files.push(HUB_CONFIG_FILE);
  if (plan.weights.kind === 'none') {
    missing.push(HUB_WEIGHTS_FILE);
  } else {
    files.push(plan.weights.file);
    if (plan.weights.kind === 'index') {
      try {
        const index = JSON.parse(await readFile(`${dir}/${HUB_WEIGHTS_INDEX_FILE}`, 'utf8'));
        for (const s of shardsOfIndex(index)) (present.includes(s) ? files : missing).push(s);
      } catch {
        missing.push(HUB_WEIGHTS_INDEX_FILE);
      }
    }
  }
  return {
    complete: missing.length === 0,
    missing,
    files: files.sort(),
    otherWeights: plan.weights.kind === 'none' ? plan.weights.others : [],
  };
}

function noSafetensors(ctx: HubContext, others: string[]): HubError {
  return others.length > 0
    ? new HubError(
        'no_safetensors',
        ctx.repo,
        `has weights only as ${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''}; only safetensors is read (model.safetensors or model.safetensors.index.json): pick a revision or repository that has them`,
        { revision: ctx.revision },
      )
    : new HubError(
        'missing_file',
        ctx.repo,
        'has no model.safetensors or model.safetensors.index.json; the model must be a transformers checkpoint with safetensors weights',
        { revision: ctx.revision },
      );
}

async function guardFs<T>(ctx: HubContext, path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof HubError || typeof (e as { code?: unknown })?.code !== 'string') throw e;
    throw cacheWriteError(ctx, e, path);
  }
}

async function freeBytes(path: string): Promise<number | undefined> {
  for (let p = path; ; p = dirname(p)) {
    try {
      const s = await statfs(p);
      return s.bavail * s.bsize;
    } catch {
      if (dirname(p) === p) return undefined;
    }
  }
}

function apiError(ctx: HubContext, e: unknown, what: string): unknown {
  if (e instanceof HubError) return e;
  if (isNetworkFailure(e)) return networkError(ctx, e, what);
  if (e instanceof HubApiError) {
    return responseError(ctx, e.statusCode, ctx.lastError?.code, ctx.lastError?.message);
  }
  return e;
}

/**
 * Bring a model from the Hugging Face Hub into the cache that Python's `huggingface_hub` uses, and
 * return its snapshot folder. `id` is `ORG/NAME` or `ORG/NAME@REVISION`.
 *
 * Only what the model needs is fetched: `config.json` first (checked with `checkConfig`, so an
 * unsupported architecture is refused before any weights move), then the shard index if any, the
 * tokenizer files and `generation_config.json` that exist, then the shards the index names or
 * `model.safetensors`. Files already in the cache (from this package or from Python) are not requested again.
 * Transfers resume with HTTP Range requests after a broken connection or an earlier interrupted
 * call, are checked against the sha256 (LFS files) or git blob id (small files) the Hub lists,
 * are written to `blobs/<etag>.incomplete` and renamed when complete, and hold a lock per blob so
 * that processes fetching the same model share one download. Offline (`HF_HUB_OFFLINE=1`), or when
 * the Hub cannot be reached, a complete cached copy is used. Every failure is a one-line
 * {@link HubError} naming the model and the fix.
 */
export async function snapshotDownload(
  id: string,
  options: SnapshotDownloadOptions = {},
): Promise<ModelSnapshot> {
  const parsed = parseModelId(id);
  if (parsed.kind !== 'hub') {
    throw new HubError(
      'invalid_model_id',
      id,
      'is not a Hub model id; write ORG/NAME or ORG/NAME@REVISION (a folder is read directly, not downloaded)',
    );
  }
  const { repo } = parsed;
  if (
    options.revision !== undefined &&
    parsed.revision !== undefined &&
    options.revision !== parsed.revision
  ) {
    throw new HubError(
      'invalid_model_id',
      id,
      `names revision "${parsed.revision}" but the revision option is "${options.revision}"; give one of them`,
    );
  }
  const asked = options.revision ?? parsed.revision;
  const revision = asked ?? 'main';
  if (!isValidRevision(revision)) {
    throw new HubError('invalid_model_id', repo, `"${revision}" is not a valid revision`, {
      revision,
    });
  }
  const env = hubEnvironment(options.env);
  const token =
    options.token === null || options.token === '' ? undefined : (options.token ?? env.token);
  const ctx: HubContext = {
    repo,
    revision: asked,
    endpoint: (options.endpoint ?? env.endpoint).replace(/\/+$/, ''),
    token,
    tokenSource: options.token
      ? 'the token option'
      : options.token === null
        ? undefined
        : env.tokenSource,
    cacheDir: options.cacheDir ?? env.cacheDir,
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs ?? 30_000,
  };
  const cache = repoCache(ctx.cacheDir, repo);
  const offline = options.offline ?? env.offline;
  const check =
    options.checkConfig === false
      ? undefined
      : (options.checkConfig ?? ((json: unknown) => void parseLlamaConfig(json, HUB_CONFIG_FILE)));
  const runCheck = async (commit: string, fresh: boolean) => {
    if (check === undefined) return;
    const path = pointerPath(cache, commit, HUB_CONFIG_FILE);
    let json: unknown;
    try {
      json = JSON.parse(await readFile(path, 'utf8'));
    } catch (cause) {
      throw new HubError('invalid_config', repo, `${HUB_CONFIG_FILE} is not valid JSON`, {
        revision: asked,
        path,
        cause,
      });
    }
    try {
      check(json);
    } catch (e) {
      const tail = fresh ? '; no weights were downloaded' : '';
      if (e instanceof CheckpointError) {
        throw new HubError(e.code, repo, `${e.message}${tail}`, { revision: asked, cause: e });
      }
      throw e;
    }
  };
  const result = (commit: string, s: SnapshotStatus, source: 'hub' | 'cache', bytes = 0) => ({
    folder: snapshotPath(cache, commit),
    repo,
    revision,
    commit,
    files: s.files,
    source,
    downloadedBytes: bytes,
    cacheDir: ctx.cacheDir,
    endpoint: ctx.endpoint,
  });
  const fromCache = async (): Promise<ModelSnapshot | undefined> => {
    const commit = await readRef(cache, revision);
    if (commit === undefined) return undefined;
    const s = await snapshotStatus(cache, commit);
    if (!s.complete) return undefined;
    await runCheck(commit, false);
    return result(commit, s, 'cache');
  };

  if (offline) {
    const hit = await fromCache();
    if (hit !== undefined) return hit;
    const commit = await readRef(cache, revision);
    const s = commit === undefined ? undefined : await snapshotStatus(cache, commit);
    if (s !== undefined && s.otherWeights.length > 0 && s.missing.includes(HUB_WEIGHTS_FILE)) {
      throw noSafetensors(ctx, s.otherWeights);
    }
    const part =
      s === undefined
        ? `is not in the cache ${ctx.cacheDir}`
        : `is only partly in the cache ${ctx.cacheDir} (missing ${s.missing.slice(0, 3).join(', ')})`;
    throw new HubError(
      'offline_not_cached',
      repo,
      `${part} and HF_HUB_OFFLINE=1 forbids downloading it; run once without HF_HUB_OFFLINE to download it, or set HF_HUB_CACHE to a cache that has it`,
      { revision: asked, path: cache.folder },
    );
  }
  if (isCommitHash(revision) || options.checkForUpdates === false) {
    const hit = await fromCache();
    if (hit !== undefined) return hit;
  }

  const apiFetch = hubFetch(ctx);
  let commit: string;
  let names: string[];
  try {
    const info = await modelInfo({
      name: repo,
      revision,
      additionalFields: ['sha', 'filePaths'],
      hubUrl: ctx.endpoint,
      fetch: apiFetch,
    });
    commit = info.sha;
    names = info.filePaths ?? [];
  } catch (e) {
    const err = apiError(ctx, e, 'the repository info');
    if (err instanceof HubError && err.code === 'network') {
      const hit = await fromCache();
      if (hit !== undefined) return { ...hit, warning: err.message };
    }
    throw err;
  }
  if (typeof commit !== 'string' || !isCommitHash(commit)) {
    throw new HubError(
      'hub_response',
      repo,
      `${ctx.endpoint} sent no commit hash for revision "${revision}"; check that HF_ENDPOINT is a Hugging Face Hub or a mirror of it`,
      { revision: asked },
    );
  }
  const plan = planModelFiles(names);
  if (!plan.hasConfig) {
    throw new HubError(
      'missing_file',
      repo,
      `has no ${HUB_CONFIG_FILE} at commit ${commit.slice(0, 12)}; the model must be a transformers checkpoint`,
      { revision: asked },
    );
  }

  const meter = new DownloadMeter(repo, options.onProgress);
  meter.live = false;
  let downloaded = 0;
  let listing: Map<string, ListFileEntry> | undefined;
  const entries = async (): Promise<Map<string, ListFileEntry>> => {
    if (listing !== undefined) return listing;
    const map = new Map<string, ListFileEntry>();
    try {
      for await (const e of listFiles({
        repo: { type: 'model', name: repo },
        revision: commit,
        hubUrl: ctx.endpoint,
        fetch: apiFetch,
      })) {
        if (e.type === 'file') map.set(e.path, e);
      }
    } catch (e) {
      throw apiError(ctx, e, 'the file list');
    }
    listing = map;
    return map;
  };
  const missingOf = async (files: string[]) => {
    const out: string[] = [];
    for (const f of files) if (!(await fileExists(pointerPath(cache, commit, f)))) out.push(f);
    return out;
  };
  const plannedSize = async (files: string[]) => {
    const map = await entries();
    let sum = 0;
    for (const f of files) {
      const e = map.get(f);
      sum += e?.lfs?.size ?? e?.size ?? 0;
    }
    return sum;
  };
  const plan1 = async (files: string[]) => {
    const missing = await missingOf(files);
    if (missing.length > 0) {
      meter.total += await plannedSize(missing);
      meter.files += missing.length;
    }
    return missing;
  };
  const ensure = async (file: string, missing: readonly string[]) => {
    if (!missing.includes(file)) return;
    const entry = (await entries()).get(file);
    if (entry === undefined) {
      throw new HubError(
        'missing_file',
        repo,
        `has no file ${file} at commit ${commit.slice(0, 12)}; the repository is incomplete`,
        { revision: asked },
      );
    }
    const size = entry.lfs?.size ?? entry.size;
    const head = await headFile(ctx, commit, file);
    if (head.size !== size) {
      throw new HubError(
        'hub_response',
        repo,
        `${ctx.endpoint} lists ${file} with ${size} bytes but serves ${head.size}; try again later`,
        { revision: asked },
      );
    }
    const blob = blobPath(cache, head.etag);
    let fresh = false;
    if (!(await fileExists(blob))) {
      await guardFs(ctx, dirname(blob), () => mkdir(dirname(blob), { recursive: true }));
      const lock = lockPath(cache, head.etag);
      await guardFs(ctx, lock, () =>
        withFileLock(
          lock,
          async () => {
            if (await fileExists(blob)) return;
            fresh = true;
            const before = meter.bytesTransferred;
            meter.report(file, 'download', 0, size, true);
            try {
              await downloadBlob(
                ctx,
                {
                  file,
                  url: head.url,
                  blob,
                  size,
                  ...(entry.lfs !== undefined
                    ? { sha256: entry.lfs.oid }
                    : entry.oid !== undefined
                      ? { gitOid: entry.oid }
                      : {}),
                },
                meter,
                { retries: options.retries ?? 3, idleTimeoutMs: options.idleTimeoutMs ?? 60_000 },
              );
            } finally {
              downloaded += meter.bytesTransferred - before;
            }
          },
          { onWait: () => meter.report(file, 'wait', 0, size, true) },
        ),
      );
    }
    // Present already (another revision, or another process fetched it meanwhile).
    if (!fresh) meter.resumed(size);
    await guardFs(ctx, pointerPath(cache, commit, file), () =>
      linkPointer(cache, commit, file, head.etag),
    );
    meter.filesDone++;
    meter.report(file, 'download', size, size, true);
  };

  const first = await plan1([HUB_CONFIG_FILE]);
  await ensure(HUB_CONFIG_FILE, first);
  await runCheck(commit, first.length > 0);
  const { weights } = plan;
  if (weights.kind === 'none') throw noSafetensors(ctx, weights.others);
  // The index next (small), so that every file to fetch and the total size are known before the
  // first progress report; then the tokenizer files, then the weights.
  let heavyFiles = [weights.file];
  if (weights.kind === 'index') {
    await ensure(weights.file, await plan1([weights.file]));
    const indexPath = pointerPath(cache, commit, HUB_WEIGHTS_INDEX_FILE);
    try {
      heavyFiles = shardsOfIndex(JSON.parse(await readFile(indexPath, 'utf8')));
    } catch (e) {
      throw new HubError('invalid_config', repo, (e as Error).message, {
        revision: asked,
        path: indexPath,
        cause: e,
      });
    }
    const absent = heavyFiles.filter((s) => !names.includes(s));
    if (absent.length > 0) {
      throw new HubError(
        'missing_file',
        repo,
        `${HUB_WEIGHTS_INDEX_FILE} names ${absent[0]}, which the repository does not have at commit ${commit.slice(0, 12)}`,
        { revision: asked },
      );
    }
  }
  const light = await plan1(plan.small);
  const heavy = await plan1(heavyFiles);
  if (heavy.length > 0) {
    const need = await plannedSize(heavy);
    const free = await freeBytes(cache.folder);
    if (free !== undefined && free < need) {
      throw cacheWriteError(
        ctx,
        Object.assign(new Error('not enough free space'), { code: 'ENOSPC' }),
        cache.folder,
        'the weights',
        need,
      );
    }
  }
  meter.live = true;
  for (const f of plan.small) await ensure(f, light);
  for (const f of heavyFiles) await ensure(f, heavy);
  await guardFs(ctx, cache.folder, () => writeRef(cache, revision, commit));
  const status = await snapshotStatus(cache, commit);
  meter.report('', 'done', 0, 0, true);
  return result(commit, status, 'hub', downloaded);
}
