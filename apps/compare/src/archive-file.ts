// A comparison as results/ keeps it, and the one way every reader of a comparison reads it, from
// its folder or from its archive file.
//
// The archive is a zip file of the comparison folder (the subset of PKWARE's APPNOTE that every
// unzip reads: no encryption, no zip64): each member (a file of the folder, named by its path in
// it with `/`) is deflated on its own, and the central directory at the end of the file says
// where each one is, so reading one member reads and inflates that member's bytes and no other's.
// `unzip -p X.zip poad-s1/eval.json` prints one by hand. Members carry no time (they all say
// 1980-01-01) and come in the order of their names, so the same files make the same bytes.
//
// Readers name what they read by its path, as on disk: `…/X.zip/poad-s1/metrics.jsonl` is the
// member `poad-s1/metrics.jsonl` of the archive `…/X.zip`. A run of an archived comparison is the
// path `…/X.zip/poad-s1`, so code that joins file names onto a run's folder reads either form.
// A loose data file that results/ keeps gzipped (`F.gz`) is read under its plain name `F` too.
import {
  closeSync,
  cpSync,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import * as zlib from 'node:zlib';
import { deflateRawSync, gunzipSync, inflateRawSync } from 'node:zlib';
import { OptionError } from '@poad/config';

/** The file name ending of a comparison's archive. */
export const ARCHIVE_EXT = '.zip';

/** The ending of the copy of an archive's summary.json kept beside it (`X.summary.json`). */
export const SUMMARY_SUFFIX = '.summary.json';

/** A file that is not a readable archive, or a member that is not in one or is damaged. */
export class ArchiveError extends Error {
  override readonly name = 'ArchiveError';
}

/** A data file that is neither on disk (nor gzipped beside) nor in an archive on its path. */
export class MissingDataError extends Error {
  override readonly name = 'MissingDataError';
  readonly code = 'ENOENT';
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (ISO-HDLC, as zip and gzip check their data), computed here. */
export function crc32Table(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** zlib's own CRC-32, where Node has it (20.15 and later): the same value, faster. */
const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

/** CRC-32 (ISO-HDLC, as zip and gzip check their data). */
export const crc32 = (data: Uint8Array): number =>
  nativeCrc32 ? nativeCrc32(data) >>> 0 : crc32Table(data);

const LOCAL_SIG = 0x04034b50;
const CENTRAL_SIG = 0x02014b50;
const END_SIG = 0x06054b50;
const STORED = 0;
const DEFLATED = 8;
/** Flag bit 11: the name is UTF-8. */
const UTF8 = 0x0800;
/** 1980-01-01 00:00 in MS-DOS date and time fields. */
const DOS_DATE = (1 << 5) | 1;
const DOS_TIME = 0;
/** Made by: Unix (3), spec 2.0; needed to extract: 2.0 (deflate). */
const MADE_BY = (3 << 8) | 20;
const NEEDED = 20;
/** A regular file with mode 0644, as Unix zips record it. */
const FILE_ATTRS = (0o100644 << 16) >>> 0;
const MAX_U16 = 0xffff;
const MAX_U32 = 0xffffffff;

/** Where one member is and how it is kept. */
export interface Entry {
  name: string;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  /** Offset of its local header. */
  offset: number;
}

/** A member name is a relative path with `/`, none of whose parts leads out of the folder. */
function checkName(name: string, where: string): void {
  const parts = name.split('/');
  if (
    name === '' ||
    name.startsWith('/') ||
    name.includes('\\') ||
    name.includes('\0') ||
    parts.some((p) => p === '..' || p === '.')
  ) {
    throw new ArchiveError(
      `${where}: member name ${JSON.stringify(name)} is not a relative path inside the comparison; the archive was not written by npm run archive`,
    );
  }
}

/** `length` bytes of `fd` from `position` (fewer only at the end of the file: an error then). */
function readAt(fd: number, position: number, length: number, file: string): Buffer {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n === 0) {
      throw new ArchiveError(
        `${file}: ends before byte ${position + length} (cut short); write the archive again with npm run archive`,
      );
    }
    done += n;
  }
  return buf;
}

/** Reads the members of one zip file, each only when asked for. */
export class ZipReader {
  /** Members read so far and their bytes once inflated (reading one inflates no other). */
  readonly stats = { members: 0, bytes: 0 };
  private readonly entries = new Map<string, Entry>();
  /** Every folder the members lie in ('' for the top). */
  private readonly folders = new Set<string>(['']);

  private constructor(readonly file: string) {}

  /** Opens `file`: reads its central directory (not its members). */
  static open(file: string): ZipReader {
    const zip = new ZipReader(file);
    const fd = openSync(file, 'r');
    try {
      zip.readDirectory(fd);
    } finally {
      closeSync(fd);
    }
    return zip;
  }

  private readDirectory(fd: number): void {
    const file = this.file;
    const size = fstatSync(fd).size;
    const tailLength = Math.min(size, 22 + MAX_U16);
    const tail = readAt(fd, size - tailLength, tailLength, file);
    let end = -1;
    for (let i = tail.length - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === END_SIG) {
        end = i;
        break;
      }
    }
    if (end < 0) {
      throw new ArchiveError(
        `${file}: not a zip archive (no end of central directory); pass an archive written by npm run archive`,
      );
    }
    const count = tail.readUInt16LE(end + 10);
    const directorySize = tail.readUInt32LE(end + 12);
    const directoryOffset = tail.readUInt32LE(end + 16);
    if (tail.readUInt16LE(end + 4) !== 0 || tail.readUInt16LE(end + 8) !== count) {
      throw new ArchiveError(`${file}: a zip archive split over several disks is not read here`);
    }
    if (count === MAX_U16 || directorySize === MAX_U32 || directoryOffset === MAX_U32) {
      throw new ArchiveError(
        `${file}: a zip64 archive is not read here (npm run archive never writes one)`,
      );
    }
    if (directoryOffset + directorySize > size) {
      throw new ArchiveError(`${file}: its central directory lies past its end (cut short)`);
    }
    const dir = readAt(fd, directoryOffset, directorySize, file);
    let p = 0;
    for (let i = 0; i < count; i++) {
      if (p + 46 > dir.length || dir.readUInt32LE(p) !== CENTRAL_SIG) {
        throw new ArchiveError(`${file}: entry ${i + 1} of its central directory is damaged`);
      }
      const flags = dir.readUInt16LE(p + 8);
      const nameLength = dir.readUInt16LE(p + 28);
      const next = p + 46 + nameLength + dir.readUInt16LE(p + 30) + dir.readUInt16LE(p + 32);
      if (next > dir.length) {
        throw new ArchiveError(`${file}: entry ${i + 1} of its central directory is damaged`);
      }
      const name = dir.toString('utf8', p + 46, p + 46 + nameLength);
      const entry: Entry = {
        name,
        method: dir.readUInt16LE(p + 10),
        crc: dir.readUInt32LE(p + 16),
        compressedSize: dir.readUInt32LE(p + 20),
        size: dir.readUInt32LE(p + 24),
        offset: dir.readUInt32LE(p + 42),
      };
      p = next;
      if (flags & 1) throw new ArchiveError(`${file}: member ${name} is encrypted`);
      if (name.endsWith('/')) {
        // A folder entry (other zip writers add them): a folder, no data.
        const folder = name.slice(0, -1);
        checkName(folder, file);
        this.addFolders(`${folder}/`);
        continue;
      }
      checkName(name, file);
      if (entry.method !== STORED && entry.method !== DEFLATED) {
        throw new ArchiveError(
          `${file}: member ${name} is compressed with method ${entry.method}; only stored and deflated members are read`,
        );
      }
      if (this.entries.has(name)) throw new ArchiveError(`${file}: member ${name} is in it twice`);
      this.entries.set(name, entry);
      this.addFolders(name);
    }
  }

  private addFolders(name: string): void {
    const parts = name.split('/');
    for (let i = 1; i < parts.length; i++) this.folders.add(parts.slice(0, i).join('/'));
  }

  /** The names of its files, in the archive's order. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Whether `name` is a file of it. */
  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Whether `name` is a folder of it ('' is its top). */
  isFolder(name: string): boolean {
    return this.folders.has(name);
  }

  /** The files and folders directly in folder `name` ('' for the top), in byte order. */
  children(name: string): string[] {
    const prefix = name === '' ? '' : `${name}/`;
    const out = new Set<string>();
    for (const n of [...this.entries.keys(), ...this.folders]) {
      if (n.length > prefix.length && n.startsWith(prefix))
        out.add(n.slice(prefix.length).split('/')[0]!);
    }
    return [...out].sort();
  }

  /** A member's entry (where it is, its sizes and CRC). */
  entry(name: string): Entry {
    const e = this.entries.get(name);
    if (!e) throw new ArchiveError(`${this.file}: no member ${name}`);
    return e;
  }

  /** A member's bytes as stored (deflated or not): for carrying it into another archive as is. */
  raw(name: string): { entry: Entry; data: Buffer } {
    const entry = this.entry(name);
    const fd = openSync(this.file, 'r');
    try {
      const head = readAt(fd, entry.offset, 30, this.file);
      if (head.readUInt32LE(0) !== LOCAL_SIG) {
        throw new ArchiveError(`${this.file}: the local header of member ${name} is damaged`);
      }
      const start = entry.offset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
      return { entry, data: readAt(fd, start, entry.compressedSize, this.file) };
    } finally {
      closeSync(fd);
    }
  }

  /** A member's bytes, inflated and checked against its size and CRC. */
  read(name: string): Buffer {
    const { entry, data: raw } = this.raw(name);
    let data: Buffer;
    try {
      data = entry.method === DEFLATED ? inflateRawSync(raw) : raw;
    } catch (err) {
      throw new ArchiveError(`${this.file}: member ${name} is damaged (${(err as Error).message})`);
    }
    if (data.length !== entry.size || crc32(data) !== entry.crc) {
      throw new ArchiveError(
        `${this.file}: member ${name} is damaged (its size or CRC is not the one recorded)`,
      );
    }
    this.stats.members++;
    this.stats.bytes += data.length;
    return data;
  }
}

/** Writes a zip file member by member onto an open file (each one written as it is added). */
export class ZipWriter {
  private offset = 0;
  private readonly central: Buffer[] = [];
  private readonly names = new Set<string>();

  constructor(
    private readonly fd: number,
    /** The archive's name, for errors. */
    private readonly file: string,
  ) {}

  /** Adds a file: deflated, or stored when deflating would not make it smaller. */
  add(name: string, data: Uint8Array): void {
    const deflated = deflateRawSync(data, { level: 9 });
    const stored = deflated.length >= data.length;
    this.put(
      name,
      { method: stored ? STORED : DEFLATED, crc: crc32(data), size: data.length },
      stored ? data : deflated,
    );
  }

  /** Adds a member of another archive as it is stored there (nothing inflated or deflated). */
  addRaw(name: string, entry: Entry, data: Uint8Array): void {
    this.put(name, entry, data);
  }

  private put(name: string, e: Pick<Entry, 'method' | 'crc' | 'size'>, body: Uint8Array): void {
    checkName(name, this.file);
    if (this.names.has(name)) throw new ArchiveError(`${this.file}: member ${name} added twice`);
    const nameBytes = Buffer.from(name, 'utf8');
    if (nameBytes.length > MAX_U16)
      throw new ArchiveError(`${this.file}: member name too long: ${name}`);
    if (this.names.size >= MAX_U16 - 1) {
      throw new ArchiveError(
        `${this.file}: more than ${MAX_U16 - 1} members, which needs zip64; archive fewer runs in one file`,
      );
    }
    const end = this.offset + 30 + nameBytes.length + body.length;
    if (e.size > MAX_U32 || end > MAX_U32) {
      throw new ArchiveError(
        `${this.file}: over 4 GiB (at member ${name}), which needs zip64; archive fewer runs in one file`,
      );
    }
    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL_SIG, 0);
    local.writeUInt16LE(NEEDED, 4);
    local.writeUInt16LE(UTF8, 6);
    local.writeUInt16LE(e.method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(e.crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(e.size, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);
    this.write(local);
    this.write(nameBytes);
    this.write(body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(CENTRAL_SIG, 0);
    central.writeUInt16LE(MADE_BY, 4);
    central.writeUInt16LE(NEEDED, 6);
    central.writeUInt16LE(UTF8, 8);
    central.writeUInt16LE(e.method, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(e.crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(e.size, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    // Extra field, comment, disk, internal attributes: none, 0.
    central.writeUInt32LE(FILE_ATTRS, 38);
    central.writeUInt32LE(this.offset, 42);
    this.central.push(central, nameBytes);
    this.names.add(name);
    this.offset = end;
  }

  /** Writes the central directory and its end record. */
  finish(): void {
    const directory = Buffer.concat(this.central);
    if (this.offset + directory.length > MAX_U32) {
      throw new ArchiveError(
        `${this.file}: over 4 GiB, which needs zip64; archive fewer runs in one file`,
      );
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(END_SIG, 0);
    end.writeUInt16LE(this.names.size, 8);
    end.writeUInt16LE(this.names.size, 10);
    end.writeUInt32LE(directory.length, 12);
    end.writeUInt32LE(this.offset, 16);
    this.write(directory);
    this.write(end);
  }

  private write(data: Uint8Array): void {
    let done = 0;
    while (done < data.length) done += writeSync(this.fd, data, done, data.length - done);
  }
}

/** Where an archive is written before it is renamed to `file`. */
export const partOf = (file: string): string => join(dirname(file), `.${basename(file)}.part`);

/**
 * Writes the archive `file` through a file beside it (see {@link partOf}), flushed to disk and
 * renamed into place once complete: a kill or an error on the way leaves the earlier `file` (or
 * none) under that name, never part of an archive. What `fill` throws is thrown again, after the
 * part written so far is removed; a part left by a kill is overwritten by the next write.
 */
export function writeArchiveAtomic(file: string, fill: (zip: ZipWriter) => void): void {
  mkdirSync(dirname(file), { recursive: true });
  const part = partOf(file);
  const fd = openSync(part, 'w');
  let complete = false;
  try {
    const zip = new ZipWriter(fd, file);
    fill(zip);
    zip.finish();
    fsyncSync(fd);
    complete = true;
  } finally {
    closeSync(fd);
    if (!complete) rmSync(part, { force: true });
  }
  renameSync(part, file);
  // The rename itself on disk too (where a folder can be opened to be flushed).
  try {
    const dfd = openSync(dirname(file), 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // Not every platform flushes a folder; the rename stands either way.
  }
}

/** Archives opened so far, by file, with the file's identity when it was opened. */
const opened = new Map<string, { id: string; zip: ZipReader }>();

const identity = (st: Stats) => `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;

/** The reader of archive `file` (opened once while the file stays the same). */
export function openArchive(file: string): ZipReader {
  const abs = resolve(file);
  const st = statSync(abs);
  const id = identity(st);
  const known = opened.get(abs);
  if (known?.id === id) return known.zip;
  const zip = ZipReader.open(abs);
  opened.set(abs, { id, zip });
  return zip;
}

/**
 * The archive a path goes through and the member it names there ('' for the archive itself), or
 * null for a path on disk: the first part of the path that names a file ending in `.zip`.
 */
export function locate(path: string): { zip: ZipReader; member: string } | null {
  const abs = resolve(path);
  if (!abs.includes(ARCHIVE_EXT)) return null;
  const parts = abs.split(sep);
  for (let i = 1; i <= parts.length; i++) {
    if (!parts[i - 1]!.endsWith(ARCHIVE_EXT)) continue;
    const file = parts.slice(0, i).join(sep) || sep;
    if (!statSync(file, { throwIfNoEntry: false })?.isFile()) continue;
    return { zip: openArchive(file), member: parts.slice(i).join('/') };
  }
  return null;
}

/**
 * The bytes of a data file: a member of an archive on its path, a file on disk (gunzipped when
 * its name ends in `.gz`), or, when `path` is not there, `path.gz` gunzipped.
 */
export function readData(path: string): Buffer {
  const at = locate(path);
  if (at) {
    if (at.member === '' || at.zip.isFolder(at.member)) {
      throw new ArchiveError(`${path}: a folder of an archive, not a file`);
    }
    if (!at.zip.has(at.member)) {
      throw new MissingDataError(
        `${path}: no such file (${at.zip.file} has no member ${at.member})`,
      );
    }
    return at.zip.read(at.member);
  }
  if (existsSync(path)) {
    const data = readFileSync(path);
    return path.endsWith('.gz') ? gunzipSync(data) : data;
  }
  if (existsSync(`${path}.gz`)) return gunzipSync(readFileSync(`${path}.gz`));
  throw new MissingDataError(`${path}: no such file (nor ${basename(path)}.gz beside it)`);
}

/** {@link readData} as UTF-8 text. */
export const readText = (path: string): string => readData(path).toString('utf8');

/** {@link readData} parsed as JSON. */
export const readJson = <T>(path: string): T => JSON.parse(readText(path)) as T;

/** Whether {@link readData} finds a file at `path`, or `path` is a folder (on disk or in an archive). */
export function dataExists(path: string): boolean {
  const at = locate(path);
  if (at) return at.zip.has(at.member) || at.zip.isFolder(at.member);
  return existsSync(path) || existsSync(`${path}.gz`);
}

/** Whether `path` is a folder on disk, an archive (its top) or a folder in one. */
export function isDataFolder(path: string): boolean {
  const at = locate(path);
  if (at) return at.zip.isFolder(at.member);
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/** The names in a folder on disk or in an archive, in byte order (as readdirSync gives them). */
export function listData(path: string): string[] {
  const at = locate(path);
  if (!at) return readdirSync(path);
  if (!at.zip.isFolder(at.member)) {
    throw new MissingDataError(`${path}: no such folder in ${at.zip.file}`);
  }
  return at.zip.children(at.member);
}

/**
 * Copies folder `from` (on disk, an archive, or a folder of one) to `to` on disk, replacing
 * nothing: `to` must not exist yet.
 */
export function copyDataFolder(from: string, to: string): void {
  const at = locate(from);
  if (!at) {
    cpSync(from, to, { recursive: true });
    return;
  }
  const prefix = at.member === '' ? '' : `${at.member}/`;
  mkdirSync(to, { recursive: true });
  for (const name of at.zip.names()) {
    if (!name.startsWith(prefix)) continue;
    const target = join(to, ...name.slice(prefix.length).split('/'));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, at.zip.read(name));
  }
}

/**
 * Unpacks archive `file` into the folder `to` (which must not exist), through a folder beside it
 * renamed into place once every member is out: a kill leaves no half-unpacked `to`.
 */
export function unpackArchive(file: string, to: string): void {
  if (existsSync(to)) {
    throw new OptionError(`${to} already exists; unpack ${file} into a folder that does not`);
  }
  const part = join(dirname(resolve(to)), `.${basename(to)}.part`);
  rmSync(part, { recursive: true, force: true });
  try {
    copyDataFolder(resolve(file), part);
    renameSync(part, to);
  } finally {
    rmSync(part, { recursive: true, force: true });
  }
}

/** A comparison as its readers see it: a folder, or the archive of one. */
export interface Comparison {
  /** Where its files are read from: the folder, or the archive file (its runs are `root/<run>`). */
  root: string;
  /** Its name: the folder's, or the archive's without `.zip`. */
  name: string;
  /** Whether it is an archive. */
  archived: boolean;
}

/** Whether folder `root` (on disk or in an archive) holds a comparison's compare.json or combine.json. */
const holdsComparison = (root: string) =>
  dataExists(join(root, 'compare.json')) || dataExists(join(root, 'combine.json'));

const isFile = (path: string) => statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;

/**
 * The comparison at `path`: an archive `X.zip`; a folder holding compare.json or combine.json; or,
 * when `X` is neither, the archive `X.zip` beside it (so a command that named a folder before it
 * was archived names its archive still). Null when there is none.
 */
export function findComparison(path: string): Comparison | null {
  if (path.endsWith(ARCHIVE_EXT) && isFile(path)) {
    return { root: path, name: basename(path, ARCHIVE_EXT), archived: true };
  }
  if (isDataFolder(path) && holdsComparison(path)) {
    return { root: path, name: basename(path), archived: false };
  }
  if (isFile(`${path}${ARCHIVE_EXT}`)) {
    return { root: `${path}${ARCHIVE_EXT}`, name: basename(path), archived: true };
  }
  return null;
}

/** {@link findComparison}, refusing a path that is none with an error for `flag`. */
export function openComparison(path: string, flag: string): Comparison {
  const found = findComparison(path);
  if (!found) {
    throw new OptionError(
      `${flag} ${path}: no comparison there (neither a folder with a compare.json or combine.json nor ${basename(path)}${ARCHIVE_EXT}); pass a folder written by npm run compare or its archive (npm run archive -w @poad/compare)`,
    );
  }
  return found;
}

/**
 * The comparisons directly in folder `dir`, folders and archives, by name (a folder and an archive
 * of the same name: the folder).
 */
export function comparisonsIn(dir: string): Comparison[] {
  const found = new Map<string, Comparison>();
  for (const entry of listData(dir)) {
    const c = findComparison(join(dir, entry));
    if (!c || (c.archived && !entry.endsWith(ARCHIVE_EXT))) continue;
    if (!found.has(c.name) || !c.archived) found.set(c.name, c);
  }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The folders (runs) directly in a comparison, in byte order. */
export function runsOf(c: Comparison): string[] {
  return listData(c.root).filter((n) => isDataFolder(join(c.root, n)));
}
