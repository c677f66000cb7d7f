// The version of the code a run is trained with: every workspace package's version and the git
// commit of the checkout, when it is one. A worker trains only runs queued from the same.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The code a sweep was queued from or a worker runs. */
export interface CodeVersion {
  /** Each workspace package's version, by name. */
  readonly packages: Readonly<Record<string, string>>;
  /** `git rev-parse HEAD` of the checkout; null outside a git repository. */
  readonly commit: string | null;
}

const readJson = (file: string) =>
  JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

/** The package folders an npm `workspaces` list names (entries `dir` or `dir/*`). */
function workspaceDirs(root: string, patterns: readonly string[]): string[] {
  const dirs: string[] = [];
  for (const p of patterns) {
    if (p.endsWith('/*')) {
      const parent = join(root, p.slice(0, -2));
      if (!existsSync(parent)) continue;
      for (const name of readdirSync(parent).sort()) dirs.push(join(parent, name));
    } else dirs.push(join(root, p));
  }
  return dirs.filter((d) => existsSync(join(d, 'package.json')));
}

/**
 * The code version of the repository at `root`: the name and version of its package.json and of
 * each workspace package, and its git commit (null when `root` is not in a git checkout or git is
 * missing). Uncommitted changes are not seen: commit before a sweep whose workers must agree.
 */
export function codeVersionOf(root: string): CodeVersion {
  const manifest = readJson(join(root, 'package.json'));
  const packages: Record<string, string> = {};
  const add = (m: Record<string, unknown>) => {
    if (typeof m.name === 'string') packages[m.name] = String(m.version ?? '');
  };
  add(manifest);
  const ws = Array.isArray(manifest.workspaces) ? (manifest.workspaces as string[]) : [];
  for (const dir of workspaceDirs(root, ws)) add(readJson(join(dir, 'package.json')));
  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    commit = null;
  }
  const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { packages: sorted, commit: commit || null };
}

const short = (commit: string | null) => (commit ? commit.slice(0, 12) : 'no git commit');

/**
 * Why a job queued from code `job` must not be trained by code `mine`, in one sentence, or null
 * when both are the same version.
 */
export function versionDifference(job: unknown, mine: CodeVersion): string | null {
  const theirs = job as Partial<CodeVersion> | null;
  if (!theirs || typeof theirs !== 'object' || typeof theirs.packages !== 'object')
    return 'the job carries no code version';
  const parts: string[] = [];
  if ((theirs.commit ?? null) !== mine.commit)
    parts.push(
      `it was queued from ${short(theirs.commit ?? null)}, this worker runs ${short(mine.commit)}`,
    );
  const names = [
    ...new Set([...Object.keys(theirs.packages ?? {}), ...Object.keys(mine.packages)]),
  ];
  const changed = names
    .filter((n) => theirs.packages?.[n] !== mine.packages[n])
    .map(
      (n) => `${n} ${theirs.packages?.[n] ?? 'absent'} there, ${mine.packages[n] ?? 'absent'} here`,
    );
  if (changed.length) parts.push(`package versions differ (${changed.join('; ')})`);
  return parts.length ? `another code version: ${parts.join('; ')}` : null;
}
