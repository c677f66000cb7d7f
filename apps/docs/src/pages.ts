import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AppSpec, algorithmEntry, algorithmNames } from '@poad/trainer';
import { configTables, presetColumns } from './config-tables.js';
import { DOCUMENTED_APPS } from './environments.js';

/** The repository root (this file is apps/docs/src/pages.ts). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The folder of the algorithm pages, relative to the root. */
export const ALGORITHM_DOCS = 'docs/algorithms';

/** A page or a generated part of it that cannot be written as asked. */
export class DocsError extends Error {
  override name = 'DocsError';
}

/** The comment lines that open and close generated part `id` of a page. */
export function markers(id: string): { begin: string; end: string } {
  return {
    begin: `<!-- BEGIN GENERATED ${id}: written by \`npm run docs -w @poad/docs\` from the algorithm registry and the environments' presets; edit those, not this part -->`,
    end: `<!-- END GENERATED ${id} -->`,
  };
}

/**
 * `page` with generated part `id` replaced by `content`. The part is the text between its two
 * marker lines ({@link markers}), each present exactly once, the opening one first.
 * @throws DocsError naming the file and the marker to add or remove.
 */
export function replaceGenerated(page: string, file: string, id: string, content: string): string {
  const { begin, end } = markers(id);
  const count = (s: string) => page.split(s).length - 1;
  for (const m of [begin, end]) {
    if (count(m) !== 1)
      throw new DocsError(
        `${file}: the line ${m} must appear exactly once (found ${count(m)}); add the pair of marker lines where the generated part ${id} belongs`,
      );
  }
  const from = page.indexOf(begin) + begin.length;
  const to = page.indexOf(end);
  if (to < from)
    throw new DocsError(`${file}: the END GENERATED ${id} line comes before its BEGIN line`);
  return `${page.slice(0, from)}\n\n${content.trim()}\n\n${page.slice(to)}`;
}

/** One page with generated parts: its path relative to the root and each part's content. */
export interface GeneratedPage {
  readonly file: string;
  readonly parts: readonly { readonly id: string; readonly content: string }[];
}

/** The index of the algorithm pages: every registered algorithm, its summary and where it is offered. */
function indexTable(apps: readonly AppSpec[]): string {
  const rows = algorithmNames().map((name) => {
    const offered = [...new Set(presetColumns(name, apps).map((c) => c.family))];
    return `| [\`${name}\`](${name}.md) | ${algorithmEntry(name).summary.replace(/\|/g, '\\|')} | ${offered.length ? offered.join(', ') : 'none'} |`;
  });
  return [
    '| `--algo` | what it is (its registry entry) | environments whose presets offer it |',
    '|---|---|---|',
    ...rows,
  ].join('\n');
}

/** Every page the generator writes: the index and one page per registered algorithm. */
export function generatedPages(apps: readonly AppSpec[] = DOCUMENTED_APPS): GeneratedPage[] {
  return [
    {
      file: `${ALGORITHM_DOCS}/README.md`,
      parts: [{ id: 'algorithm-index', content: indexTable(apps) }],
    },
    ...algorithmNames().map((name) => ({
      file: `${ALGORITHM_DOCS}/${name}.md`,
      parts: [{ id: 'config-tables', content: configTables(algorithmEntry(name), apps) }],
    })),
  ];
}

/** A page as it is on disk and as the generator would write it. */
export interface RenderedPage {
  readonly file: string;
  readonly current: string;
  readonly expected: string;
}

/**
 * Every generated page, read from `root` and rendered with its parts regenerated.
 * @throws DocsError when a page is missing (each registered algorithm needs one) or its markers are wrong.
 */
export function renderPages(root: string = REPO_ROOT, apps?: readonly AppSpec[]): RenderedPage[] {
  return generatedPages(apps).map(({ file, parts }) => {
    const path = join(root, file);
    if (!existsSync(path))
      throw new DocsError(
        `${file} is missing: every registered algorithm needs a page; write it with the marker lines of each generated part (${parts.map((p) => markers(p.id).begin).join(', ')}) and run npm run docs -w @poad/docs`,
      );
    const current = readFileSync(path, 'utf8');
    let expected = current;
    for (const part of parts) expected = replaceGenerated(expected, file, part.id, part.content);
    return { file, current, expected };
  });
}

/** Writes every page whose generated parts are out of date; returns the files written. */
export function writePages(root: string = REPO_ROOT, apps?: readonly AppSpec[]): string[] {
  const written: string[] = [];
  for (const page of renderPages(root, apps)) {
    if (page.current === page.expected) continue;
    writeFileSync(join(root, page.file), page.expected);
    written.push(page.file);
  }
  return written;
}
