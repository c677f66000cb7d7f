import { describe, expect, it } from 'vitest';
import { sourceComments } from '../src/comments.js';
import { headingSlug, readMarkdown } from '../src/markdown.js';

describe('headingSlug', () => {
  it('gives the anchors GitHub gives these headings of docs/results.md', () => {
    expect(headingSlug("Ablation: NTPO's intra-action discount γ_w")).toBe(
      'ablation-ntpos-intra-action-discount-γ_w',
    );
    expect(headingSlug('Synthetic credit assignment (`@poad/ppo`)')).toBe(
      'synthetic-credit-assignment-poadppo',
    );
    expect(headingSlug('Results (all 60 runs in; analysed as the protocol says)')).toBe(
      'results-all-60-runs-in-analysed-as-the-protocol-says',
    );
    expect(headingSlug('A token policy restricted to the labels (`--token-space labels`)')).toBe(
      'a-token-policy-restricted-to-the-labels---token-space-labels',
    );
  });

  it('takes a link in a heading as its text', () => {
    expect(headingSlug('See [the math](math.md#soft-bad) here')).toBe('see-the-math-here');
  });
});

describe('readMarkdown', () => {
  const page = readMarkdown(
    [
      '# Title',
      'Text with a [link](other.md#part) and `code [not](a-link.md)` and ![image](img/a.png).',
      '```sh',
      '# not a heading',
      'see [fenced](fenced.md) docs/in-a-command.md',
      '```',
      '## Title',
      '<a id="explicit"></a>',
      '[ref]: target.md',
    ].join('\n'),
  );

  it('numbers repeated headings as GitHub does and reads explicit ids', () => {
    expect([...page.anchors].sort()).toEqual(['explicit', 'title', 'title-1']);
  });

  it('finds links and images outside code, with their lines', () => {
    expect(page.links).toEqual([
      { target: 'other.md#part', line: 2 },
      { target: 'img/a.png', line: 2 },
      { target: 'target.md', line: 9 },
    ]);
  });

  it('keeps inline code as text and leaves fenced blocks out', () => {
    const text = page.text.map((t) => t.text).join('\n');
    expect(text).toContain('code [not](a-link.md)');
    expect(text).not.toContain('in-a-command');
  });
});

describe('sourceComments', () => {
  it('reads comments, not strings, template literals or regular expressions', () => {
    const source = [
      "const a = '// not a comment docs/a.md';",
      'const b = `/* nor this docs/b.md */`;',
      'const c = /\\/\\/ docs\\/c.md/;',
      '/** Real: docs/d.md',
      ' * and docs/e.md */',
      'function f() {} // trailing docs/f.md',
    ].join('\n');
    const pieces = sourceComments('x.ts', source);
    const text = pieces.map((p) => `${p.line}:${p.text}`).join('\n');
    expect(text).toContain('4:/** Real: docs/d.md');
    expect(text).toContain('5: * and docs/e.md */');
    expect(text).toContain('6:// trailing docs/f.md');
    expect(text).not.toMatch(/docs\/[abc]\.md/);
  });
});
