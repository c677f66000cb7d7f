#!/usr/bin/env node
// npm run docs -w @poad/docs            regenerate the generated parts of docs/algorithms/*.md
// npm run docs -w @poad/docs -- --check  change nothing; list out-of-date pages and broken references
import { ALLOWED_BROKEN_REFERENCES } from './allowed-references.js';
import { DocsError, REPO_ROOT, renderPages, writePages } from './pages.js';
import { checkRepository, Repository, unlisted } from './references.js';

function main(argv: readonly string[]): number {
  const unknown = argv.filter((a) => a !== '--check');
  if (unknown.length > 0)
    throw new DocsError(`unknown argument(s) ${unknown.join(' ')}; the only option is --check`);
  const check = argv.includes('--check');
  let failed = false;
  if (check) {
    for (const page of renderPages(REPO_ROOT)) {
      if (page.current === page.expected) continue;
      failed = true;
      process.stdout.write(
        `${page.file}: out of date with the schemas and presets; run npm run docs -w @poad/docs\n`,
      );
    }
  } else {
    const written = writePages(REPO_ROOT);
    process.stdout.write(
      written.length ? `wrote ${written.join(', ')}\n` : 'every generated page is up to date\n',
    );
  }
  const broken = unlisted(checkRepository(new Repository(REPO_ROOT)), ALLOWED_BROKEN_REFERENCES);
  for (const b of broken)
    process.stdout.write(`${b.file}:${b.line}: ${b.reference}: ${b.reason}\n`);
  return failed || broken.length > 0 ? 1 : 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof DocsError)) throw err;
  process.stderr.write(`error: ${err.message}\n`);
  process.exitCode = 2;
}
