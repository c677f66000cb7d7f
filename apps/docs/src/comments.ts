import ts from 'typescript';
import type { TextPiece } from './markdown.js';

/**
 * The comments of a TypeScript source file, one piece per comment line with its 1-based line
 * number. TypeScript's own parser finds them, so comment markers inside strings, template
 * literals and regular expressions are not taken for comments.
 */
export function sourceComments(fileName: string, source: string): TextPiece[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false);
  const starts = new Set<number>();
  const ranges: ts.CommentRange[] = [];
  const collect = (list: ts.CommentRange[] | undefined) => {
    for (const r of list ?? []) {
      if (starts.has(r.pos)) continue;
      starts.add(r.pos);
      ranges.push(r);
    }
  };
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(source, node.pos));
    collect(ts.getTrailingCommentRanges(source, node.end));
    for (const child of node.getChildren(file)) visit(child);
  };
  visit(file);
  const pieces: TextPiece[] = [];
  for (const r of ranges.sort((a, b) => a.pos - b.pos)) {
    const first = file.getLineAndCharacterOfPosition(r.pos).line + 1;
    source
      .slice(r.pos, r.end)
      .split('\n')
      .forEach((text, i) => {
        pieces.push({ text, line: first + i });
      });
  }
  return pieces;
}
