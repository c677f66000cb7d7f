import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exampleFiles } from './published.js';

/** What a README example is and what it printed. */
export interface ReadmeExampleRun {
  /** The example's source, as the README shows it. */
  code: string;
  /** The lines its `// prints: …` comments say it prints, in order. */
  shown: string[];
  /** Its standard output, lines without trailing white space (banners of TF.js included). */
  out: string[];
}

/**
 * Runs the example of package `pkgDir`'s README marked `<!-- file: NAME -->` (or, with `code`,
 * given source) inside the package folder, so that its imports of the package resolve to the
 * package's own built `dist/`, and returns what it printed. A `.ts`/`.mts` file runs through tsx.
 * Throws naming the build command when `dist/` is missing.
 */
export function runReadmeExample(pkgDir: string, file: string, code?: string): ReadmeExampleRun {
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { name: string };
  if (!existsSync(join(pkgDir, 'dist')))
    throw new Error(`${pkgDir}: dist/ is missing; run \`npm run build -w ${pkg.name}\` first`);
  const source = code ?? exampleFiles(readFileSync(join(pkgDir, 'README.md'), 'utf8')).get(file);
  if (source === undefined)
    throw new Error(`${pkg.name}'s README has no example marked <!-- file: ${file} -->`);
  const dir = mkdtempSync(join(pkgDir, '.readme-'));
  try {
    writeFileSync(join(dir, file), source);
    const ts = /\.m?ts$/.test(file) ? ['--import', 'tsx'] : [];
    const out = execFileSync(process.execPath, [...ts, join(dir, file)], { encoding: 'utf8' });
    return {
      code: source,
      shown: [...source.matchAll(/^\/\/ prints: (.*)$/gm)].map((m) => m[1]!),
      out: out
        .trimEnd()
        .split('\n')
        .map((l) => l.trimEnd()),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
