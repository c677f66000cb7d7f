import { open } from 'node:fs/promises';
import { writeFileAtomic } from './atomic.js';
import { CheckpointError } from './errors.js';
import {
  checkHeaderLength,
  DEFAULT_MAX_HEADER_BYTES,
  parseHeaderBytes,
  type SafetensorsHeader,
} from './safetensors-header.js';
import {
  type NamedTensor,
  namedTensor,
  type ParseSafetensorsOptions,
  type SafetensorsContents,
} from './safetensors-read.js';
import { serializeSafetensors, type TensorInputs } from './safetensors-write.js';

type FileHandle = Awaited<ReturnType<typeof open>>;

/** Translate a file-system error into a {@link CheckpointError} naming the file. */
export function fsError(e: unknown, file: string, what = 'file'): CheckpointError {
  const code = (e as { code?: string } | null)?.code;
  if (code === 'ENOENT') {
    return new CheckpointError('missing_file', file, `${what} not found`, undefined, { cause: e });
  }
  if (code === 'EISDIR') {
    return new CheckpointError(
      'missing_file',
      file,
      `expected a ${what} but found a folder`,
      undefined,
      {
        cause: e,
      },
    );
  }
  return new CheckpointError(
    'missing_file',
    file,
    `cannot read ${what}: ${(e as Error)?.message ?? String(e)}`,
    undefined,
    { cause: e },
  );
}

async function readExactly(
  fh: FileHandle,
  length: number,
  position: number,
  file: string,
): Promise<Uint8Array> {
  const buf = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, position + done);
    if (bytesRead === 0) {
      throw new CheckpointError(
        'truncated',
        file,
        `file ended after ${position + done} bytes while reading`,
      );
    }
    done += bytesRead;
  }
  return buf;
}

async function openForRead(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r');
  } catch (e) {
    throw fsError(e, path, 'safetensors file');
  }
}

async function readHeaderFrom(
  fh: FileHandle,
  file: string,
  maxHeaderBytes: number,
): Promise<SafetensorsHeader> {
  const stat = await fh.stat();
  if (stat.isDirectory()) {
    throw new CheckpointError(
      'missing_file',
      file,
      'expected a safetensors file but found a folder',
    );
  }
  const size = stat.size;
  const prefix = await readExactly(fh, Math.min(8, size), 0, file);
  const n = checkHeaderLength(prefix, size, file, maxHeaderBytes);
  const headerBytes = await readExactly(fh, n, 8, file);
  return parseHeaderBytes(headerBytes, size - 8 - n, file);
}

/**
 * Opens the safetensors file at `path`, reads and validates its header, and gives both to `use`;
 * the file is closed when `use` settles.
 */
async function withHeader<T>(
  path: string,
  options: ParseSafetensorsOptions,
  use: (fh: FileHandle, header: SafetensorsHeader, file: string) => Promise<T>,
): Promise<T> {
  const file = options.fileName ?? path;
  const fh = await openForRead(path);
  try {
    const maxHeaderBytes = options.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
    return await use(fh, await readHeaderFrom(fh, file, maxHeaderBytes), file);
  } finally {
    await fh.close();
  }
}

/**
 * Read and validate only the header of a safetensors file (names, dtypes, shapes, offsets):
 * no tensor data is read.
 */
export async function readSafetensorsHeader(
  path: string,
  options: ParseSafetensorsOptions = {},
): Promise<SafetensorsHeader> {
  return withHeader(path, options, async (_fh, header) => header);
}

/**
 * Read a safetensors file from disk. The header is validated before any tensor is read, and each
 * tensor is read on its own, so files larger than one Node buffer (2 GiB) load too.
 */
export async function readSafetensorsFile(
  path: string,
  options: ParseSafetensorsOptions = {},
): Promise<SafetensorsContents> {
  return withHeader(path, options, async (fh, header, file) => {
    const tensors = new Map<string, NamedTensor>();
    for (const e of header.entries) {
      const raw = await readExactly(fh, e.end - e.begin, header.dataOffset + e.begin, file);
      tensors.set(e.name, namedTensor(e.dtype, e.shape, raw, options.halfBits, true));
    }
    return { tensors, metadata: header.metadata };
  });
}

/** Serialise tensors with {@link serializeSafetensors} and write them atomically to `path`. */
export async function writeSafetensorsFile(
  path: string,
  tensors: TensorInputs,
  metadata: Readonly<Record<string, string>> = {},
): Promise<void> {
  await writeFileAtomic(path, serializeSafetensors(tensors, metadata, path));
}
