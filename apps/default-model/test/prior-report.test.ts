import { describe, expect, it } from 'vitest';
import { priorMarkdown, priorReport } from '../src/prior-report.js';

describe('prior report', () => {
  it("gives the default model's probability and rank of the optimal label at every state of the optimal paths", async () => {
    const rows = await priorReport(['default']);
    expect(rows).toHaveLength(7 * 6);
    expect(rows[0]).toMatchObject({
      task: 'food-preparation',
      step: 1,
      optimal: 'walk to the pancake',
    });
    for (const r of rows) {
      const { p, rank } = r.models.default!;
      expect(p).toBeGreaterThan(0);
      expect(p).toBeLessThan(1);
      expect(rank).toBeGreaterThanOrEqual(1);
      expect(rank).toBeLessThanOrEqual(r.labels);
    }
    // The same state twice gives the same numbers (no sampling anywhere).
    expect((await priorReport(['default']))[4]).toEqual(rows[4]);
    const md = priorMarkdown(rows, ['default']);
    expect(md).toContain('| food-preparation | 5: put the pancake in the microwave | 7 | 0.143 |');
    expect(md).toMatch(/\| food-preparation \| 0\.181 \| 0\.\d{3} \|/);
  });
});
