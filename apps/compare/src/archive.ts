// npm run archive -w @poad/compare -- COMPARE_DIR DEST
// Copies a comparison's finished runs without their checkpoints (config, environment, metrics,
// evaluation and perplexity files, plots) and its own files into DEST: a few hundred kB per run
// that `npm run compare -- --reuse DEST` takes in and `--resume DEST --report-only` reports on.
import { cpSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { OptionError } from '@poad/config';
import { finished } from './reuse.js';

/** What the archive of a finished run leaves out: its checkpoints and its lock. */
export const SKIP = new Set(['checkpoints', 'run.lock']);

/** Copies the finished runs of `from` into `to`; returns the names of the runs copied. */
export function archiveComparison(from: string, to: string): string[] {
  const src = resolve(from);
  if (!existsSync(join(src, 'compare.json'))) {
    throw new OptionError(
      `${from}: not a comparison folder (no compare.json); pass one written by npm run compare`,
    );
  }
  mkdirSync(to, { recursive: true });
  const copied: string[] = [];
  for (const name of readdirSync(src)) {
    const path = join(src, name);
    if (statSync(path).isDirectory()) {
      if (!finished(path)) continue;
      for (const f of readdirSync(path)) {
        if (SKIP.has(f)) continue;
        cpSync(join(path, f), join(to, name, f), { recursive: true });
      }
      copied.push(name);
    } else if (!name.endsWith('.log')) {
      cpSync(path, join(to, name));
    }
  }
  return copied;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [from, to] = process.argv.slice(2);
  if (!from || !to) {
    process.stderr.write('usage: npm run archive -w @poad/compare -- COMPARE_DIR DEST\n');
    process.exit(2);
  }
  try {
    const runs = archiveComparison(from, to);
    process.stdout.write(
      `archived ${runs.length} finished runs of ${basename(resolve(from))} into ${to}\n`,
    );
  } catch (err) {
    if (err instanceof OptionError) {
      process.stderr.write(`error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
