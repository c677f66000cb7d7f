// A local stand-in for the Hugging Face Hub on 127.0.0.1, answering the requests the
// Hub client makes (repository info, tree, HEAD/GET resolve with the Hub's headers and a CDN on a
// second port with Range support), with switches to cut, corrupt, hold or refuse transfers.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One file of a fake repository. */
export interface FakeFile {
  bytes: Uint8Array;
  /** Stored with Git LFS: served through the CDN, named by sha256. */
  lfs: boolean;
  sha256: string;
  /** Git blob id of the file (of its LFS pointer for LFS files). */
  oid: string;
  /** Size the Hub claims (default the real size). */
  claimedSize?: number;
}

/** A fake model repository. */
export interface FakeRepo {
  id: string;
  commit: string;
  /** Branches and tags → commit. */
  refs: Map<string, string>;
  files: Map<string, FakeFile>;
  /** Gated: files need a token in `granted`. */
  gated: boolean;
  granted: Set<string>;
}

/** One request the fake servers saw. */
export interface LoggedRequest {
  server: 'hub' | 'cdn';
  method: string;
  path: string;
  /** The repository file for resolve and CDN requests. */
  file?: string;
  range?: string;
  authorization?: string;
  status: number;
}

export interface FakeHub {
  endpoint: string;
  cdn: string;
  log: LoggedRequest[];
  repos: Map<string, FakeRepo>;
  /** Tokens the Hub accepts at all (others get 401 invalid credentials). */
  tokens: Set<string>;
  /** Next CDN GET of this sha256 stops (socket destroyed) when the file position reaches the value. */
  cutAt: Map<string, number>;
  /** CDN GETs of these sha256 serve one byte changed. */
  corrupt: Set<string>;
  /** The CDN ignores Range headers (answers 200 with the whole file). */
  ignoreRange: boolean;
  /** Awaited before a CDN GET sends its body. */
  beforeBlob?: (file: string) => Promise<void>;
  /** Delay between 16 KiB chunks of CDN bodies, in ms. */
  chunkDelayMs: number;
  addRepo(
    id: string,
    files: Record<string, Uint8Array | string>,
    options?: { gated?: boolean; granted?: string[]; lfs?: (name: string) => boolean },
  ): FakeRepo;
  /** Requests of one kind: resolve/CDN GETs by file, etc. */
  gets(file?: string): LoggedRequest[];
  close(): Promise<void>;
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const gitOid = (b: Uint8Array) =>
  createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function parseRange(h: string | undefined, size: number): { start: number; end: number } | null {
  const m = /^bytes=(\d+)-(\d*)$/.exec(h ?? '');
  if (!m) return null;
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  return { start, end };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Start the fake Hub and its CDN on free loopback ports. */
export async function startFakeHub(): Promise<FakeHub> {
  const log: LoggedRequest[] = [];
  const blobs = new Map<string, { file: string; f: FakeFile }>();
  let hub: FakeHub;

  const authOf = (req: IncomingMessage) => req.headers.authorization;
  const tokenOf = (req: IncomingMessage) => /^Bearer (.+)$/.exec(authOf(req) ?? '')?.[1];
  /** The request's URL and its log entry (status 0 until the reply sets it), logged. */
  const logRequest = (server: LoggedRequest['server'], req: IncomingMessage) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const entry: LoggedRequest = {
      server,
      method: req.method ?? 'GET',
      path: url.pathname,
      range: req.headers.range,
      authorization: authOf(req),
      status: 0,
    };
    log.push(entry);
    return { url, entry };
  };

  const hubServer = createServer((req, res) => {
    const { url, entry } = logRequest('hub', req);
    const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      entry.status = status;
      send(res, status, req.method === 'HEAD' ? undefined : body, headers);
    };
    const token = tokenOf(req);
    if (token !== undefined && !hub.tokens.has(token)) {
      reply(
        401,
        { error: 'Invalid credentials in Authorization header' },
        {
          'X-Error-Message': 'Invalid credentials in Authorization header',
        },
      );
      return;
    }
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/(revision|tree)\/([^/]+)(\/.*)?$/.exec(
      url.pathname,
    );
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    const repoId = api?.[1] ?? resolve?.[1];
    const repo = repoId === undefined ? undefined : hub.repos.get(repoId);
    if (repoId === undefined) {
      reply(404, { error: 'Not found' });
      return;
    }
    if (repo === undefined) {
      reply(
        token === undefined ? 401 : 404,
        { error: 'Repository not found' },
        {
          'X-Error-Code': 'RepositoryNotFound',
          'X-Error-Message': 'Repository not found',
        },
      );
      return;
    }
    const rev = decodeURIComponent(api?.[3] ?? resolve?.[2] ?? '');
    const commit = repo.refs.get(rev) ?? (rev === repo.commit ? rev : undefined);
    if (commit === undefined) {
      reply(
        404,
        { error: `Invalid rev id: ${rev}` },
        {
          'X-Error-Code': 'RevisionNotFound',
          'X-Error-Message': `Invalid rev id: ${rev}`,
        },
      );
      return;
    }
    if (api?.[2] === 'revision') {
      reply(200, {
        _id: `id-${repo.id}`,
        id: repo.id,
        sha: commit,
        private: false,
        gated: repo.gated ? 'auto' : false,
        downloads: 0,
        likes: 0,
        lastModified: '2024-09-25T00:00:00.000Z',
        pipeline_tag: 'text-generation',
        siblings: [...repo.files.keys()].map((rfilename) => ({ rfilename })),
      });
      return;
    }
    if (api?.[2] === 'tree') {
      const recursive = url.searchParams.get('recursive') === 'true';
      const out: unknown[] = [];
      const dirs = new Set<string>();
      for (const [path, f] of repo.files) {
        if (!recursive && path.includes('/')) {
          dirs.add(path.split('/')[0]!);
          continue;
        }
        const size = f.claimedSize ?? f.bytes.length;
        out.push({
          type: 'file',
          oid: f.oid,
          size,
          path,
          ...(f.lfs ? { lfs: { oid: f.sha256, size, pointerSize: 134 } } : {}),
        });
      }
      for (const d of dirs)
        out.push({ type: 'directory', oid: gitOid(Buffer.from(d)), size: 0, path: d });
      reply(200, out);
      return;
    }
    const file = decodeURIComponent(resolve![3]!);
    entry.file = file;
    const f = repo.files.get(file);
    if (f === undefined) {
      reply(
        404,
        { error: 'Entry not found' },
        {
          'X-Error-Code': 'EntryNotFound',
          'X-Error-Message': 'Entry not found',
          'X-Repo-Commit': commit,
        },
      );
      return;
    }
    if (repo.gated && (token === undefined || !repo.granted.has(token))) {
      const msg = `Access to model ${repo.id} is restricted. You must have access to it and be authenticated to access it. Please log in.`;
      reply(
        token === undefined ? 401 : 403,
        { error: msg },
        {
          'X-Error-Code': 'GatedRepo',
          'X-Error-Message': msg,
        },
      );
      return;
    }
    const size = f.claimedSize ?? f.bytes.length;
    if (f.lfs) {
      entry.status = 302;
      res.writeHead(302, {
        Location: `${hub.cdn}/repos/${f.sha256}?X-Amz-Signature=${randomBytes(4).toString('hex')}`,
        'X-Linked-Etag': `"${f.sha256}"`,
        'X-Linked-Size': String(size),
        'X-Repo-Commit': commit,
        ETag: `"${f.oid}"`,
        'Content-Length': '0',
      });
      res.end();
      return;
    }
    serveBytes(req, res, entry, f, size, { 'X-Repo-Commit': commit, ETag: `"${f.oid}"` }, false);
  });

  const serveBytes = async (
    req: IncomingMessage,
    res: ServerResponse,
    entry: LoggedRequest,
    f: FakeFile,
    size: number,
    headers: Record<string, string>,
    cdn: boolean,
  ) => {
    const range = cdn && hub.ignoreRange ? null : parseRange(req.headers.range, size);
    if (range !== null && range.start >= size) {
      entry.status = 416;
      res.writeHead(416, { 'Content-Range': `bytes */${size}` });
      res.end();
      return;
    }
    const start = range?.start ?? 0;
    const end = range?.end ?? size - 1;
    entry.status = range ? 206 : 200;
    res.writeHead(entry.status, {
      ...headers,
      'Accept-Ranges': 'bytes',
      'Content-Length': String(end - start + 1),
      'Content-Type': 'application/octet-stream',
      ...(range ? { 'Content-Range': `bytes ${start}-${end}/${size}` } : {}),
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    let body = f.bytes;
    if (cdn && hub.corrupt.has(f.sha256)) {
      body = Uint8Array.from(f.bytes);
      const mid = body.length >> 1;
      body[mid] = body[mid]! ^ 0xff;
    }
    const cut = cdn ? hub.cutAt.get(f.sha256) : undefined;
    if (cut !== undefined) hub.cutAt.delete(f.sha256);
    if (cdn && hub.beforeBlob) await hub.beforeBlob(entry.file ?? '');
    for (let pos = start; pos <= end; pos += 16384) {
      const stop = Math.min(end + 1, pos + 16384, cut ?? Number.POSITIVE_INFINITY);
      if (stop > pos) {
        if (!res.write(body.subarray(pos, stop))) {
          await new Promise((r) => res.once('drain', r));
        }
      }
      if (cut !== undefined && stop >= cut) {
        // Flush what was written, then drop the connection mid-body.
        await sleep(50);
        res.socket?.destroy();
        return;
      }
      if (cdn && hub.chunkDelayMs > 0) await sleep(hub.chunkDelayMs);
    }
    res.end();
  };

  const cdnServer = createServer((req, res) => {
    const { url, entry } = logRequest('cdn', req);
    const sha = /^\/repos\/([0-9a-f]{64})$/.exec(url.pathname)?.[1];
    const blob = sha === undefined ? undefined : blobs.get(sha);
    if (blob === undefined) {
      entry.status = 404;
      res.writeHead(404);
      res.end();
      return;
    }
    entry.file = blob.file;
    void serveBytes(
      req,
      res,
      entry,
      blob.f,
      blob.f.bytes.length,
      { ETag: `"s3-${sha!.slice(0, 8)}"` },
      true,
    );
  });

  const [endpoint, cdn] = await Promise.all([listen(hubServer), listen(cdnServer)]);
  hub = {
    endpoint,
    cdn,
    log,
    repos: new Map(),
    tokens: new Set(),
    cutAt: new Map(),
    corrupt: new Set(),
    ignoreRange: false,
    chunkDelayMs: 0,
    addRepo(id, files, options = {}) {
      const map = new Map<string, FakeFile>();
      const isLfs =
        options.lfs ?? ((n: string) => n.endsWith('.safetensors') || n.endsWith('.bin'));
      for (const [name, content] of Object.entries(files)) {
        const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
        const lfs = isLfs(name);
        const hash = sha256(bytes);
        const pointer = `version https://git-lfs.github.com/spec/v1\noid sha256:${hash}\nsize ${bytes.length}\n`;
        const f: FakeFile = {
          bytes,
          lfs,
          sha256: hash,
          oid: lfs ? gitOid(new TextEncoder().encode(pointer)) : gitOid(bytes),
        };
        map.set(name, f);
        if (lfs) blobs.set(hash, { file: name, f });
      }
      const commit = randomBytes(20).toString('hex');
      const repo: FakeRepo = {
        id,
        commit,
        refs: new Map([['main', commit]]),
        files: map,
        gated: options.gated ?? false,
        granted: new Set(options.granted ?? []),
      };
      hub.repos.set(id, repo);
      return repo;
    },
    gets(file) {
      return log.filter(
        (r) =>
          r.method === 'GET' && r.file !== undefined && (file === undefined || r.file === file),
      );
    },
    async close() {
      hubServer.closeAllConnections();
      cdnServer.closeAllConnections();
      await Promise.all([
        new Promise((r) => hubServer.close(r)),
        new Promise((r) => cdnServer.close(r)),
      ]);
    },
  };
  return hub;
}
