import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findLabelProblem } from '../src/labels.js';

const word = fc.stringMatching(/^[a-z]{1,8}$/);
const goodLabel = fc.array(word, { minLength: 1, maxLength: 5 }).map((ws) => ws.join(' '));

describe('findLabelProblem', () => {
  it('accepts distinct, trimmed, comma-free labels', () => {
    fc.assert(
      fc.property(fc.uniqueArray(goodLabel, { maxLength: 20 }), (labels) => {
        expect(findLabelProblem(labels)).toBeNull();
      }),
      { numRuns: 200 },
    );
  });

  it('reports a comma anywhere in any label', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(goodLabel, { minLength: 1, maxLength: 10 }),
        fc.nat(),
        fc.nat(),
        (labels, i, at) => {
          const k = i % labels.length;
          const label = labels[k]!;
          const cut = at % (label.length + 1);
          const bad = [...labels];
          bad[k] = `${label.slice(0, cut)},${label.slice(cut)}`.trim() || ',';
          expect(findLabelProblem(bad)).toMatch(/comma/);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reports empty labels, whitespace, line breaks and duplicates', () => {
    expect(findLabelProblem([''])).toMatch(/empty/);
    expect(findLabelProblem([' go'])).toMatch(/whitespace/);
    expect(findLabelProblem(['go\nleft'])).toMatch(/line break/);
    expect(findLabelProblem(['go', 'go'])).toMatch(/twice/);
    expect(findLabelProblem(['go', 'go'], true)).toBeNull();
    expect(findLabelProblem([3])).toMatch(/non-string/);
  });
});
