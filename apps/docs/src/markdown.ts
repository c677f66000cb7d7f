// What the checks read from a Markdown page: its headings' anchors, its links and the text where
// file names may appear, each with its line number. A small reader of the Markdown the docs use
// (ATX headings, fenced code, inline code, inline links and images), not a full parser.

/** A link of a page: `[text](target)` or `![alt](target)`, with its 1-based line. */
export interface MarkdownLink {
  readonly target: string;
  readonly line: number;
}

/** A piece of a page's text with its 1-based line: prose, inline code or a line of a fenced block. */
export interface TextPiece {
  readonly text: string;
  readonly line: number;
}

/** What {@link readMarkdown} finds in a page. */
export interface MarkdownPage {
  /** The anchors a link can point at: every heading's slug (numbered as GitHub numbers repeats) and explicit `id`/`name` attributes. */
  readonly anchors: ReadonlySet<string>;
  readonly links: readonly MarkdownLink[];
  /**
   * Prose and inline code outside links, where bare file names are looked for. Fenced code
   * blocks are left out: they hold commands as they were run, whose paths may be outputs or
   * scratch files.
   */
  readonly text: readonly TextPiece[];
}

const FENCE = /^\s*(`{3,}|~{3,})/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const LINK = /!?\[((?:[^[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/;
const HTML_ID = /<a\s+[^>]*(?:id|name)\s*=\s*"([^"]+)"/gi;

/**
 * The anchor GitHub gives a heading: its text as rendered (inline code kept without the
 * backticks, links as their text), lower-cased, with everything but letters, marks, digits,
 * connector punctuation, spaces and hyphens removed, and spaces turned into hyphens.
 */
export function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[((?:[^[\]]|\[[^\]]*\])*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '');
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Inline code spans of a line, and the line with them blanked out (same length). */
function splitInlineCode(line: string): { prose: string; code: string[] } {
  const code: string[] = [];
  const prose = line.replace(
    /(`+)([^`]|[^`].*?[^`])\1(?!`)/g,
    (whole, _ticks: string, inner: string) => {
      code.push(inner);
      return ' '.repeat(whole.length);
    },
  );
  return { prose, code };
}

/** Reads a page's anchors, links and text (see {@link MarkdownPage}). */
export function readMarkdown(source: string): MarkdownPage {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const links: MarkdownLink[] = [];
  const text: TextPiece[] = [];
  let fence: string | null = null;
  source.split('\n').forEach((raw, i) => {
    const line = i + 1;
    const fenceMatch = FENCE.exec(raw);
    if (fence !== null) {
      if (fenceMatch && fenceMatch[1]![0] === fence[0] && fenceMatch[1]!.length >= fence.length)
        fence = null;
      return;
    }
    if (fenceMatch) {
      fence = fenceMatch[1]!;
      return;
    }
    for (const m of raw.matchAll(HTML_ID)) anchors.add(m[1]!);
    const heading = HEADING.exec(raw);
    if (heading) {
      const base = headingSlug(heading[2]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    const definition = REFERENCE_DEFINITION.exec(raw);
    if (definition) {
      links.push({ target: definition[1]!, line });
      return;
    }
    // Links are found with inline code blanked out (code is never a link); then the links,
    // labels included, are blanked out of the line, whose code and prose are the text.
    const { prose } = splitInlineCode(raw);
    let rest = raw;
    for (const m of prose.matchAll(LINK)) {
      links.push({ target: m[2]!, line });
      rest = rest.slice(0, m.index) + ' '.repeat(m[0].length) + rest.slice(m.index + m[0].length);
    }
    const split = splitInlineCode(rest);
    for (const c of split.code) text.push({ text: c, line });
    text.push({ text: split.prose, line });
  });
  return { anchors, links, text };
}
