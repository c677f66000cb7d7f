import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename, stat, unlink } from 'node:fs/promises';
import { HubError } from './errors.js';
import {
  authHeaders,
  cacheWriteError,
  type HubContext,
  isNetworkFailure,
  networkError,
  responseError,
} from './hub-http.js';
import type { DownloadMeter } from './hub-progress.js';

/** One file to bring into `blobs/`. */
export interface BlobTransfer {
  /** Its name in the repository (for messages and progress). */
  file: string;
  /** Where to GET it. */
  url: string;
  /** `blobs/<etag>`. */
  blob: string;
  /** Size the Hub lists. */
  size: number;
  /** The sha256 the Hub lists for an LFS file. */
  sha256?: string;
  /** The git blob id the Hub lists for a small file. */
  gitOid?: string;
}

/** How to transfer. */
export interface TransferOptions {
  /** Attempts after the first when the connection breaks (each resumes with a Range request). */
  retries: number;
  /** Abort a transfer that receives nothing for this long. */
  idleTimeoutMs: number;
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

/** sha256 of a file, or its git blob id (`sha1("blob <size>\0" + bytes)`). */
export async function hashFile(
  path: string,
  kind: 'sha256' | 'git',
  size: number,
): Promise<string> {
  const h = createHash(kind === 'sha256' ? 'sha256' : 'sha1');
  if (kind === 'git') h.update(`blob ${size}\0`);
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * Download `t` into `<blob>.incomplete`, resuming a partial file left by an earlier attempt or
 * process with `Range: bytes=<n>-` (a server that answers 200 instead of 206 is read from the
 * start), retrying broken connections, then check size and hash and rename the file to `<blob>`.
 * A file that fails the check is deleted; a write error (disk full, permissions) keeps the partial
 * file for a later resume. Only `<blob>` is ever a complete file. The caller holds the blob's lock.
 */
export async function downloadBlob(
  ctx: HubContext,
  t: BlobTransfer,
  meter: DownloadMeter,
  options: TransferOptions,
): Promise<void> {
  const incomplete = `${t.blob}.incomplete`;
  let counted = 0;
  const count = (n: number) => {
    meter.discard(counted);
    meter.resumed(n);
    counted = n;
  };
  let failures = 0;
  const retryOrThrow = (e: unknown) => {
    if (e instanceof HubError && e.code !== 'network') throw e;
    if (!isNetworkFailure(e) && !(e instanceof HubError)) throw e;
    if (failures++ >= options.retries)
      throw e instanceof HubError ? e : networkError(ctx, e, t.file);
  };
  for (;;) {
    let offset = (await sizeOf(incomplete)) ?? 0;
    if (offset > t.size) {
      await unlink(incomplete).catch(() => undefined);
      offset = 0;
    }
    count(offset);
    if (offset < t.size) {
      try {
        await fetchInto(ctx, t, incomplete, offset, meter, options, (n) => {
          counted += n;
        });
      } catch (e) {
        retryOrThrow(e);
        continue;
      }
    }
    const got = (await sizeOf(incomplete)) ?? 0;
    if (got < t.size) {
      // The server closed the connection early without an error: resume.
      retryOrThrow(
        networkError(ctx, new Error(`transfer ended after ${got} of ${t.size} bytes`), t.file),
      );
      continue;
    }
    meter.report(t.file, 'verify', got, t.size, true);
    const kind = t.sha256 !== undefined ? 'sha256' : t.gitOid !== undefined ? 'git' : undefined;
    const want = t.sha256 ?? t.gitOid;
    if (got !== t.size || kind === undefined || want === undefined) {
      if (got !== t.size) {
        await unlink(incomplete).catch(() => undefined);
        throw new HubError(
          'checksum',
          ctx.repo,
          `${t.file} arrived with ${got} bytes but the Hub lists ${t.size}; the download was deleted, run again`,
          { revision: ctx.revision, path: incomplete },
        );
      }
    } else {
      const hash = await hashFile(incomplete, kind, got);
      if (hash !== want) {
        await unlink(incomplete).catch(() => undefined);
        throw new HubError(
          'checksum',
          ctx.repo,
          `${t.file} arrived with ${kind === 'sha256' ? 'sha256' : 'git blob id'} ${hash} but the Hub lists ${want}; the corrupt download was deleted, run again`,
          { revision: ctx.revision, path: incomplete },
        );
      }
    }
    try {
      await rename(incomplete, t.blob);
    } catch (e) {
      throw cacheWriteError(ctx, e, t.blob, t.file);
    }
    return;
  }
}

async function fetchInto(
  ctx: HubContext,
  t: BlobTransfer,
  incomplete: string,
  offset: number,
  meter: DownloadMeter,
  options: TransferOptions,
  onBytes: (n: number) => void,
): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('no data received', 'TimeoutError')),
    options.idleTimeoutMs,
  );
  try {
    const res = await ctx.fetch(t.url, {
      headers: {
        ...authHeaders(ctx, t.url),
        'Accept-Encoding': 'identity',
        ...(offset > 0 ? { Range: `bytes=${offset}-` } : {}),
      },
      signal: controller.signal,
    });
    if (res.status === 416) {
      await res.body?.cancel();
      await unlink(incomplete).catch(() => undefined);
      throw networkError(ctx, new Error('the server refused the resume range'), t.file);
    }
    if (!res.ok) {
      await res.body?.cancel();
      const err = responseError(
        ctx,
        res.status,
        res.headers.get('x-error-code'),
        res.headers.get('x-error-message'),
        t.file,
      );
      // Server errors are worth another attempt; 4xx answers are final.
      throw res.status >= 500 ? networkError(ctx, err, t.file) : err;
    }
    const range = res.headers.get('content-range') ?? '';
    const append = offset > 0 && res.status === 206 && range.startsWith(`bytes ${offset}-`);
    let done = append ? offset : 0;
    if (!append && offset > 0) {
      meter.discard(offset);
      onBytes(-offset);
    }
    let fh: Awaited<ReturnType<typeof open>>;
    try {
      fh = await open(incomplete, append ? 'a' : 'w');
    } catch (e) {
      await res.body?.cancel();
      throw cacheWriteError(ctx, e, incomplete, t.file, t.size - done);
    }
    try {
      if (res.body === null) throw new Error('empty body');
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        timer.refresh();
        try {
          await fh.write(chunk);
        } catch (e) {
          controller.abort();
          throw cacheWriteError(ctx, e, incomplete, t.file, t.size - done);
        }
        done += chunk.length;
        onBytes(chunk.length);
        meter.received(chunk.length);
        meter.report(t.file, 'download', done, t.size);
        if (done > t.size) break;
      }
      try {
        await fh.sync();
      } catch (e) {
        throw cacheWriteError(ctx, e, incomplete, t.file);
      }
    } finally {
      await fh.close().catch(() => undefined);
    }
  } finally {
    clearTimeout(timer);
  }
}
