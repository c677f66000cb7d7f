// npm run compare on an archived comparison (npm run archive): --report-only, --resume and --reuse
// read the archive as it is, and give what they give on its folder.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { flatRunConfig, runConfigOf } from '@poad/trainer';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { appOf } from '../src/apps.js';
import { archiveComparison } from '../src/archive.js';
import { openArchive } from '../src/archive-file.js';
import { compare } from '../src/main.js';
import { filesUnder } from './files.js';

const base = mkdtempSync(join(tmpdir(), 'poad-compare-archive-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Collects what the comparison writes to stderr (restored after each test). */
function captureStderr(): string[] {
  const msgs: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((m) => {
    msgs.push(String(m));
    return true;
  });
  return msgs;
}

const ENV = 'credit/delayed';
/** The comparison's own options (as its compare.json keeps them). */
const ARGV = [
  '--env',
  ENV,
  '--algos',
  'poad,twosome',
  '--seeds',
  '2',
  '--eval-episodes',
  '1',
  '--max-iterations',
  '1',
];

/**
 * A finished comparison of ARGV as `compare` lays it out, without training: each run's config.json
 * is the one its command line resolves to (so --reuse matches it), its metrics rows and final
 * evaluation made up from its seed.
 */
async function finishedComparison(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'compare.json'), JSON.stringify({ argv: ARGV }));
  const app = appOf(ENV);
  for (const algo of ['poad', 'twosome'])
    for (const seed of [1, 2]) {
      const name = `${algo}-s${seed}`;
      const run = join(dir, name);
      mkdirSync(run);
      const args = ['--task', 'delayed', '--backend', 'auto', '--runs', dir, '--quiet'];
      args.push('--eval-episodes', '1', '--max-iterations', '1');
      args.push('--algo', algo, '--seed', String(seed), '--run-name', name);
      const rc = await runConfigOf(app, args);
      writeFileSync(join(run, 'config.json'), JSON.stringify(flatRunConfig(rc), null, 2));
      const k = (algo === 'poad' ? 1 : 2) * seed;
      const rows = Array.from({ length: 12 }, (_, i) => ({
        iteration: i + 1,
        envSteps: 64 * (i + 1),
        episodes: 4,
        episodeReturn: Math.min(1, (i * k) / 20),
        successRate: Math.min(1, (i * k) / 16),
        episodeLength: 8,
        creditAccuracy: 0.1 * k - 0.01 * i,
        wallSeconds: i + 1,
      }));
      writeFileSync(
        join(run, 'metrics.jsonl'),
        `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`,
      );
      writeFileSync(
        join(run, 'eval.json'),
        JSON.stringify({
          results: { 'delayed/greedy': { meanReturn: 0.1 * k, successRate: k >= 2 ? 1 : 0 } },
        }),
      );
    }
  return dir;
}

/** The report files a comparison writes, by name. */
const reportOf = (dir: string) => {
  const files = filesUnder(dir);
  const names = [
    'report.md',
    'summary.json',
    'curves.svg',
    'success.svg',
    'curves.png',
    'success.png',
  ];
  expect(Object.keys(files)).toEqual(expect.arrayContaining(names));
  return Object.fromEntries(names.map((n) => [n, files[n]!.toString('base64')]));
};

describe('npm run compare on an archive', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('--report-only reports on the archive as on its folder, into a folder of its name under --out', async () => {
    captureStderr();
    const folder = await finishedComparison(join(base, 'folder', 'cmp'));
    const zip = archiveComparison(folder, join(base, 'archived', 'cmp')).file;
    expect(await compare(['--resume', folder, '--report-only'])).toBe(0);
    const out = join(base, 'out');
    expect(await compare(['--resume', zip, '--report-only', '--out', out])).toBe(0);
    const fromFolder = reportOf(folder);
    expect(reportOf(join(out, 'cmp'))).toEqual(fromFolder);
    expect(Buffer.from(fromFolder['report.md']!, 'base64').toString()).toContain(
      '(then --resume cmp --report-only: finished runs only)',
    );
    // The archive is left as it was; a comparison named as its folder was is its archive.
    expect(openArchive(zip).has('report.md')).toBe(false);
    const again = join(base, 'out-again');
    expect(
      await compare(['--resume', join(base, 'archived', 'cmp'), '--report-only', '--out', again]),
    ).toBe(0);
    expect(reportOf(join(again, 'cmp'))).toEqual(fromFolder);
    // A report is not written over a comparison continued from the archive.
    writeFileSync(join(again, 'cmp', 'compare.json'), JSON.stringify({ argv: ARGV }));
    await expect(compare(['--resume', zip, '--report-only', '--out', again])).rejects.toThrow(
      /holds the comparison continued from this archive/,
    );
  }, 0);

  it('--resume continues an archive in a folder unpacked from it under --out', async () => {
    const msgs = captureStderr();
    const folder = await finishedComparison(join(base, 'resume', 'cmp2'));
    const zip = archiveComparison(folder, join(base, 'resume', 'archive', 'cmp2')).file;
    const out = join(base, 'resume-out');
    // Every run is finished: nothing trains, and the report is written there.
    expect(await compare(['--resume', zip, '--out', out])).toBe(0);
    const dir = join(out, 'cmp2');
    expect(msgs.join('')).toContain(`unpacked ${zip} into ${dir}`);
    expect(msgs.join('')).toContain('4 of 4 runs already finished');
    const members = openArchive(zip).names();
    const unpacked = filesUnder(dir);
    for (const m of members) expect(unpacked[m]!.equals(openArchive(zip).read(m))).toBe(true);
    expect(existsSync(join(dir, 'report.md'))).toBe(true);
    msgs.length = 0;
    expect(await compare(['--resume', zip, '--out', out])).toBe(0);
    expect(msgs.join('')).toContain(`continuing ${zip} in ${dir}`);
  }, 0);

  it('--reuse takes finished runs from an archive, copied out of it whole', async () => {
    const msgs = captureStderr();
    const folder = await finishedComparison(join(base, 'reuse', 'earlier'));
    const zip = archiveComparison(folder, join(base, 'reuse', 'earlier-archive')).file;
    rmSync(folder, { recursive: true });
    const out = join(base, 'reuse-out');
    expect(await compare([...ARGV, '--reuse', zip, '--out', out])).toBe(0);
    const log = msgs.join('');
    for (const name of ['poad-s1', 'poad-s2', 'twosome-s1', 'twosome-s2'])
      expect(log).toContain(`(${name}) from ${join(zip, name)}`);
    expect(log).toContain('4 of 4 runs already finished');
    const [dir] = readdirSync(out);
    const copied = filesUnder(join(out, dir!));
    const archive = openArchive(zip);
    for (const m of archive.names().filter((n) => n.includes('/')))
      expect(copied[m]!.equals(archive.read(m))).toBe(true);
    const reused = JSON.parse(copied['poad-s2/reused.json']!.toString());
    expect(reused.from).toBe(join(zip, 'poad-s2'));
    const summary = JSON.parse(copied['summary.json']!.toString());
    expect(summary.reused['twosome-s1']).toBe(join(zip, 'twosome-s1'));
    // An archive named as its folder was is found too; a path that is neither is refused.
    expect(
      await compare([
        ...ARGV,
        '--reuse',
        join(base, 'reuse', 'earlier-archive'),
        '--out',
        join(base, 'reuse-out-2'),
      ]),
    ).toBe(0);
    await expect(
      compare([
        ...ARGV,
        '--reuse',
        join(base, 'reuse', 'nope'),
        '--out',
        join(base, 'reuse-out-3'),
      ]),
    ).rejects.toThrow(/--reuse .*nope: no such folder or archive/);
  }, 0);
});
