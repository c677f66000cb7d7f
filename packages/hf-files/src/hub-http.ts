import { HubError } from './errors.js';
import { formatBytes } from './hub-progress.js';

/** Who is asking the Hub for what, shared by every request of one download. */
export interface HubContext {
  /** `ORG/NAME`. */
  repo: string;
  /** The revision as the caller gave it (for messages), if any. */
  revision: string | undefined;
  /** The Hub or mirror, without a trailing `/`. */
  endpoint: string;
  /** Access token, if any. */
  token: string | undefined;
  /** Where the token came from (`HF_TOKEN`, a file), for messages. */
  tokenSource: string | undefined;
  /** The cache root, for messages. */
  cacheDir: string;
  /** The fetch to use. */
  fetch: typeof fetch;
  /** Give up on a metadata request after this long. */
  timeoutMs: number;
  /** The `X-Error-Code` and `X-Error-Message` of the last failed answer seen by {@link hubFetch}. */
  lastError?: { code: string | null; message: string | null };
}

/** The `Authorization` header for `url`: sent only to the Hub's own origin, never to a CDN. */
export function authHeaders(ctx: HubContext, url: string): Record<string, string> {
  if (ctx.token === undefined) return {};
  try {
    if (new URL(url).origin !== new URL(ctx.endpoint).origin) return {};
  } catch {
    return {};
  }
  return { Authorization: `Bearer ${ctx.token}` };
}

/**
 * A fetch for `@huggingface/hub`'s calls: adds the token (any format: mirrors need not use `hf_`
 * tokens, which that package insists on), a timeout, and remembers the error headers of a failed
 * answer so that {@link responseError} can tell a gated repository from a missing one.
 */
export function hubFetch(ctx: HubContext): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const headers = new Headers(init?.headers);
    for (const [k, v] of Object.entries(authHeaders(ctx, url))) headers.set(k, v);
    const res = await ctx.fetch(input, {
      ...init,
      headers,
      signal: init?.signal ?? AbortSignal.timeout(ctx.timeoutMs),
    });
    if (!res.ok) {
      ctx.lastError = {
        code: res.headers.get('x-error-code'),
        message: res.headers.get('x-error-message'),
      };
    }
    return res;
  };
}

const tokenName = (ctx: HubContext): string => {
  const src = ctx.tokenSource ?? 'HF_TOKEN';
  return /[/\\]/.test(src) ? `the token file ${src}` : src;
};

/**
 * The error for a failed answer of the Hub: `status` with its `X-Error-Code` (RepositoryNotFound,
 * GatedRepo, RevisionNotFound, EntryNotFound) and `X-Error-Message`; `file` names the file asked
 * for, when it was a file.
 */
export function responseError(
  ctx: HubContext,
  status: number,
  errorCode: string | null | undefined,
  errorMessage: string | null | undefined,
  file?: string,
): HubError {
  const d = { revision: ctx.revision, status };
  const page = `${ctx.endpoint}/${ctx.repo}`;
  const tok = tokenName(ctx);
  const hint = errorMessage ? ` (${errorMessage.replace(/\s+/g, ' ').slice(0, 200)})` : '';
  if (errorCode === 'GatedRepo') {
    return new HubError(
      'gated',
      ctx.repo,
      ctx.token === undefined
        ? `is a gated model and no token was sent (HTTP ${status}); accept its conditions at ${page} and set HF_TOKEN to an access token of that account`
        : `is a gated model and the token in ${tok} has no access to it (HTTP ${status}); accept its conditions at ${page} with the token's account, or use a token of an account that did`,
      d,
    );
  }
  if (errorCode === 'RevisionNotFound') {
    return new HubError(
      'revision_not_found',
      ctx.repo,
      `has no revision "${ctx.revision ?? 'main'}" (HTTP ${status}); use a branch, tag or full commit hash of the repository, or leave out "@…" for main`,
      d,
    );
  }
  if (errorCode === 'EntryNotFound' || (status === 404 && file !== undefined && !errorCode)) {
    return new HubError(
      'missing_file',
      ctx.repo,
      `has no file ${file ?? ''} (HTTP ${status}); the model must be a transformers checkpoint with config.json and safetensors weights`,
      d,
    );
  }
  const invalidToken = /invalid (credentials|user token|token)/i.test(errorMessage ?? '');
  if (ctx.token !== undefined && (invalidToken || (status === 401 && !errorCode))) {
    return new HubError(
      'unauthorized',
      ctx.repo,
      `the Hub rejected the token in ${tok} (HTTP ${status}${hint}); create a new one at ${ctx.endpoint}/settings/tokens, or unset it for public models`,
      d,
    );
  }
  if (errorCode === 'RepositoryNotFound' || status === 401 || status === 404) {
    return new HubError(
      'repo_not_found',
      ctx.repo,
      ctx.token === undefined
        ? `no such model repository on ${ctx.endpoint} (HTTP ${status}); check the id, or set HF_TOKEN if it is private`
        : `no such model repository on ${ctx.endpoint}, or the token in ${tok} cannot see it (HTTP ${status}); check the id and the token`,
      d,
    );
  }
  if (status === 403) {
    return new HubError(
      'gated',
      ctx.repo,
      `access denied (HTTP 403${hint}); ${ctx.token === undefined ? 'set HF_TOKEN to a token of an account with access' : `the token in ${tok} has no access: request access at ${page}`}`,
      d,
    );
  }
  return new HubError(
    'hub_response',
    ctx.repo,
    `${ctx.endpoint} answered HTTP ${status}${hint}${file ? ` for ${file}` : ''}; try again later${status === 429 ? ' (too many requests)' : ''}`,
    d,
  );
}

/** The code of a network failure (`ECONNREFUSED`, `ENOTFOUND`, `timeout` …). */
export function networkCode(e: unknown): string {
  let cur: unknown = e;
  let message = (e as Error)?.message ?? String(e);
  for (let i = 0; i < 5 && cur; i++) {
    const c = cur as { code?: unknown; name?: unknown; cause?: unknown; message?: unknown };
    if (typeof c.code === 'string' && c.code !== '') return c.code;
    if (c.name === 'TimeoutError' || c.name === 'AbortError') return 'timeout';
    if (typeof c.message === 'string' && c.message !== '') message = c.message;
    cur = c.cause;
  }
  return message;
}

/** True when `e` is a failure to talk to a server (not an HTTP answer, not a local error). */
export function isNetworkFailure(e: unknown): boolean {
  if (e instanceof HubError) return e.code === 'network';
  const c = e as { name?: unknown; message?: unknown; cause?: unknown } | null;
  return (
    c?.name === 'TimeoutError' ||
    c?.name === 'AbortError' ||
    (c instanceof TypeError && /fetch failed|terminated|network/i.test(String(c.message)))
  );
}

/** The error for a Hub or mirror that cannot be reached (or a transfer that broke off). */
export function networkError(ctx: HubContext, e: unknown, what?: string): HubError {
  return new HubError(
    'network',
    ctx.repo,
    `cannot reach ${ctx.endpoint}${what ? ` while fetching ${what}` : ''} (${networkCode(e)}); check the network and HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use models already in the cache ${ctx.cacheDir}`,
    { revision: ctx.revision, cause: e },
  );
}

/** The error for a cache that cannot be written (full disk, permissions, read-only). */
export function cacheWriteError(
  ctx: HubContext,
  e: unknown,
  path: string,
  file?: string,
  need?: number,
): HubError {
  const code = (e as { code?: string })?.code ?? 'error';
  const full = code === 'ENOSPC' || code === 'EDQUOT';
  const what = file ? ` while writing ${file}` : '';
  return new HubError(
    'cache_write',
    ctx.repo,
    full
      ? `no space left on the disk of the cache ${ctx.cacheDir}${what}${need ? ` (${formatBytes(need)} needed)` : ''} (${code}); free space there, or set HF_HUB_CACHE to a folder on a disk with room`
      : `cannot write to the cache at ${path}${what} (${code}); make ${ctx.cacheDir} writable, or set HF_HUB_CACHE to a writable folder`,
    { revision: ctx.revision, path, cause: e },
  );
}

/** What the Hub says about one file at one commit before downloading it. */
export interface FileHead {
  /** ETag without quotes: sha256 of an LFS file, git blob oid of a small one. */
  etag: string;
  /** File size in bytes. */
  size: number;
  /** Where to GET the bytes: the CDN address of an LFS file, else the `resolve` address. */
  url: string;
  /** `X-Repo-Commit`, if sent. */
  commit: string | undefined;
}

/** `"abc"` and `W/"abc"` → `abc`. */
export function normalizeEtag(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}

/** `{endpoint}/{repo}/resolve/{revision}/{file}`. */
export function resolveUrl(ctx: HubContext, revision: string, file: string): string {
  const path = file.split('/').map(encodeURIComponent).join('/');
  return `${ctx.endpoint}/${ctx.repo}/resolve/${encodeURIComponent(revision)}/${path}`;
}

/**
 * HEAD `resolve/<commit>/<file>` as Python's `huggingface_hub` does: relative redirects (a renamed
 * repository) are followed, an absolute one (the CDN of an LFS file) is not but becomes the
 * download address, and the ETag and size come from `X-Linked-Etag`/`X-Linked-Size` when sent.
 */
export async function headFile(ctx: HubContext, commit: string, file: string): Promise<FileHead> {
  let url = resolveUrl(ctx, commit, file);
  for (let hop = 0; hop < 5; hop++) {
    let res: Response;
    try {
      res = await ctx.fetch(url, {
        method: 'HEAD',
        redirect: 'manual',
        headers: { ...authHeaders(ctx, url), 'Accept-Encoding': 'identity' },
        signal: AbortSignal.timeout(ctx.timeoutMs),
      });
    } catch (e) {
      throw networkError(ctx, e, file);
    }
    const h = res.headers;
    const location = h.get('location');
    const redirect = res.status >= 300 && res.status < 400 && location !== null;
    if (redirect && !/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
      url = new URL(location, url).href;
      continue;
    }
    if (!res.ok && !redirect) {
      throw responseError(ctx, res.status, h.get('x-error-code'), h.get('x-error-message'), file);
    }
    const etag = h.get('x-linked-etag') ?? h.get('etag');
    const size = Number(h.get('x-linked-size') ?? h.get('content-length'));
    if (etag === null || !Number.isSafeInteger(size) || size < 0) {
      throw new HubError(
        'hub_response',
        ctx.repo,
        `${ctx.endpoint} sent no ETag or size for ${file}; check that HF_ENDPOINT is a Hugging Face Hub or a mirror of it`,
        { revision: ctx.revision, status: res.status },
      );
    }
    return {
      etag: normalizeEtag(etag),
      size,
      url: redirect ? location : url,
      commit: h.get('x-repo-commit') ?? undefined,
    };
  }
  throw new HubError(
    'hub_response',
    ctx.repo,
    `too many redirects for ${file} from ${ctx.endpoint}`,
    {
      revision: ctx.revision,
    },
  );
}
