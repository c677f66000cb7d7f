import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { sourceComments } from './comments.js';
import { type MarkdownPage, readMarkdown, type TextPiece } from './markdown.js';

/** One reference that does not resolve: where it is, what it says, and why it fails. */
export interface BrokenReference {
  /** The file that holds it, relative to the repository root, with `/` separators. */
  readonly file: string;
  readonly line: number;
  /** The reference as written (a link's target, or a file name in the text). */
  readonly reference: string;
  readonly reason: string;
}

/**
 * The folders at the top of the repository: a word that starts with one of them and a `/` is
 * read as a path from the repository root (`packages/ppo/src/config.ts`, `docs/results.md`).
 */
export const ROOT_FOLDERS = [
  'packages',
  'apps',
  'docs',
  'results',
  'scripts',
  'templates',
  '.changeset',
  '.ci',
] as const;

/**
 * Names of files the commands write into their output folders, which the docs and comments name
 * without a folder: `compare`'s report (`report.md`) and the GPU bench's summary (`summary.md`).
 */
export const OUTPUT_FILES: readonly string[] = ['report.md', 'summary.md'];

/** Characters that make a path a pattern or a placeholder (`packages/envs-<name>`, `*.json`). */
const PLACEHOLDER = /[*<>{}…$|[\]]|XXXX|\.\.\.$/;
const ROOT_PATH = new RegExp(`^(?:${ROOT_FOLDERS.map((f) => f.replace('.', '\\.')).join('|')})/`);
const SEPARATORS = /[\s`'"()[\],;=]+/;

/**
 * The file names in a piece of text that must resolve: paths from the repository root (see
 * {@link ROOT_FOLDERS}) and any `*.md` name, each without its `#anchor`, a `:line` suffix,
 * trailing punctuation or a possessive `'s`. Patterns, placeholders and URLs are left out.
 */
export function fileNamesIn(text: string): { name: string; anchor: string | null }[] {
  const out: { name: string; anchor: string | null }[] = [];
  for (const word of text.replace(/'s\b/g, ' ').split(SEPARATORS)) {
    if (word === '' || word.includes('://') || PLACEHOLDER.test(word)) continue;
    const hash = word.indexOf('#');
    let name = hash >= 0 ? word.slice(0, hash) : word;
    const anchor = hash >= 0 ? word.slice(hash + 1).replace(/[.:;,!?]+$/, '') : null;
    name = name.replace(/:\d+(?:-\d+)?$/, '').replace(/[.:;,!?]+$/, '');
    if (name === '') continue;
    if (ROOT_PATH.test(name) || /(?:^|\/)[^/.][^/]*\.md$/.test(name))
      out.push({ name, anchor: anchor || null });
  }
  return out;
}

/** Files and anchors of the repository at `root`, read once and shared by every check. */
export class Repository {
  private readonly pages = new Map<string, MarkdownPage>();

  constructor(readonly root: string) {}

  /** The path of `file` (absolute) relative to the root, with `/` separators. */
  relative(file: string): string {
    return relative(this.root, file).split(sep).join('/');
  }

  /** Whether `path` (absolute) is a file or folder inside the repository. */
  exists(path: string): boolean {
    const rel = relative(this.root, path);
    return !rel.startsWith('..') && existsSync(path);
  }

  /**
   * Whether git ignores `path` (absolute): a folder or file that commands write (a build's work
   * folder, `runs/`), never committed. False outside a git checkout.
   */
  ignored(path: string): boolean {
    const r = spawnSync('git', ['check-ignore', '--no-index', '-q', path], { cwd: this.root });
    return r.status === 0;
  }

  /** The Markdown page at `path` (absolute), read once. */
  page(path: string): MarkdownPage {
    let page = this.pages.get(path);
    if (!page) {
      page = readMarkdown(readFileSync(path, 'utf8'));
      this.pages.set(path, page);
    }
    return page;
  }

  /** Files under `folder` (relative to the root) whose names end with one of `extensions`. */
  files(folder: string, extensions: readonly string[]): string[] {
    const out: string[] = [];
    const walk = (dir: string) => {
      if (!existsSync(dir)) return;
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.name === 'node_modules' || entry.name === 'dist') continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (extensions.some((e) => entry.name.endsWith(e))) out.push(path);
      }
    };
    walk(join(this.root, folder));
    return out.sort();
  }
}

/** Why an anchor of a Markdown file does not resolve, or null when it does. */
function anchorProblem(repo: Repository, path: string, anchor: string | null): string | null {
  if (anchor === null || !path.endsWith('.md') || !statSync(path).isFile()) return null;
  const wanted = decodeURIComponent(anchor);
  if (repo.page(path).anchors.has(wanted)) return null;
  return `${repo.relative(path)} has no heading with the anchor #${wanted}`;
}

/**
 * The first of `bases` (absolute folders) under which `name` exists, or null.
 */
function resolveIn(repo: Repository, bases: readonly string[], name: string): string | null {
  for (const base of bases) {
    const path = resolve(base, name);
    if (repo.exists(path)) return path;
  }
  return null;
}

/**
 * Checks the bare file names of `pieces` (see {@link fileNamesIn}): a root path must exist under
 * the root (or, in source comments, under the file's package or app: `rootBases`); a `.md` name
 * under one of `bases` (the file's folder first) or the root; an anchor must be a heading of the
 * Markdown file named. Names of command outputs ({@link OUTPUT_FILES}, paths git ignores) pass.
 */
function checkFileNames(
  repo: Repository,
  file: string,
  pieces: readonly TextPiece[],
  bases: readonly string[],
  rootBases: readonly string[] = [],
): BrokenReference[] {
  const broken: BrokenReference[] = [];
  const rel = repo.relative(file);
  for (const piece of pieces) {
    for (const { name, anchor } of fileNamesIn(piece.text)) {
      const candidates = ROOT_PATH.test(name) ? [repo.root, ...rootBases] : [...bases, repo.root];
      const path = resolveIn(repo, candidates, name);
      const reference = anchor === null ? name : `${name}#${anchor}`;
      if (path === null) {
        const output =
          OUTPUT_FILES.includes(basename(name)) ||
          (ROOT_PATH.test(name) &&
            repo.ignored(resolve(repo.root, name) + (name.endsWith('/') ? '/' : '')));
        if (!output)
          broken.push({ file: rel, line: piece.line, reference, reason: 'no such file' });
        continue;
      }
      const problem = anchorProblem(repo, path, anchor);
      if (problem) broken.push({ file: rel, line: piece.line, reference, reason: problem });
    }
  }
  return broken;
}

/**
 * Every broken link and file name of the Markdown file `file` (absolute): relative link targets
 * must exist inside the repository (files or folders), their `#anchors` and the page's own
 * `#anchors` must be headings, and bare file names must resolve (see {@link fileNamesIn}).
 */
export function checkMarkdownFile(repo: Repository, file: string): BrokenReference[] {
  const page = repo.page(file);
  const rel = repo.relative(file);
  const broken: BrokenReference[] = [];
  for (const link of page.links) {
    const target = link.target;
    if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const hash = target.indexOf('#');
    const pathPart = hash >= 0 ? target.slice(0, hash) : target;
    const anchor = hash >= 0 ? target.slice(hash + 1) : null;
    const path = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
    if (!repo.exists(path)) {
      broken.push({ file: rel, line: link.line, reference: target, reason: 'no such file' });
      continue;
    }
    const problem = anchorProblem(repo, path, anchor);
    if (problem) broken.push({ file: rel, line: link.line, reference: target, reason: problem });
  }
  broken.push(...checkFileNames(repo, file, page.text, [dirname(file)]));
  return broken;
}

/** The package or app folder that holds `file` (absolute), or null. */
function workspaceOf(repo: Repository, file: string): string | null {
  const parts = repo.relative(file).split('/');
  return parts.length > 2 && (parts[0] === 'packages' || parts[0] === 'apps')
    ? join(repo.root, parts[0], parts[1]!)
    : null;
}

/**
 * Every file name in the comments of the TypeScript file `file` (absolute) that does not
 * resolve: a root path under the root, a `.md` name beside the file, in its package or app, or
 * at the root.
 */
export function checkSourceFile(repo: Repository, file: string): BrokenReference[] {
  const pieces = sourceComments(file, readFileSync(file, 'utf8'));
  const workspace = workspaceOf(repo, file);
  const own = workspace ? [workspace] : [];
  return checkFileNames(repo, file, pieces, [dirname(file), ...own], own);
}

/** The files the repository check reads: the README, docs/**\/*.md and packages' and apps' sources. */
export function checkedFiles(repo: Repository): { markdown: string[]; sources: string[] } {
  const markdown = [join(repo.root, 'README.md'), ...repo.files('docs', ['.md'])];
  const sources: string[] = [];
  for (const top of ['packages', 'apps']) {
    const dir = join(repo.root, top);
    for (const name of readdirSync(dir).sort())
      sources.push(...repo.files(`${top}/${name}/src`, ['.ts', '.tsx', '.mts', '.cts']));
  }
  return { markdown, sources };
}

/** Every broken reference of the README, the docs and the source comments of `repo`. */
export function checkRepository(repo: Repository): BrokenReference[] {
  const { markdown, sources } = checkedFiles(repo);
  return [
    ...markdown.flatMap((f) => checkMarkdownFile(repo, f)),
    ...sources.flatMap((f) => checkSourceFile(repo, f)),
  ];
}

/** The broken references of `broken` that `allowed` does not list (by file and reference). */
export function unlisted(
  broken: readonly BrokenReference[],
  allowed: readonly { file: string; reference: string }[],
): BrokenReference[] {
  return broken.filter(
    (b) => !allowed.some((a) => a.file === b.file && a.reference === b.reference),
  );
}

/** The entries of `allowed` that no broken reference matches any more (to be removed). */
export function stale(
  broken: readonly BrokenReference[],
  allowed: readonly { file: string; reference: string }[],
): { file: string; reference: string }[] {
  return allowed.filter(
    (a) => !broken.some((b) => a.file === b.file && a.reference === b.reference),
  );
}
