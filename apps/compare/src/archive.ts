// npm run archive -w @poad/compare -- COMPARE_DIR DEST[.zip] [--unfinished]
// Archives a comparison as results/ keeps it: one zip file (archive-file.ts says why and how it is
// read) of its finished runs without their checkpoints (config, environment, metrics, evaluation,
// perplexity and programs files) and its own files, with a copy of its summary.json beside it
// (DEST.summary.json), a few hundred kB per run that `npm run compare -- --reuse DEST.zip` takes
// in and `--resume DEST.zip --report-only` reports on, without unpacking it. Pictures and logs are
// left out: the commands that draw them draw them again from the data. With --unfinished, each
// run that has started but not finished comes too, with its latest checkpoint only, so that
// `npm run compare -- --resume DEST.zip` continues the comparison (on another machine, say)
// exactly where it was cut off.
//
// npm run archive -w @poad/compare -- --convert DIR
// Turns every comparison folder under DIR (one with a compare.json or combine.json) into its
// archive beside it, checks that the archive gives back every file of the folder byte for byte,
// and removes the folder; and keeps each other .json or .jsonl file of 64 KiB or more gzipped
// (F.gz, checked the same way). Running it again changes nothing.
//
// npm run archive -w @poad/compare -- --unpack ARCHIVE DIR
// Unpacks an archive into the folder DIR (which must not exist), as `unzip ARCHIVE -d DIR` would.
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { OptionError } from '@poad/config';
import { listCheckpoints, writeFileAtomicSync } from '@poad/run-kit';
import {
  ARCHIVE_EXT,
  type Entry,
  openArchive,
  SUMMARY_SUFFIX,
  unpackArchive,
  writeArchiveAtomic,
} from './archive-file.js';
import { finished } from './reuse.js';

/** What the archive of a finished run leaves out: its checkpoints and its lock. */
export const SKIP = new Set(['checkpoints', 'run.lock']);

/**
 * Pictures (and the pages and notes that come with them): drawn again from the data by
 * `npm run compare`, `npm run figures` and the training commands, so no archive keeps them.
 */
export const PICTURE = /\.(png|svg|html)$|\.png\.error\.txt$/;

/** A loose data file (not in a comparison) of at least this many bytes is kept gzipped. */
export const GZIP_FROM = 64 * 1024;

/** What `archiveComparison` archived. */
export interface Archived {
  /** The archive written. */
  file: string;
  /** Finished runs, without checkpoints. */
  finished: string[];
  /** Started, unfinished runs with their latest checkpoint (only with `unfinished`). */
  unfinished: string[];
  /** Runs of an earlier archive at that place that this one did not write, kept as they were. */
  kept: string[];
}

/** `dest` as an archive's file name: `.zip` added when it is not there. */
export const archiveFileOf = (dest: string): string =>
  dest.endsWith(ARCHIVE_EXT) ? dest : `${dest}${ARCHIVE_EXT}`;

/** The copy of an archive's summary.json beside it: `X.zip` → `X.summary.json`. */
export const summaryFileOf = (file: string): string =>
  `${file.slice(0, -ARCHIVE_EXT.length)}${SUMMARY_SUFFIX}`;

/** The files of a run folder, by path under it with `/`, except the top-level names `skip`. */
function filesOf(dir: string, prefix: string, skip: ReadonlySet<string>): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (path: string, rel: string) => {
    for (const name of readdirSync(path).sort()) {
      if (rel === '' && skip.has(name)) continue;
      const at = join(path, name);
      const member = rel === '' ? name : `${rel}/${name}`;
      const st = lstatSync(at);
      if (st.isDirectory()) walk(at, member);
      else if (!PICTURE.test(name)) out.set(`${prefix}${member}`, at);
    }
  };
  walk(dir, '');
  return out;
}

/** The bytes of a file to archive, refusing what is not a regular file (a FIFO, a link). */
function fileBytes(path: string): Buffer {
  if (!lstatSync(path).isFile()) {
    throw new OptionError(
      `${path}: not a regular file, so it cannot be archived; move it out of the comparison and archive again`,
    );
  }
  return readFileSync(path);
}

/**
 * Archives the comparison folder `from` into the zip file `to` (`.zip` added when missing): its
 * own files, its finished runs without checkpoints and, with `unfinished`, each started run with
 * the checkpoint `--resume` would load (run-kit's first complete one: the one `latest.json` names,
 * else the newest) and that pointer; a run without one is left out (it starts again anyway). A run
 * this archive writes replaces the whole of that run in an earlier archive at `to` (so an earlier
 * copy's checkpoints do not linger); what the earlier archive holds and this one does not write
 * stays as it was. The archive is written aside and renamed into place (see
 * `writeArchiveAtomic`); then the copy of its summary.json beside it.
 */
export function archiveComparison(
  from: string,
  to: string,
  { unfinished = false }: { unfinished?: boolean } = {},
): Archived {
  const src = resolve(from);
  if (!existsSync(join(src, 'compare.json')) && !existsSync(join(src, 'combine.json'))) {
    throw new OptionError(
      `${from}: not a comparison folder (no compare.json or combine.json); pass one written by npm run compare`,
    );
  }
  const file = resolve(archiveFileOf(to));
  const inside = relative(src, file);
  if (!inside.startsWith('..') && !inside.startsWith('/')) {
    throw new OptionError(
      `${to}: the archive would be written inside the comparison itself; pass a DEST outside ${from}`,
    );
  }
  const members = new Map<string, string>();
  const runs = new Set<string>();
  const done: Archived = { file, finished: [], unfinished: [], kept: [] };
  for (const name of readdirSync(src).sort()) {
    const path = join(src, name);
    const st = lstatSync(path);
    if (st.isDirectory()) {
      const isFinished = finished(path);
      const checkpoint =
        !isFinished && unfinished ? (listCheckpoints(path)[0]?.name ?? null) : null;
      if (!isFinished && checkpoint === null) continue;
      for (const [m, p] of filesOf(path, `${name}/`, SKIP)) members.set(m, p);
      if (checkpoint !== null) {
        const latest = join(path, 'checkpoints', 'latest.json');
        if (existsSync(latest)) members.set(`${name}/checkpoints/latest.json`, latest);
        const at = join(path, 'checkpoints', checkpoint);
        for (const [m, p] of filesOf(at, `${name}/checkpoints/${checkpoint}/`, new Set()))
          members.set(m, p);
      }
      runs.add(name);
      (checkpoint !== null ? done.unfinished : done.finished).push(name);
    } else if (!name.endsWith('.log') && !PICTURE.test(name)) {
      members.set(name, path);
    }
  }
  // What an earlier archive here holds and this one does not replace.
  const carried = new Map<string, { entry: Entry; data: Buffer }>();
  if (existsSync(file)) {
    const earlier = openArchive(file);
    const keptRuns = new Set<string>();
    for (const m of earlier.names()) {
      const slash = m.indexOf('/');
      const top = slash < 0 ? m : m.slice(0, slash);
      if (slash < 0 ? members.has(m) : runs.has(top)) continue;
      carried.set(m, earlier.raw(m));
      if (slash >= 0) keptRuns.add(top);
    }
    done.kept = [...keptRuns].sort();
  }
  const names = [...new Set([...members.keys(), ...carried.keys()])].sort();
  writeArchiveAtomic(file, (zip) => {
    for (const m of names) {
      const path = members.get(m);
      if (path !== undefined) {
        zip.add(m, fileBytes(path));
      } else {
        const { entry, data } = carried.get(m)!;
        zip.addRaw(m, entry, data);
      }
    }
  });
  // The copy beside it, from the archive just written (so the two are the same bytes).
  const beside = summaryFileOf(file);
  const written = openArchive(file);
  if (written.has('summary.json')) writeFileAtomicSync(beside, written.read('summary.json'));
  else rmSync(beside, { force: true });
  return done;
}

/**
 * Checks that archive `file` holds every file of the comparison folder `dir` (pictures, logs and
 * run locks aside) byte for byte and nothing else; returns the differences (none: it does).
 */
export function differencesFromFolder(file: string, dir: string): string[] {
  const zip = openArchive(file);
  const expected = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      for (const [m, p] of filesOf(path, `${name}/`, new Set(['run.lock']))) expected.set(m, p);
    } else if (!name.endsWith('.log') && !PICTURE.test(name)) expected.set(name, path);
  }
  const out: string[] = [];
  for (const [m, p] of expected) {
    if (!zip.has(m)) out.push(`${m}: not in the archive`);
    else if (!zip.read(m).equals(readFileSync(p))) out.push(`${m}: differs from ${p}`);
  }
  for (const m of zip.names())
    if (!expected.has(m)) out.push(`${m}: in the archive, not in ${dir}`);
  return out;
}

/** What `convertResults` did. */
export interface Converted {
  /** Archives written (each in place of its folder). */
  archives: string[];
  /** Loose files gzipped (each in place of the plain file). */
  gzipped: string[];
}

/** Gzips a loose data file into `file.gz` (written aside, renamed), checked, then removes it. */
function gzipLoose(file: string): void {
  const data = readFileSync(file);
  const gz = gzipSync(data, { level: 9 });
  if (!gunzipSync(gz).equals(data)) throw new Error(`${file}: gzip did not give it back`);
  writeFileAtomicSync(`${file}.gz`, gz);
  rmSync(file);
}

/**
 * Turns every comparison folder under `dir` into its archive (`X/` → `X.zip` and
 * `X.summary.json`), each checked against its folder before the folder is removed (a difference
 * stops with the folder kept), and gzips each other .json or .jsonl file of at least
 * {@link GZIP_FROM} bytes (the copies of summaries beside archives aside).
 */
export function convertResults(dir: string, log: (line: string) => void = () => {}): Converted {
  const out: Converted = { archives: [], gzipped: [] };
  const walk = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      const st = lstatSync(path);
      if (st.isDirectory()) {
        if (existsSync(join(path, 'compare.json')) || existsSync(join(path, 'combine.json'))) {
          const file = `${path}${ARCHIVE_EXT}`;
          archiveComparison(path, file, { unfinished: true });
          const differ = differencesFromFolder(file, path);
          if (differ.length) {
            throw new Error(
              `${file} does not hold ${path} as it is (${differ.slice(0, 5).join('; ')}); the folder is kept`,
            );
          }
          rmSync(path, { recursive: true });
          out.archives.push(file);
          log(`archived ${relative(dir, path)} into ${basename(file)}`);
        } else walk(path);
      } else if (
        st.isFile() &&
        /\.jsonl?$/.test(name) &&
        !name.endsWith(SUMMARY_SUFFIX) &&
        st.size >= GZIP_FROM
      ) {
        gzipLoose(path);
        out.gzipped.push(`${path}.gz`);
        log(`gzipped ${relative(dir, path)}`);
      }
    }
  };
  walk(resolve(dir));
  return out;
}

const USAGE = `usage: npm run archive -w @poad/compare -- COMPARE_DIR DEST[.zip] [--unfinished]
       npm run archive -w @poad/compare -- --convert DIR
       npm run archive -w @poad/compare -- --unpack ARCHIVE DIR
`;

function main(argv: readonly string[]): number {
  // npm run -w starts this in apps/compare; paths on the command line are the caller's.
  const cwd = process.env.INIT_CWD ?? process.cwd();
  const at = (p: string) => resolve(cwd, p);
  const shown = (p: string) => relative(cwd, p) || '.';
  if (argv[0] === '--convert' || argv[0] === '--unpack') {
    const [mode, a, b, ...rest] = argv;
    if (!a || (mode === '--unpack' ? !b || rest.length > 0 : b !== undefined)) {
      process.stderr.write(USAGE);
      return 2;
    }
    if (mode === '--unpack') {
      unpackArchive(at(a), at(b!));
      process.stdout.write(`unpacked ${a} into ${b}\n`);
      return 0;
    }
    const done = convertResults(at(a), (line) => process.stdout.write(`${line}\n`));
    process.stdout.write(
      `${done.archives.length} comparison${done.archives.length === 1 ? '' : 's'} archived, ${done.gzipped.length} file${done.gzipped.length === 1 ? '' : 's'} gzipped under ${a}\n`,
    );
    return 0;
  }
  const unfinished = argv.includes('--unfinished');
  const [from, to, ...rest] = argv.filter((a) => a !== '--unfinished');
  if (!from || !to || rest.length > 0 || from.startsWith('--') || to.startsWith('--')) {
    process.stderr.write(USAGE);
    return 2;
  }
  const runs = archiveComparison(at(from), at(to), { unfinished });
  const n = (k: number) => `${k} ${k === 1 ? 'run' : 'runs'}`;
  const file = shown(runs.file);
  process.stdout.write(
    `archived ${n(runs.finished.length)} of ${basename(resolve(at(from)))} into ${file} (finished)${
      unfinished
        ? `, and ${n(runs.unfinished.length)} unfinished with their latest checkpoint (continue with: npm run compare -- --resume ${file})`
        : ''
    }${runs.kept.length ? `; kept from the earlier archive: ${runs.kept.join(', ')}` : ''}\n`,
  );
  if (existsSync(summaryFileOf(runs.file))) {
    process.stdout.write(`its summary beside it: ${basename(summaryFileOf(runs.file))}\n`);
  }
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (err) {
    if (err instanceof OptionError) {
      process.stderr.write(`error: ${err.message}\n`);
      process.exitCode = 2;
    } else throw err;
  }
}
