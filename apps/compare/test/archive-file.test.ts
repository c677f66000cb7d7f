import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { archiveComparison } from '../src/archive.js';
import {
  ArchiveError,
  comparisonsIn,
  crc32,
  crc32Table,
  dataExists,
  findComparison,
  isDataFolder,
  listData,
  MissingDataError,
  openArchive,
  readData,
  readJson,
  readText,
  runsOf,
  unpackArchive,
  ZipReader,
} from '../src/archive-file.js';
import { readPrior } from '../src/prior.js';
import { filesUnder, noise, tree } from './files.js';

const base = mkdtempSync(join(tmpdir(), 'poad-archive-file-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const rows = Array.from({ length: 400 }, (_, i) =>
  JSON.stringify({ iteration: i + 1, envSteps: 128 * (i + 1), successRate: (i % 10) / 10 }),
).join('\n');

/** The files of a small comparison that an archive keeps, and those it leaves out. */
const kept: Record<string, string | Buffer> = {
  'compare.json': '{"argv":["--env","credit/delayed"]}',
  'summary.json': '{"summaries":[]}',
  'report.md': '# Comparison\n',
  'poad-s1/config.json': '{"algo":"poad"}',
  'poad-s1/eval.json': '{"results":{}}',
  'poad-s1/metrics.jsonl': `${rows}\n`,
  'poad-s1/empty.txt': '',
  'poad-s1/sub/deep/noise.bin': noise(5000, 7),
  'poad-s1/données.json': '{"é":1}',
  'poad-s2/config.json': '{"algo":"poad","seed":2}',
  'poad-s2/eval.json': '{"results":{"x":1}}',
};
const leftOut: Record<string, string> = {
  'poad-s1.log': 'log of a child process',
  'curves.png': 'picture',
  'poad-s1/checkpoints/iter-00000001/meta.json': '{"iteration":1}',
  'poad-s1/run.lock': '1234',
  'poad-s1/code-curves.svg': '<svg/>',
  // Started, not finished, no checkpoint: left out.
  'twosome-s1/config.json': '{"algo":"twosome"}',
};

describe('zip archives (archive-file.ts)', () => {
  it('computes CRC-32 as zip and gzip do, natively or with its own table', () => {
    const check = Buffer.from('123456789');
    expect(crc32(check)).toBe(0xcbf43926);
    expect(crc32Table(check)).toBe(0xcbf43926);
    const data = noise(10_000, 3);
    expect(crc32Table(data)).toBe(crc32(data));
  });

  it('gives back every member byte for byte, leaves out what is not data, and repeats its bytes', () => {
    const dir = tree(join(base, 'cmp-a'), { ...kept, ...leftOut });
    const done = archiveComparison(dir, join(base, 'a'));
    expect(done.file).toBe(join(base, 'a.zip'));
    expect(done.finished).toEqual(['poad-s1', 'poad-s2']);
    const zip = ZipReader.open(done.file);
    expect(zip.names()).toEqual(Object.keys(kept).sort());
    for (const [name, data] of Object.entries(kept)) {
      expect(zip.read(name).equals(Buffer.from(data))).toBe(true);
      // The same through a path, as every reader names a file.
      expect(readData(join(done.file, ...name.split('/'))).equals(Buffer.from(data))).toBe(true);
    }
    // Incompressible data is stored, the rest deflated; both come back.
    expect(zip.entry('poad-s1/sub/deep/noise.bin').method).toBe(0);
    expect(zip.entry('poad-s1/metrics.jsonl').method).toBe(8);
    // The summary's copy beside the archive is the same bytes.
    expect(readFileSync(join(base, 'a.summary.json'), 'utf8')).toBe(kept['summary.json']);
    // The same folder makes the same bytes (no times, members in name order).
    const again = archiveComparison(dir, join(base, 'a-again.zip'));
    expect(readFileSync(again.file).equals(readFileSync(done.file))).toBe(true);
    // Unpacked, it is the folder less what an archive leaves out.
    const out = join(base, 'a-unpacked');
    unpackArchive(done.file, out);
    expect(filesUnder(out)).toEqual(
      Object.fromEntries(Object.entries(kept).map(([k, v]) => [k, Buffer.from(v)])),
    );
    expect(() => unpackArchive(done.file, out)).toThrow(/already exists/);
  });

  it('reads folders and files of an archive by path, as of a folder on disk', () => {
    const file = join(base, 'a.zip');
    expect(isDataFolder(file)).toBe(true);
    expect(listData(file)).toEqual([
      'compare.json',
      'poad-s1',
      'poad-s2',
      'report.md',
      'summary.json',
    ]);
    expect(listData(join(file, 'poad-s1'))).toEqual([
      'config.json',
      'données.json',
      'empty.txt',
      'eval.json',
      'metrics.jsonl',
      'sub',
    ]);
    expect(isDataFolder(join(file, 'poad-s1', 'sub'))).toBe(true);
    expect(isDataFolder(join(file, 'poad-s1', 'eval.json'))).toBe(false);
    expect(dataExists(join(file, 'poad-s2', 'eval.json'))).toBe(true);
    expect(dataExists(join(file, 'twosome-s1'))).toBe(false);
    expect(readJson(join(file, 'poad-s2', 'eval.json'))).toEqual({ results: { x: 1 } });
    expect(() => readText(join(file, 'poad-s2', 'nope.json'))).toThrow(MissingDataError);
    expect(() => readText(join(file, 'poad-s1'))).toThrow(/a folder of an archive/);
    // A comparison named as its folder was is found as its archive; its runs are its folders.
    const c = findComparison(join(base, 'a'));
    expect(c).toEqual({ root: file, name: 'a', archived: true });
    expect(runsOf(c!)).toEqual(['poad-s1', 'poad-s2']);
    expect(comparisonsIn(base).map((x) => [x.name, x.archived])).toEqual([
      ['a', true],
      ['a-again', true],
      ['a-unpacked', false],
      ['cmp-a', false],
    ]);
  });

  it('reads one member without inflating any other', () => {
    const big = `${'{"iteration":1,"reward":0.5}\n'.repeat(20_000)}`;
    const dir = tree(join(base, 'cmp-lazy'), {
      'compare.json': '{}',
      'poad-s1/eval.json': '{"a":1}',
      'poad-s1/metrics.jsonl': big,
    });
    const file = archiveComparison(dir, join(base, 'lazy')).file;
    // Damage the deflated bytes of metrics.jsonl in the file (found by deflating it as the writer did).
    const bytes = readFileSync(file);
    const deflated = deflateRawSync(Buffer.from(big), { level: 9 });
    const at = bytes.indexOf(deflated);
    expect(at).toBeGreaterThan(0);
    for (let i = 0; i < 64; i++) bytes[at + Math.floor(deflated.length / 2) + i]! ^= 0xff;
    writeFileSync(file, bytes);
    const zip = ZipReader.open(file);
    expect(zip.stats).toEqual({ members: 0, bytes: 0 });
    expect(zip.read('poad-s1/eval.json').toString()).toBe('{"a":1}');
    // One member inflated, of its own size: the damaged one was never touched.
    expect(zip.stats).toEqual({ members: 1, bytes: 7 });
    expect(() => zip.read('poad-s1/metrics.jsonl')).toThrow(ArchiveError);
    expect(() => zip.read('poad-s1/metrics.jsonl')).toThrow(/damaged/);
  });

  it('refuses what is not a whole archive, naming the file', () => {
    const file = join(base, 'a.zip');
    const cut = join(base, 'cut.zip');
    const bytes = readFileSync(file);
    writeFileSync(cut, bytes.subarray(0, bytes.length - 30));
    expect(() => ZipReader.open(cut)).toThrow(/cut\.zip: not a zip archive/);
    const text = join(base, 'text.zip');
    writeFileSync(text, 'not an archive at all, just text');
    expect(() => openArchive(text)).toThrow(ArchiveError);
  });

  it('reads a loose data file from its gzipped copy under its plain name', () => {
    const dir = join(base, 'loose');
    mkdirSync(dir);
    writeFileSync(join(dir, 'prior.json.gz'), gzipSync('{"summaries":[1]}'));
    expect(dataExists(join(dir, 'prior.json'))).toBe(true);
    expect(readJson(join(dir, 'prior.json'))).toEqual({ summaries: [1] });
    expect(readJson(join(dir, 'prior.json.gz'))).toEqual({ summaries: [1] });
    expect(() => readData(join(dir, 'other.json'))).toThrow(/no such file \(nor other\.json\.gz/);
  });

  it('reads a prior of programs kept gzipped, named in the report as it was written', () => {
    const dir = join(base, 'prior');
    mkdirSync(dir);
    const prior = {
      summaries: [{ dataset: 'wine', samples: 2, ran: 0.5, meanReward: -0.1, bestAuc: 0.8 }],
      programs: {
        wine: [
          { ok: true, auc: 0.8 },
          { ok: false, auc: null },
        ],
      },
    };
    writeFileSync(join(dir, 'prior-256.json.gz'), gzipSync(JSON.stringify(prior)));
    const byPlain = readPrior(join(dir, 'prior-256.json'), 'wine');
    expect(byPlain).toMatchObject({ file: join(dir, 'prior-256.json'), samples: 2, bestAuc: 0.8 });
    expect(readPrior(join(dir, 'prior-256.json.gz'), 'wine')).toEqual(byPlain);
  });
});
