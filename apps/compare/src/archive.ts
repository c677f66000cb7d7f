// npm run archive -w @poad/compare -- COMPARE_DIR DEST [--unfinished]
// Copies a comparison's finished runs without their checkpoints (config, environment, metrics,
// evaluation and perplexity files, plots) and its own files into DEST: a few hundred kB per run
// that `npm run compare -- --reuse DEST` takes in and `--resume DEST --report-only` reports on.
// With --unfinished, each run that has started but not finished comes too, with its latest
// checkpoint only, so that `npm run compare -- --resume DEST` continues the comparison there
// (on another machine, say) exactly where it was cut off.
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { OptionError } from '@poad/config';
import { listCheckpoints } from '@poad/run-kit';
import { finished } from './reuse.js';

/** What the archive of a finished run leaves out: its checkpoints and its lock. */
export const SKIP = new Set(['checkpoints', 'run.lock']);

/**
 * Where a run's copy is made, beside its place in the archive: it is renamed into place once
 * complete, so a kill during the copy leaves the earlier copy (or none), never a part of a run.
 */
const partial = (name: string) => `.${name}.part`;

/** What `archiveComparison` copied. */
export interface Archived {
  /** Finished runs, without checkpoints. */
  finished: string[];
  /** Started, unfinished runs with their latest checkpoint (only with `unfinished`). */
  unfinished: string[];
}

/**
 * Copies the finished runs of `from` into `to`, and with `unfinished` also each started run with
 * the checkpoint `--resume` would load (run-kit's first complete one: the one `latest.json`
 * names, else the newest) and that pointer; a run without one is left out (it starts again
 * anyway). A run `to` already holds is replaced whole, so an earlier copy's checkpoints do not
 * linger; each run's copy is made aside and renamed into place (a cut-off archive is repaired by
 * archiving again).
 */
export function archiveComparison(
  from: string,
  to: string,
  { unfinished = false }: { unfinished?: boolean } = {},
): Archived {
  const src = resolve(from);
  if (!existsSync(join(src, 'compare.json'))) {
    throw new OptionError(
      `${from}: not a comparison folder (no compare.json); pass one written by npm run compare`,
    );
  }
  if (resolve(to) === src) {
    throw new OptionError(
      `${to}: the archive would overwrite the comparison itself; pass another DEST`,
    );
  }
  mkdirSync(to, { recursive: true });
  // What an archive cut off in the middle of a run's copy left.
  for (const name of readdirSync(to)) {
    if (name.startsWith('.') && name.endsWith('.part')) {
      rmSync(join(to, name), { recursive: true, force: true });
    }
  }
  const copied: Archived = { finished: [], unfinished: [] };
  for (const name of readdirSync(src)) {
    const path = join(src, name);
    if (statSync(path).isDirectory()) {
      const done = finished(path);
      const checkpoint = !done && unfinished ? (listCheckpoints(path)[0]?.name ?? null) : null;
      if (!done && checkpoint === null) continue;
      const part = join(to, partial(name));
      mkdirSync(part);
      for (const f of readdirSync(path)) {
        if (SKIP.has(f)) continue;
        cpSync(join(path, f), join(part, f), { recursive: true });
      }
      if (checkpoint !== null) {
        for (const f of ['latest.json', checkpoint]) {
          const at = join(path, 'checkpoints', f);
          if (existsSync(at)) cpSync(at, join(part, 'checkpoints', f), { recursive: true });
        }
      }
      // A run archived before (cut off, with an older checkpoint) is replaced, not merged into.
      rmSync(join(to, name), { recursive: true, force: true });
      renameSync(part, join(to, name));
      (checkpoint !== null ? copied.unfinished : copied.finished).push(name);
    } else if (!name.endsWith('.log')) {
      cpSync(path, join(to, name));
    }
  }
  return copied;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const unfinished = args.includes('--unfinished');
  const [from, to, ...rest] = args.filter((a) => a !== '--unfinished');
  if (!from || !to || rest.length > 0) {
    process.stderr.write(
      'usage: npm run archive -w @poad/compare -- COMPARE_DIR DEST [--unfinished]\n',
    );
    process.exit(2);
  }
  try {
    const runs = archiveComparison(from, to, { unfinished });
    process.stdout.write(
      `archived ${runs.finished.length} finished run${runs.finished.length === 1 ? '' : 's'} of ${basename(resolve(from))} into ${to}${
        unfinished
          ? `, and ${runs.unfinished.length} unfinished with their latest checkpoint (continue with: npm run compare -- --resume ${to})`
          : ''
      }\n`,
    );
  } catch (err) {
    if (err instanceof OptionError) {
      process.stderr.write(`error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
