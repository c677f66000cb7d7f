import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { archiveComparison, convertResults, GZIP_FROM } from '../src/archive.js';
import { openArchive, partOf, readJson, ZipReader } from '../src/archive-file.js';
import { filesUnder, noise, tree } from './files.js';

const base = mkdtempSync(join(tmpdir(), 'poad-archive-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const APP = fileURLToPath(new URL('..', import.meta.url));

/** A comparison folder with one run, finished (an eval.json) or not. */
function comparison(dir: string, run: string, done: boolean): string {
  tree(dir, {
    'compare.json': '{}',
    [`${run}/config.json`]: '{}',
    [`${run}/metrics.jsonl`]: '{"iteration":1}\n',
    ...(done ? { [`${run}/eval.json`]: '{}' } : {}),
  });
  return dir;
}

describe('archiveComparison', () => {
  it('replaces the whole of a run archived earlier, so the checkpoints of its cut-off copy do not linger', () => {
    // An earlier archive holds the run cut off, with a checkpoint and a file the run no longer has.
    const earlier = tree(join(base, 'earlier'), {
      'compare.json': '{}',
      'poad-s1/config.json': '{}',
      'poad-s1/stale.txt': 'old',
      'poad-s1/checkpoints/latest.json': '{"name":"iter-00000146"}',
      'poad-s1/checkpoints/iter-00000146/meta.json': '{"iteration":146}',
    });
    const to = join(base, 'archive.zip');
    expect(archiveComparison(earlier, to, { unfinished: true }).unfinished).toEqual(['poad-s1']);
    expect(ZipReader.open(to).names()).toContain('poad-s1/checkpoints/iter-00000146/meta.json');
    const from = comparison(join(base, 'cmp'), 'poad-s1', true);
    expect(archiveComparison(from, to)).toEqual({
      file: to,
      finished: ['poad-s1'],
      unfinished: [],
      kept: [],
    });
    expect(ZipReader.open(to).names()).toEqual([
      'compare.json',
      'poad-s1/config.json',
      'poad-s1/eval.json',
      'poad-s1/metrics.jsonl',
    ]);
  });

  it('keeps a run it does not write as the earlier archive held it, and refuses to write inside the comparison', () => {
    const to = join(base, 'archive2.zip');
    archiveComparison(comparison(join(base, 'cmp2-done'), 'poad-s2', true), to);
    // Unfinished and without a checkpoint: not written, so the archived copy stays.
    const from = comparison(join(base, 'cmp2'), 'poad-s2', false);
    expect(archiveComparison(from, to, { unfinished: true })).toMatchObject({
      finished: [],
      unfinished: [],
      kept: ['poad-s2'],
    });
    expect(readJson(join(to, 'poad-s2', 'eval.json'))).toEqual({});
    expect(() => archiveComparison(from, join(from, 'inside.zip'))).toThrow(
      /inside the comparison itself/,
    );
    expect(existsSync(join(from, 'inside.zip'))).toBe(false);
    expect(() => archiveComparison(join(from, 'poad-s2'), join(base, 'x'))).toThrow(
      /not a comparison folder/,
    );
  });

  it('with --unfinished keeps only the checkpoint --resume would load, and its pointer', () => {
    const from = tree(join(base, 'cmp-unfinished'), {
      'compare.json': '{}',
      'poad-s1/config.json': '{}',
      'poad-s1/checkpoints/latest.json': '{"name":"iter-00000002"}',
      'poad-s1/checkpoints/iter-00000001/meta.json': '{"iteration":1}',
      'poad-s1/checkpoints/iter-00000002/meta.json': '{"iteration":2}',
      'poad-s1/checkpoints/iter-00000002/model/weights.bin': noise(2000, 1),
    });
    const file = archiveComparison(from, join(base, 'unfinished'), { unfinished: true }).file;
    expect(ZipReader.open(file).names()).toEqual([
      'compare.json',
      'poad-s1/checkpoints/iter-00000002/meta.json',
      'poad-s1/checkpoints/iter-00000002/model/weights.bin',
      'poad-s1/checkpoints/latest.json',
      'poad-s1/config.json',
    ]);
    // Without a summary.json there is no copy of one beside it.
    expect(existsSync(join(base, 'unfinished.summary.json'))).toBe(false);
  });
});

describe('writing an archive atomically', () => {
  it('an error mid-write leaves the earlier archive as it was (or none) and no part file', () => {
    const from = tree(join(base, 'cmp-fifo'), {
      'compare.json': '{}',
      'summary.json': '{"later":true}',
      'poad-s3/config.json': '{}',
      'poad-s3/eval.json': '{"later":true}',
    });
    // A FIFO cannot be archived: the write fails after the members named before it.
    execFileSync('mkfifo', [join(from, 'poad-s3', 'pipe')]);
    const fresh = join(base, 'fifo-fresh.zip');
    expect(() => archiveComparison(from, fresh)).toThrow(/pipe: not a regular file/);
    expect(existsSync(fresh)).toBe(false);
    expect(existsSync(partOf(fresh))).toBe(false);
    // Over an earlier archive: it stays byte for byte, and so does the summary beside it.
    const to = archiveComparison(
      tree(join(base, 'cmp-fifo-earlier'), {
        'compare.json': '{}',
        'summary.json': '{"earlier":true}',
        'poad-s3/config.json': '{}',
        'poad-s3/eval.json': '{"earlier":true}',
      }),
      join(base, 'fifo.zip'),
    ).file;
    const before = readFileSync(to);
    expect(() => archiveComparison(from, to)).toThrow(/not a regular file/);
    expect(readFileSync(to).equals(before)).toBe(true);
    expect(readFileSync(join(base, 'fifo.summary.json'), 'utf8')).toBe('{"earlier":true}');
    expect(existsSync(partOf(to))).toBe(false);
    // Once the run can be archived, archiving again replaces it.
    rmSync(join(from, 'poad-s3', 'pipe'));
    archiveComparison(from, to);
    expect(readJson(join(to, 'poad-s3', 'eval.json'))).toEqual({ later: true });
    expect(readFileSync(join(base, 'fifo.summary.json'), 'utf8')).toBe('{"later":true}');
  });

  it('a kill mid-write leaves the earlier archive under its name, not part of the new one', async () => {
    // Enough incompressible data that the write takes a while: 12 members of 4 MiB.
    const files: Record<string, Buffer | string> = {
      'compare.json': '{}',
      'poad-s1/config.json': '{}',
      'poad-s1/eval.json': '{}',
    };
    for (let i = 0; i < 12; i++) files[`poad-s1/part-${i}.bin`] = noise(4 << 20, 100 + i);
    const from = tree(join(base, 'cmp-kill'), files);
    const to = archiveComparison(
      comparison(join(base, 'cmp-kill-earlier'), 'poad-s1', true),
      join(base, 'kill.zip'),
    ).file;
    const before = readFileSync(to);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/archive.ts', from, to], {
      cwd: APP,
      stdio: 'ignore',
    });
    const exited = new Promise<void>((ok) => child.on('exit', () => ok()));
    const part = partOf(to);
    const deadline = Date.now() + 120_000;
    // Killed as soon as the new archive has begun to be written.
    while (!(existsSync(part) && statSync(part).size > 0)) {
      if (Date.now() > deadline || child.exitCode !== null) break;
      await new Promise((ok) => setTimeout(ok, 2));
    }
    child.kill('SIGKILL');
    await exited;
    expect(child.signalCode).toBe('SIGKILL');
    // It was cut off mid-write: the part is there, short of the whole; the name holds the earlier one.
    expect(statSync(part).size).toBeGreaterThan(0);
    expect(statSync(part).size).toBeLessThan(48 << 20);
    expect(readFileSync(to).equals(before)).toBe(true);
    // Archiving again overwrites what the kill left and puts the whole archive in place.
    archiveComparison(from, to);
    expect(existsSync(part)).toBe(false);
    expect(
      openArchive(to)
        .read('poad-s1/part-11.bin')
        .equals(files['poad-s1/part-11.bin'] as Buffer),
    ).toBe(true);
  });
});

describe('convertResults (npm run archive -- --convert)', () => {
  it('turns each comparison folder into its archive and gzips large loose files, and changes nothing the second time', () => {
    const results = join(base, 'results');
    const big = JSON.stringify({ programs: Array.from({ length: 8000 }, (_, i) => ({ i })) });
    expect(big.length).toBeGreaterThanOrEqual(GZIP_FROM);
    const folder = {
      'compare.json': '{"argv":[]}',
      'summary.json': '{"summaries":[]}',
      'poad-s1/config.json': '{}',
      'poad-s1/eval.json': '{}',
      'poad-s1/metrics.jsonl': '{"iteration":1}\n',
    };
    tree(results, {
      'README.md': '# Results\n',
      'study/prior-256.json': big,
      'study/small.json': '{"kept":"plain"}',
      ...Object.fromEntries(
        Object.entries(folder).map(([k, v]) => [`study/env/compare-x/${k}`, v]),
      ),
      ...Object.fromEntries(Object.entries(folder).map(([k, v]) => [`settle/arm/${k}`, v])),
    });
    const done = convertResults(results);
    expect(done.archives).toEqual([
      join(results, 'settle', 'arm.zip'),
      join(results, 'study', 'env', 'compare-x.zip'),
    ]);
    expect(done.gzipped).toEqual([join(results, 'study', 'prior-256.json.gz')]);
    expect(readdirSync(join(results, 'study')).sort()).toEqual([
      'env',
      'prior-256.json.gz',
      'small.json',
    ]);
    expect(readdirSync(join(results, 'study', 'env')).sort()).toEqual([
      'compare-x.summary.json',
      'compare-x.zip',
    ]);
    const zip = join(results, 'study', 'env', 'compare-x.zip');
    expect(filesUnder(join(results, 'study', 'env'))['compare-x.summary.json']!.toString()).toBe(
      folder['summary.json'],
    );
    for (const [name, data] of Object.entries(folder))
      expect(openArchive(zip).read(name).toString()).toBe(data);
    expect(readJson(join(results, 'study', 'prior-256.json'))).toEqual(JSON.parse(big));
    const bytes = readFileSync(zip);
    expect(convertResults(results)).toEqual({ archives: [], gzipped: [] });
    expect(readFileSync(zip).equals(bytes)).toBe(true);
  });

  it('keeps a folder the archive would not hold whole, and says what differs', () => {
    const results = join(base, 'results-unfinished');
    // A run started but neither finished nor checkpointed: an archive leaves it out.
    comparison(join(results, 'cmp'), 'poad-s1', false);
    expect(() => convertResults(results)).toThrow(
      /does not hold .*cmp as it is \(poad-s1\/config\.json: not in the archive/,
    );
    expect(existsSync(join(results, 'cmp', 'poad-s1', 'config.json'))).toBe(true);
  });
});
